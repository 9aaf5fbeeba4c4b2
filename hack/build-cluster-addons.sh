#!/usr/bin/env bash
# Builds the opt-in add-ons of the local control plane into their version-keyed cache directories:
#   lws    the LeaderWorkerSet controller, from the sigs.k8s.io/lws module pinned by hack/tools/lws
#   grove  Grove's operator, from a Grove git repository given as GROVE_GIT (see below)
# Each directory gets bin/<controller> and crds/*.yaml (the CRDs of the same version). Only what is
# missing is built; with everything present no Go is needed. Usage: build-cluster-addons.sh [lws] [grove]
# (default: both). Prints one line per add-on on stdout: "<name> <dir>" when ready, "<name> -" when
# skipped. Progress goes to stderr.
#
# Why Grove needs GROVE_GIT: the module proxy serves github.com/ai-dynamo/grove/operator at no version
# (403 "This module version is not available"; only its API module is served), and its go.mod reaches
# its own API modules through replace directives to sibling directories, which a module zip never
# holds. So it builds only inside its repository: GROVE_GIT names a clone (or bare git dir) of it, and
# exactly the tag operator/$GROVE_VERSION is exported from it and built. Without GROVE_GIT the grove
# add-on is skipped (exit 0) and the tests that need it skip, saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"

log() { printf '%s build-cluster-addons: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
want=("$@")
grove_src=""  # the exported Grove tree, removed on exit whatever happens
trap 'rm -rf "$grove_src"' EXIT
[ ${#want[@]} -gt 0 ] || want=(lws grove)

present() {  # dir controller
  [ -x "$1/bin/$2" ] && compgen -G "$1/crds/*.yaml" >/dev/null
}

go_env() {
  "$here/doctor.sh" --need go
  export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"
}

# Binaries are built to a temporary name and renamed, CRDs copied into a fresh directory and renamed,
# so a cut-off build never leaves something a later run takes for finished.
install_crds() {  # dir crd-files...
  local dir=$1
  shift
  rm -rf "$dir/.crds.tmp"
  mkdir -p "$dir/.crds.tmp"
  cp "$@" "$dir/.crds.tmp/"
  chmod 0644 "$dir/.crds.tmp"/*
  rm -rf "$dir/crds"
  mv "$dir/.crds.tmp" "$dir/crds"
}

build_lws() {
  local dir=$LWS_ADDON_DIR start module
  if present "$dir" lws-controller; then log "lws $LWS_VERSION present"; echo "lws $dir"; return; fi
  go_env
  mkdir -p "$dir/bin"
  exec 8>"$dir/.lock"
  flock 8
  if ! present "$dir" lws-controller; then
    log "building the LeaderWorkerSet controller $LWS_VERSION (about 3 min cold on 2 cores)"
    start=$SECONDS
    (cd "$here/tools/lws" && go build \
      -ldflags "-s -w -X sigs.k8s.io/lws/pkg/version.GitVersion=$LWS_VERSION" \
      -o "$dir/bin/.lws-controller.tmp" sigs.k8s.io/lws/cmd)
    module=$(cd "$here/tools/lws" && go list -m -f '{{.Dir}}' sigs.k8s.io/lws)
    install_crds "$dir" "$module"/config/crd/bases/*.yaml
    mv "$dir/bin/.lws-controller.tmp" "$dir/bin/lws-controller"
    log "built lws-controller in $((SECONDS - start)) s"
  fi
  exec 8>&-
  echo "lws $dir"
}

build_grove() {
  local dir=$GROVE_ADDON_DIR start tag=operator/$GROVE_VERSION
  if present "$dir" grove-operator; then log "grove $GROVE_VERSION present"; echo "grove $dir"; return; fi
  if [ -z "${GROVE_GIT:-}" ]; then
    log "grove $GROVE_VERSION skipped: its operator is not a published Go module (see the header of $0);"
    log "  GROVE_GIT=<git dir or clone of the Grove repository> make cluster-bins builds it from tag $tag"
    echo "grove -"
    return
  fi
  if ! git --git-dir="$(git -C "$GROVE_GIT" rev-parse --absolute-git-dir 2>/dev/null || echo "$GROVE_GIT")" \
    rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null; then
    log "GROVE_GIT=$GROVE_GIT has no tag $tag"
    exit 1
  fi
  go_env
  mkdir -p "$dir/bin"
  exec 8>"$dir/.lock"
  flock 8
  if ! present "$dir" grove-operator; then
    grove_src=$(mktemp -d)
    git --git-dir="$(git -C "$GROVE_GIT" rev-parse --absolute-git-dir 2>/dev/null || echo "$GROVE_GIT")" \
      archive "$tag" operator scheduler/api | tar -x -C "$grove_src"
    log "building Grove's operator $GROVE_VERSION from $GROVE_GIT (about 4 min cold on 2 cores)"
    start=$SECONDS
    (cd "$grove_src/operator" && go build \
      -ldflags "-s -w -X github.com/ai-dynamo/grove/operator/internal/version.gitVersion=$GROVE_VERSION" \
      -o "$dir/bin/.grove-operator.tmp" ./cmd)
    install_crds "$dir" "$grove_src"/operator/api/core/v1alpha1/crds/*.yaml \
      "$grove_src"/scheduler/api/core/v1alpha1/crds/*.yaml
    mv "$dir/bin/.grove-operator.tmp" "$dir/bin/grove-operator"
    log "built grove-operator in $((SECONDS - start)) s"
  fi
  exec 8>&-
  echo "grove $dir"
}

for addon in "${want[@]}"; do
  case $addon in
    lws) build_lws ;;
    grove) build_grove ;;
    *)
      log "unknown add-on '$addon' (known: lws grove)"
      exit 2
      ;;
  esac
done
