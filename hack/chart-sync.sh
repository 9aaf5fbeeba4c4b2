#!/usr/bin/env bash
# `make chart-sync` (part of `make manifests`): copy what the Helm chart shares with config/ into the
# chart's files/, so both install paths carry the same CRDs, manager rules and admission policy.
# test/unit/deploy/test_helm_chart.py fails when a copy differs from its source.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
files=$root/deploy/helm/dynamo-operator/files
mkdir -p "$files/crds"
rm -f "$files"/crds/*.yaml
cp "$root"/config/crd/bases/*.yaml "$files/crds/"
cp "$root/config/rbac/role.yaml" "$files/manager-role.yaml"
cp "$root/config/admission/adapter_replicas_policy.yaml" "$files/adapter-replicas-policy.yaml"
cp "$root/config/admission/dgdr_namespace_policy.yaml" "$files/dgdr-namespace-policy.yaml"
cp "$root/config/admission/v1beta1_updates_policy.yaml" "$files/v1beta1-updates-policy.yaml"
cp "$root/config/prometheus/prometheus_rule.yaml" "$files/prometheus-rule.yaml"
cp "$root/config/prometheus/dashboard.json" "$files/grafana-dashboard.json"
echo "chart-sync: copied the CRDs, the manager ClusterRole, the admission policies, the alerts and the dashboard into ${files#"$root"/}" >&2
