#!/usr/bin/env bash
# `make test-e2e`: deploy the operator the way users do (`make deploy IMG=...`: config/default with the
# image set, applied server-side) and run the e2e suite (test/e2e) against it. Always tears down, also
# on failure. test/e2e/test_e2e_install_paths.py also exercises build-installer, undeploy/uninstall and
# the Helm chart, each on a throwaway local control plane of its own.
#
# kind (KIND_CLUSTER set, kind and a working docker on PATH):
#   make docker-build → kind load docker-image → make deploy IMG=$IMG → wait for the operator pod →
#   pytest test/e2e with DYNAMO_TEST_USE_EXISTING_CLUSTER=1 → make undeploy + make uninstall (the kind
#   cluster is yours: it is left running).
# Otherwise, the local control plane (hack/localcluster.py; no Docker): a fresh cluster → deploy
#   config/default → the operator Deployment is scaled to 0 (kwok would only simulate its pod: Ready
#   while reconciling nothing) → the operator runs as a LOCAL PROCESS with a token of its own
#   ServiceAccount (`kubectl create token`), so RBAC applies for real; health and metrics on free
#   127.0.0.1 ports → the same suite → operator stopped, cluster removed.
#
# Env: KIND_CLUSTER, IMG (default dynamo-operator:dev), PYTEST_ARGS, E2E_KEEP=1 (local: keep the
# cluster and operator for debugging; prints how to stop them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PYTHONSAFEPATH=1
say() { printf 'test-e2e: %s\n' "$*" >&2; }
started=$(date +%s)
IMG=${IMG:-dynamo-operator:dev}
PYTEST=(.venv/bin/pytest test/e2e -p no:cacheprovider -o addopts= --import-mode=importlib -ra ${PYTEST_ARGS:-})
NS=dynamo-system
DEPLOY=dynamo-operator-controller-manager

deploy() {
  make --no-print-directory deploy IMG="$IMG" >&2
  kubectl wait --for=condition=Established crd --all --timeout=60s >&2
}

have_kind() {
  [ -n "${KIND_CLUSTER:-}" ] && command -v kind >/dev/null && command -v docker >/dev/null \
    && docker info >/dev/null 2>&1
}

if have_kind; then
  say "kind cluster '$KIND_CLUSTER': build $IMG, load, deploy, test"
  KUBECONFIG=$(mktemp)
  export KUBECONFIG
  undeploy() {
    rc=$?
    say "tearing down (exit $rc)"
    # The operator still runs while undeploy deletes the custom resources (finalizers clear), then goes.
    UNDEPLOY_TIMEOUT=120 make --no-print-directory undeploy >&2 || true
    make --no-print-directory uninstall >&2 || true
    kubectl delete namespace -l dynamo-operator.test/namespace=true --wait=false --ignore-not-found >&2 || true
    rm -f "$KUBECONFIG"
    say "done in $(($(date +%s) - started)) s"
    exit $rc
  }
  trap undeploy EXIT
  kind get kubeconfig --name "$KIND_CLUSTER" >"$KUBECONFIG"
  make --no-print-directory docker-build IMG="$IMG"
  kind load docker-image "$IMG" --name "$KIND_CLUSTER"
  deploy
  kubectl -n $NS rollout status deployment/$DEPLOY --timeout=180s >&2
  DYNAMO_TEST_USE_EXISTING_CLUSTER=1 DYNAMO_E2E_MODE=kind "${PYTEST[@]}"
  exit 0
fi

[ -n "${KIND_CLUSTER:-}" ] && say "KIND_CLUSTER is set but kind/docker are not usable here: using the local control plane"
make --no-print-directory cluster-bins >&2
work=$(mktemp -d -t dynamo-e2e-XXXXXX)
name="e2e-$$"
op_pid=""
cleanup() {
  rc=$?
  if [ "${E2E_KEEP:-}" = 1 ]; then
    say "E2E_KEEP=1: operator pid ${op_pid:-none}, KUBECONFIG=${KUBECONFIG:-}; stop with:"
    say "  kill ${op_pid:-}; .venv/bin/python hack/localcluster.py down --name $name --state-dir $work/cluster"
    exit $rc
  fi
  say "tearing down (exit $rc)"
  if [ -n "$op_pid" ] && kill -0 "$op_pid" 2>/dev/null; then
    kill -TERM "$op_pid" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$op_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$op_pid" 2>/dev/null || true
  fi
  .venv/bin/python hack/localcluster.py down --name "$name" --state-dir "$work/cluster" || true
  [ $rc -ne 0 ] && [ -f "$work/operator.log" ] && { say "operator log (last 20 lines):"; tail -n 20 "$work/operator.log" | cut -c1-400 >&2; }
  say "done in $(($(date +%s) - started)) s (operator log kept in $work)"
  exit $rc
}
trap cleanup EXIT

KUBECONFIG=$(.venv/bin/python hack/localcluster.py up --name "$name" --state-dir "$work/cluster" | tail -n 1)
export KUBECONFIG
say "local control plane up: $KUBECONFIG"
deploy
kubectl -n $NS scale deployment/$DEPLOY --replicas=0 >&2
.venv/bin/python - "$name" "$work" <<'EOF'
import sys
sys.path.insert(0, "hack")
from localcluster import LocalCluster
name, work = sys.argv[1:3]
LocalCluster(name, state_dir=f"{work}/cluster").token_kubeconfig(
    "dynamo-operator-controller-manager", "dynamo-system", f"{work}/operator.kubeconfig", duration="2h"
)
EOF
read -r metrics_port health_port < <(.venv/bin/python -c '
import socket
s = [socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
# The Deployment's own arguments (config/manager), with loopback ports and the ServiceAccount token;
# metrics in plain HTTP on loopback, which the e2e scrapes without a token.
POD_NAMESPACE=$NS .venv/bin/dynamo-operator --kubeconfig="$work/operator.kubeconfig" --leader-elect \
  --health-probe-bind-address="127.0.0.1:$health_port" --metrics-secure=false \
  --metrics-bind-address="127.0.0.1:$metrics_port" \
  --max-concurrent-reconciles=4 >"$work/operator.log" 2>&1 &
op_pid=$!
say "operator pid $op_pid (log $work/operator.log), health :$health_port, metrics :$metrics_port"
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$health_port/readyz" >/dev/null 2>&1 && break
  kill -0 "$op_pid" 2>/dev/null || { say "operator exited"; exit 1; }
  sleep 0.5
done
curl -fs "http://127.0.0.1:$health_port/readyz" >/dev/null
say "operator ready; running the suite"
DYNAMO_TEST_USE_EXISTING_CLUSTER=1 DYNAMO_E2E_MODE=local \
  DYNAMO_E2E_METRICS_URL="http://127.0.0.1:$metrics_port/metrics" \
  DYNAMO_E2E_HEALTH_URL="http://127.0.0.1:$health_port" \
  DYNAMO_E2E_OPERATOR_LOG="$work/operator.log" DYNAMO_E2E_OPERATOR_PID="$op_pid" \
  "${PYTEST[@]}"
