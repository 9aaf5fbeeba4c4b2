#!/usr/bin/env bash
# `make run`: the operator as a host process. Uses the cluster of KUBECONFIG (or ~/.kube/config) when
# it answers; otherwise builds the control-plane binaries if missing and starts the local control
# plane (hack/localcluster.py, left running afterwards: `make cluster-down` stops it). Installs the
# CRDs when config/crd exists, then execs the operator with console logs and loopback-only probe and
# metrics ports, which it prints.
# Metrics are plain HTTP here, without authentication (--metrics-secure=false, on loopback only, for
# `curl` while developing). The binary's own default is secure (HTTPS on :8443, every scraper checked
# by TokenReview and SubjectAccessReview), as are config/default and the chart. They are never on :8080:
# that is kubectl's fallback server when no kubeconfig is found, and a shell without KUBECONFIG would
# then talk to the operator's metrics server and print a baffling discovery error. The defaults are
# 127.0.0.1:18080 (RUN_METRICS_PORT) and 127.0.0.1:8081 (RUN_HEALTH_PORT), or a free port when taken.
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
  # The CRDs go in before its controller-manager starts, so deleting a graph collects its children
  # from the first moment (the garbage collector learns kinds installed later only within 30 s).
  KUBECONFIG=$("$py" hack/localcluster.py up --crds config/crd/bases | tail -n 1)
  export KUBECONFIG
  say "using the local control plane (stop it with 'make cluster-down'); in another shell:"
  say "  export KUBECONFIG=$KUBECONFIG      (or: eval \$(make kubeconfig))"
fi
# The preferred loopback port when it is free, else one the kernel picks.
pick_port() {
  python3 -c '
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    s.close(); s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "$1"
}
say "server $(kubectl config view --minify -o 'jsonpath={.clusters[0].cluster.server}')"

if [ -d config/crd ]; then
  say "installing the CRDs from config/crd"
  kubectl apply --server-side --force-conflicts -k config/crd >&2
else
  say "config/crd does not exist yet: CRDs not installed"
fi

# The conversion webhook. On the local control plane the CRDs' Service (dynamo-system, port 9443)
# becomes an ExternalName to 127.0.0.1 (hack/local_webhook.py says why), and the operator runs as if
# in that namespace (its certificate names the Service). On another cluster it stays off: the API
# server there cannot call this process, and its CRDs are not ours to change.
webhook_args=(--webhook-bind-address=0)
local_plane=
case "$KUBECONFIG" in
  */dynamo-operator-cluster/* | "${DYNAMO_CLUSTER_STATE_DIR:-/nonexistent}"/*) local_plane=1 ;;
esac
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
if [ -n "$local_plane" ] && [ -d config/crd ]; then
  route=$("$py" hack/local_webhook.py --address 127.0.0.1 config/crd/bases)
  export POD_NAMESPACE=${route#* }
  webhook_args=(--webhook-bind-address="${route% *}")
  say "conversion webhook: https://${route% *}/convert (the CRDs' Service in $POD_NAMESPACE points there)"
else
  say "conversion webhook off: v1alpha1 objects cannot be read or written while this runs (v1beta1, the stored version, can)"
fi

if [ ! -x .venv/bin/dynamo-operator ]; then
  say ".venv/bin/dynamo-operator is missing: run 'make venv'"
  exit 1
fi
metrics_port=$(pick_port "${RUN_METRICS_PORT:-18080}")
health_port=$(pick_port "${RUN_HEALTH_PORT:-8081}")
say "metrics: http://127.0.0.1:$metrics_port/metrics (plain HTTP, loopback only)   health: http://127.0.0.1:$health_port/readyz"
say "exec dynamo-operator $*"
exec .venv/bin/dynamo-operator --log-format=console --health-probe-bind-address="127.0.0.1:$health_port" \
  --metrics-secure=false --metrics-bind-address="127.0.0.1:$metrics_port" "${webhook_args[@]}" "$@"
