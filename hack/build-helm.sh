#!/usr/bin/env bash
# Builds helm from its Go module (pinned by hack/tools/helm) into the version-keyed tool cache, once per
# machine: about 2 minutes on 2 cores with a warm Go build cache, 60 MB binary. No binary download:
# the same route as the control-plane binaries (hack/build-cluster-bins.sh). Prints the helm path on
# the last line; `make helm` runs it, the chart tests and `make test-e2e` need it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"
log() { printf '%s build-helm: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

helm=$HELM_BIN_DIR/helm
if [ -x "$helm" ]; then echo "$helm"; exit 0; fi
"$here/doctor.sh" --need go
mkdir -p "$HELM_BIN_DIR"
exec 9>"$HELM_BIN_DIR/.lock"
if ! flock -n 9; then
  log "another build holds $HELM_BIN_DIR/.lock; waiting for it"
  flock 9
fi
if [ ! -x "$helm" ]; then
  export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"
  log "building helm $HELM_VERSION (about 2 min on 2 cores; 60 MB)"
  start=$SECONDS
  # The version, and the Kubernetes version `helm template` assumes offline (else v1.20): ours.
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  ld="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  ld="$ld -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
  (cd "$here/tools/helm" && go build -ldflags "$ld" -o "$HELM_BIN_DIR/.helm.tmp" helm.sh/helm/v3/cmd/helm)
  mv "$HELM_BIN_DIR/.helm.tmp" "$helm"
  log "built helm in $((SECONDS - start)) s"
fi
echo "$helm"
