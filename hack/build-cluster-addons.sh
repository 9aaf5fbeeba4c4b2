#!/usr/bin/env bash
# Prepares the opt-in add-ons of the local control plane in their version-keyed cache directories:
#   lws    the LeaderWorkerSet controller, built from the sigs.k8s.io/lws module pinned by hack/tools/lws,
#          with the CRD of the same version: bin/lws-controller and crds/*.yaml
#   grove  Grove's CRDs only (crds/*.yaml): the grove.io kinds from Grove's API module
#          (github.com/ai-dynamo/grove/operator/api, pinned by hack/tools/grove and fetched with
#          `go mod download`), and a minimal stand-in for PodGang (hack/tools/grove/podgang-standin-crd.yaml:
#          Grove's scheduler API is served by no registry). Grove's operator is not built here: no
#          registry serves it. The tests play it with a simulation (test/testsupport/grove_standin.py);
#          a Grove operator binary of your own runs beside it when GROVE_OPERATOR=/path/to/binary is set.
# Only what is missing is prepared; with everything present no Go is needed. Usage:
# build-cluster-addons.sh [lws] [grove] (default: both). Prints one line per add-on on stdout,
# "<name> <dir>" when ready. Progress goes to stderr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"

log() { printf '%s build-cluster-addons: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
want=("$@")
[ ${#want[@]} -gt 0 ] || want=(lws grove)

present() {  # dir [controller]
  { [ -z "${2:-}" ] || [ -x "$1/bin/$2" ]; } && compgen -G "$1/crds/*.yaml" >/dev/null
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

grove_ready() {  # dir: the CRDs there, with the repository's current PodGang stand-in
  present "$1" && cmp -s "$1/crds/podgang-standin-crd.yaml" "$here/tools/grove/podgang-standin-crd.yaml"
}

build_grove() {
  local dir=$GROVE_ADDON_DIR module
  if grove_ready "$dir"; then log "grove $GROVE_VERSION CRDs present"; echo "grove $dir"; return; fi
  go_env
  mkdir -p "$dir"
  exec 8>"$dir/.lock"
  flock 8
  if ! grove_ready "$dir"; then
    log "fetching Grove's API module $GROVE_VERSION (its CRDs) into the Go module cache"
    module=$(cd "$here/tools/grove" && go mod download github.com/ai-dynamo/grove/operator/api &&
      go list -m -f '{{.Dir}}' github.com/ai-dynamo/grove/operator/api)
    install_crds "$dir" "$module"/core/v1alpha1/crds/*.yaml "$here/tools/grove/podgang-standin-crd.yaml"
    log "grove $GROVE_VERSION CRDs in $dir/crds"
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
