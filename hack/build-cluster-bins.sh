#!/usr/bin/env bash
# Builds whatever control-plane binary is missing into the version-keyed cache outside the repo.
# Safe to re-run (finished binaries are kept) and to run in the background (progress goes to stderr
# with timestamps and step numbers; a lock keeps two builds from racing). Prints the bin directory on
# the last line. With every binary present it needs no Go at all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"

log() { printf '%s build-cluster-bins: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
# name, module dir, package, measured seconds of a cold build on 2 cores (for the progress line)
STEPS=(
  "etcd etcd go.etcd.io/etcd/server/v3 45"
  "kwok kwok sigs.k8s.io/kwok/cmd/kwok 85"
  "kube-apiserver k8s k8s.io/kubernetes/cmd/kube-apiserver 200"
  "kube-controller-manager k8s k8s.io/kubernetes/cmd/kube-controller-manager 55"
  "kube-scheduler k8s k8s.io/kubernetes/cmd/kube-scheduler 5"
)
complete() {
  for step in "${STEPS[@]}"; do [ -x "$CLUSTER_BIN_DIR/${step%% *}" ] || return 1; done
  [ -s "$CLUSTER_BIN_DIR/kwok-module-dir" ]
}
if complete; then echo "$CLUSTER_BIN_DIR"; exit 0; fi

mkdir -p "$CLUSTER_BIN_DIR"
exec 9>"$CLUSTER_BIN_DIR/.lock"
if ! flock -n 9; then
  log "another build holds $CLUSTER_BIN_DIR/.lock; waiting for it"
  flock 9
fi

# Caches keyed by the Go version too (before the key named only what is built) hold the same
# binaries: link them in rather than spend minutes rebuilding. Hard links where the file system allows.
for old in "$CLUSTER_CACHE_ROOT/${CLUSTER_KEY}"_go*/bin; do
  [ -d "$old" ] || continue
  for f in etcd kwok kube-apiserver kube-controller-manager kube-scheduler kwok-module-dir; do
    if [ ! -e "$CLUSTER_BIN_DIR/$f" ] && [ -e "$old/$f" ]; then
      ln "$old/$f" "$CLUSTER_BIN_DIR/$f" 2>/dev/null || cp -p "$old/$f" "$CLUSTER_BIN_DIR/$f"
      log "reused $f from $old"
    fi
  done
done
if complete; then echo "$CLUSTER_BIN_DIR"; exit 0; fi

"$here/doctor.sh" --need go
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
k8s_ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ld="$k8s_ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

# Each binary is built to a temporary name and renamed, so a cut-off build never leaves a
# half-written file that a later run would take for finished.
total=$SECONDS
remaining=0
for step in "${STEPS[@]}"; do
  read -r name _ _ secs <<<"$step"
  [ -x "$CLUSTER_BIN_DIR/$name" ] || remaining=$((remaining + secs))
done
log "building into $CLUSTER_BIN_DIR: about $((remaining / 60 + 1)) min on 2 cores (less with a warm Go build cache)"
i=0
for step in "${STEPS[@]}"; do
  i=$((i + 1))
  read -r name dir pkg secs <<<"$step"
  if [ -x "$CLUSTER_BIN_DIR/$name" ]; then log "[$i/${#STEPS[@]}] $name present"; continue; fi
  ldflags="-s -w"
  [ "$dir" = k8s ] && ldflags=$k8s_ld
  log "[$i/${#STEPS[@]}] building $name ($pkg; about $secs s cold)"
  start=$SECONDS
  (cd "$here/tools/$dir" && go build -ldflags "$ldflags" -o "$CLUSTER_BIN_DIR/.$name.tmp" "$pkg")
  mv "$CLUSTER_BIN_DIR/.$name.tmp" "$CLUSTER_BIN_DIR/$name"
  log "[$i/${#STEPS[@]}] built $name in $((SECONDS - start)) s"
done
# kwok reads its Stage documents from its own module; keep the path next to the binaries.
(cd "$here/tools/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok) > "$CLUSTER_BIN_DIR/kwok-module-dir"
log "all binaries ready in $((SECONDS - total)) s"
echo "$CLUSTER_BIN_DIR"
