#!/usr/bin/env bash
# `make doctor`: what this machine has and lacks for the make targets, each missing prerequisite with
# how to install it, and what the first build of the local control plane costs.
#
#   hack/doctor.sh              every check, one line each; exit 1 when a required one fails
#   hack/doctor.sh --need go    quiet pre-flight of one prerequisite (go | python | kubectl | docker):
#                               exit 1 with the install hint, before a build would stop at "command not found"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"
PYTHON=${PYTHON:-python3.11}

# What a cold build costs (2-core machine, measured; module downloads extra on a fresh machine).
CLUSTER_BUILD_COST="about 6.5 min on 2 cores (etcd 45 s, kwok 85 s, kube-apiserver 200 s, kube-controller-manager 55 s, kube-scheduler 5 s), peak 2 GB RAM; disk: 340 MB of binaries in $CLUSTER_CACHE_ROOT, 3.6 GB of Go build cache, 1.6 GB of module cache"
HELM_BUILD_COST="about 2 min on 2 cores with the control plane's build cache warm; 60 MB"
NEEDED_DISK_GB=6

go_minimum() {  # the newest `go` directive of the tool modules: GOTOOLCHAIN=local never downloads one
  sed -n 's/^go \([0-9.]*\)$/\1/p' "$here"/tools/*/go.mod | sort -V | tail -1
}
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }
cluster_bins_present() {
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok; do
    [ -x "$CLUSTER_BIN_DIR/$b" ] || return 1
  done
}
free_gb() {  # free space where the Go caches and our binaries go (the home directory's file system)
  local dir=$DYNAMO_CACHE_ROOT
  while [ ! -d "$dir" ]; do dir=$(dirname "$dir"); done
  df -Pk "$dir" | awk 'NR == 2 { print int($4 / 1048576) }'
}

# check_<name> prints "<status>|<detail>|<how to install>"; status: ok, missing, optional.
check_go() {
  local min have
  min=$(go_minimum)
  if ! command -v go >/dev/null 2>&1; then
    echo "missing|go $min or newer (not on PATH)|install from https://go.dev/dl/ (e.g. tar -C /usr/local -xzf go$min.*.linux-amd64.tar.gz; export PATH=\$PATH:/usr/local/go/bin) or your package manager"
    return
  fi
  have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
  if ! version_ge "${have%%[!0-9.]*}" "$min"; then
    echo "missing|go $min or newer (found $have; GOTOOLCHAIN=local: no automatic download)|install go $min+ from https://go.dev/dl/"
    return
  fi
  echo "ok|go $have|"
}
check_python() {
  if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "missing|$PYTHON (Python 3.11+)|apt-get install python3.11 python3.11-venv (Debian/Ubuntu), or https://www.python.org/downloads/; another interpreter: make PYTHON=python3.12 ..."
    return
  fi
  if ! "$PYTHON" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    echo "missing|$PYTHON with venv and ensurepip, version 3.11+|apt-get install python3.11-venv (Debian/Ubuntu: ensurepip is packaged apart)"
    return
  fi
  echo "ok|$("$PYTHON" --version 2>&1)|"
}
check_kubectl() {
  if command -v kubectl >/dev/null 2>&1; then
    echo "ok|kubectl $(kubectl version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1)|"
  else
    echo "missing|kubectl (1.31 or newer: kustomize and server-side apply)|https://kubernetes.io/docs/tasks/tools/ or apt-get install kubectl (pkgs.k8s.io repository)"
  fi
}
check_tools() {
  local lacking=()
  for t in flock curl git awk; do command -v "$t" >/dev/null 2>&1 || lacking+=("$t"); done
  if [ ${#lacking[@]} -eq 0 ]; then echo "ok|flock curl git awk|"; else
    echo "missing|${lacking[*]}|apt-get install util-linux curl git gawk"
  fi
}
check_docker() {
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    echo "ok|docker engine reachable|"
  else
    echo "optional|docker engine (only for make docker-build / docker-push and the kind e2e path)|https://docs.docker.com/engine/install/"
  fi
}

if [ "${1:-}" = "--need" ]; then
  IFS='|' read -r status detail how < <("check_$2")
  if [ "$status" = missing ]; then
    {
      echo "doctor: missing prerequisite: $detail"
      echo "doctor:   install: $how"
      if [ "$2" = go ]; then
        echo "doctor:   Go builds the local control plane (and helm) from their modules, once per machine:"
        echo "doctor:   control plane: $CLUSTER_BUILD_COST"
        echo "doctor:   helm: $HELM_BUILD_COST"
      fi
      echo "doctor:   'make doctor' checks everything at once"
    } >&2
    exit 1
  fi
  exit 0
fi

failed=0
report() {  # report <label> <check function>
  local status detail how
  IFS='|' read -r status detail how < <("$2")
  case $status in
    ok) printf '  ok        %-14s %s\n' "$1" "$detail" ;;
    optional) printf '  optional  %-14s %s\n                           install: %s\n' "$1" "$detail" "$how" ;;
    *) failed=1; printf '  MISSING   %-14s %s\n                           install: %s\n' "$1" "$detail" "$how" ;;
  esac
}
echo "dynamo-operator doctor ($root)"
report python check_python
report kubectl check_kubectl
report tools check_tools
if cluster_bins_present; then
  printf '  ok        %-14s built in %s\n' "control plane" "$CLUSTER_BIN_DIR"
  [ -x "$HELM_BIN_DIR/helm" ] || report "go (helm)" check_go
else
  printf '  build     %-14s not built yet: make cluster-bins (make test/run do it) needs Go\n' "control plane"
  printf '                           cost: %s\n' "$CLUSTER_BUILD_COST"
  report go check_go
  free=$(free_gb)
  if [ "$free" -lt "$NEEDED_DISK_GB" ]; then
    failed=1
    printf '  MISSING   %-14s %s GB free under %s, the first build needs about %s GB\n' disk "$free" "$DYNAMO_CACHE_ROOT" "$NEEDED_DISK_GB"
  else
    printf '  ok        %-14s %s GB free (the first build needs about %s GB)\n' disk "$free" "$NEEDED_DISK_GB"
  fi
fi
if [ -x "$HELM_BIN_DIR/helm" ]; then
  printf '  ok        %-14s %s\n' helm "$HELM_BIN_DIR/helm"
else
  printf '  build     %-14s not built yet: make helm (%s)\n' helm "$HELM_BUILD_COST"
fi
if [ -x "$root/.venv/bin/dynamo-operator" ]; then
  printf '  ok        %-14s %s\n' venv "$root/.venv"
else
  printf '  build     %-14s not created yet: make venv (about 1 min, 400 MB)\n' venv
fi
report docker check_docker
if [ $failed -ne 0 ]; then
  echo "doctor: install what is MISSING above, then run 'make doctor' again"
  exit 1
fi
echo "doctor: ready"
