#!/usr/bin/env bash
# `make run`: the operator as a host process. Uses the cluster of KUBECONFIG (or ~/.kube/config) when
# it answers; otherwise builds the control-plane binaries if missing and starts the local control
# plane (hack/localcluster.py, left running afterwards: `make cluster-down` stops it). Installs the
# CRDs when config/crd exists, then execs the operator with loopback-only probe and metrics ports.
# Metrics are plain HTTP here (--metrics-secure=false: loopback only, for `curl` while developing);
# deployments serve them over HTTPS with authentication (config/default).
# Extra arguments go to the operator: `make run` takes none, `hack/run-local.sh --help` shows them
# (later flags win, e.g. `hack/run-local.sh --metrics-secure --metrics-bind-address=127.0.0.1:8443`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { printf 'run-local: %s\n' "$*" >&2; }

if [ -z "${KUBECONFIG:-}" ] && [ -f "$HOME/.kube/config" ]; then
  export KUBECONFIG=$HOME/.kube/config
fi
if [ -n "${KUBECONFIG:-}" ] && kubectl --request-timeout=5s get --raw /readyz >/dev/null 2>&1; then
  say "using the cluster of KUBECONFIG=$KUBECONFIG"
else
  [ -n "${KUBECONFIG:-}" ] && say "KUBECONFIG=$KUBECONFIG does not answer; starting the local control plane"
  make --no-print-directory cluster-bins >&2
  py=python3
  [ -x .venv/bin/python ] && py=.venv/bin/python
  KUBECONFIG=$("$py" hack/localcluster.py up | tail -n 1)
  export KUBECONFIG
  say "using the local control plane (stop it with 'make cluster-down'); KUBECONFIG=$KUBECONFIG"
fi
say "server $(kubectl config view --minify -o 'jsonpath={.clusters[0].cluster.server}')"

if [ -d config/crd ]; then
  say "installing the CRDs from config/crd"
  kubectl apply --server-side --force-conflicts -k config/crd >&2
else
  say "config/crd does not exist yet: CRDs not installed"
fi

if [ ! -x .venv/bin/dynamo-operator ]; then
  say ".venv/bin/dynamo-operator is missing: run 'make venv'"
  exit 1
fi
say "exec dynamo-operator $*"
exec .venv/bin/dynamo-operator --health-probe-bind-address=127.0.0.1:8081 \
  --metrics-secure=false --metrics-bind-address=127.0.0.1:8080 "$@"
