#!/usr/bin/env bash
# Builds Prometheus' promtool from its Go module into the version-keyed tool cache outside the repo, once
# per machine (`go install` of the release's own module: its go.mod and go.sum pin every dependency, and
# the checksum database vouches for them). No binary download: the route of hack/build-helm.sh.
#   hack/promtool.sh                     build if missing; print the promtool path on the last line
#   hack/promtool.sh check-rules FILE..  check the rule groups of each PrometheusRule FILE with promtool
#                                        (`promtool check rules` reads plain rule files: the groups are
#                                        taken out of .spec first)
#   hack/promtool.sh prometheus          the Prometheus server of the same release (no web UI assets,
#                                        the API only), built if missing: hack/render_dashboard.py runs
#                                        it; it shares most packages with promtool, so it builds fast after
# `make promtool` runs the second form on config/prometheus; the observability asset tests run the first
# two.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster-versions.sh
. "$here/cluster-versions.sh"
# Prometheus 3.x is the module's v0.3xx line (v0.316.0 is Prometheus 3.16.0); it needs Go 1.26.
PROMTOOL_MODULE_VERSION=${PROMTOOL_MODULE_VERSION:-v0.316.0}
PROMETHEUS_VERSION=3.${PROMTOOL_MODULE_VERSION#v0.3}
# Built without the cloud service discoveries (Prometheus' remove_all_sd tag): rules, rule tests and a
# static scrape need none of them, and their SDKs were most of a cold build: 32 min with them on a
# busy 2-core machine; without, 7 CPU-minutes (20 min wall at nice 10 beside other builds, modules
# already downloaded). The key names the tag, so a full build would sit beside this one.
PROMTOOL_BIN_DIR=$TOOLS_CACHE_ROOT/promtool-$PROMTOOL_MODULE_VERSION-nosd/bin
log() { printf '%s promtool: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

build() {  # build [promtool|prometheus]
  local cmd=${1:-promtool}
  local promtool=$PROMTOOL_BIN_DIR/$cmd
  if [ -x "$promtool" ]; then echo "$promtool"; return 0; fi
  "$here/doctor.sh" --need go
  mkdir -p "$PROMTOOL_BIN_DIR"
  exec 9>"$PROMTOOL_BIN_DIR/.lock"
  if ! flock -n 9; then
    log "another build holds $PROMTOOL_BIN_DIR/.lock; waiting for it"
    flock 9
  fi
  if [ ! -x "$promtool" ]; then
    export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS="-trimpath -mod=readonly"
    log "building $cmd $PROMTOOL_MODULE_VERSION (minutes on 2 cores the first time)"
    local start=$SECONDS tmp
    tmp=$(mktemp -d "$PROMTOOL_BIN_DIR/.build-XXXXXX")
    # Installed into a temporary folder and renamed: a cut-off build never leaves a half-written file.
    GOBIN=$tmp go install -tags remove_all_sd \
      -ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
      "github.com/prometheus/prometheus/cmd/$cmd@$PROMTOOL_MODULE_VERSION"
    mv "$tmp/$cmd" "$promtool"
    rmdir "$tmp"
    log "built $cmd in $((SECONDS - start)) s"
  fi
  echo "$promtool"
}

check_rules() {
  local promtool work rc=0 file
  promtool=$(build promtool | tail -n 1)
  # PyYAML reads the PrometheusRule: the venv's, else the system's.
  local py=$here/../.venv/bin/python
  [ -x "$py" ] || py=python3
  work=$(mktemp -d -t dynamo-promtool-XXXXXX)
  trap 'rm -rf "$work"' RETURN
  for file in "$@"; do
    local plain
    plain="$work/$(basename "$file")"
    # The PrometheusRule's .spec is a rule file ({groups: [...]}); promtool reads nothing else.
    PYTHONSAFEPATH=1 "$py" - "$file" "$plain" <<'EOF'
import json, sys
import yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
rules = [d for d in docs if d.get("kind") == "PrometheusRule"]
if len(rules) != 1:
    sys.exit(f"{sys.argv[1]}: expected one PrometheusRule, found {len(rules)}")
with open(sys.argv[2], "w") as out:
    json.dump(rules[0]["spec"], out)  # JSON is YAML: promtool reads it as it is
EOF
    echo "$file:"
    "$promtool" check rules "$plain" || rc=$?
  done
  return "$rc"
}

case "${1:-}" in
  "") build promtool ;;
  prometheus) build prometheus ;;
  check-rules) shift; [ $# -gt 0 ] || { echo "usage: $0 check-rules FILE..." >&2; exit 2; }; check_rules "$@" ;;
  *) echo "usage: $0 [check-rules FILE... | prometheus]" >&2; exit 2 ;;
esac
