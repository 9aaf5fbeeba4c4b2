#!/usr/bin/env bash
# Builds whatever control-plane binary is missing into the version-keyed cache outside the repo.
# Safe to re-run (finished binaries are kept) and to run in the background (progress goes to stdout
# with timestamps; a lock keeps two builds from racing). Prints the bin directory on the last line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"

export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"
mkdir -p "$CLUSTER_BIN_DIR"
log() { printf '%s build-cluster-bins: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

exec 9>"$CLUSTER_BIN_DIR/.lock"
if ! flock -n 9; then
  log "another build holds $CLUSTER_BIN_DIR/.lock; waiting for it"
  flock 9
fi

# Each binary is built to a temporary name and renamed, so a cut-off build never leaves a
# half-written file that a later run would take for finished.
build() {  # build <module dir> <output name> <package> [ldflags]
  local dir=$1 name=$2 pkg=$3 ldflags=${4:-"-s -w"}
  if [ -x "$CLUSTER_BIN_DIR/$name" ]; then log "$name present"; return; fi
  log "building $name ($pkg)"
  local start=$SECONDS
  (cd "$here/tools/$dir" && go build -ldflags "$ldflags" -o "$CLUSTER_BIN_DIR/.$name.tmp" "$pkg")
  mv "$CLUSTER_BIN_DIR/.$name.tmp" "$CLUSTER_BIN_DIR/$name"
  log "built $name in $((SECONDS - start)) s"
}

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
k8s_ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ld="$k8s_ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

total=$SECONDS
build etcd etcd go.etcd.io/etcd/server/v3
build kwok kwok sigs.k8s.io/kwok/cmd/kwok
build k8s kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ld"
build k8s kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$k8s_ld"
build k8s kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$k8s_ld"
# kwok reads its Stage documents from its own module; keep the path next to the binaries.
(cd "$here/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) > "$CLUSTER_BIN_DIR/kwok-module-dir"
log "all binaries ready in $((SECONDS - total)) s"
echo "$CLUSTER_BIN_DIR"
