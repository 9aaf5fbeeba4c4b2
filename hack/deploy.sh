#!/usr/bin/env bash
# The kubebuilder-style deployment targets of the Makefile, against the cluster in KUBECONFIG:
#
#   hack/deploy.sh render            config/default with the image IMG, on stdout
#   hack/deploy.sh apply             make deploy: render | kubectl apply --server-side
#   hack/deploy.sh installer FILE    make build-installer: render into one file (dist/install.yaml)
#   hack/deploy.sh undeploy          make undeploy: every Dynamo custom resource deleted first, while the
#                                    operator still runs to clear their finalizers (a LoRA DynamoModel
#                                    unloads its adapter); then the operator; the CRDs stay (make uninstall)
#
# IMG (default dynamo-operator:dev) is set in a throwaway kustomize overlay in a temporary directory
# whose only resource is config/default: the committed tree is never edited.
# Env: IMG, UNDEPLOY_TIMEOUT (seconds to wait for the custom resources to go, default 180).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf 'deploy: %s\n' "$*" >&2; }
IMG=${IMG:-dynamo-operator:dev}
# Deletions are issued in this order, then awaited together: models first (a LoRA model's finalizer
# unloads the adapter from the pods still serving it, or gives up after a minute when they do not
# answer), requests (they own generated graphs), graphs (they own components and adapters), the rest.
KINDS=(
  dynamomodels.nvidia.com
  dynamographdeploymentrequests.nvidia.com
  dynamographdeployments.nvidia.com
  dynamographdeploymentscalingadapters.nvidia.com
  dynamocomponentdeployments.nvidia.com
)

# kustomize's images entry for IMG: name[:tag] or name@digest (a registry port is not a tag); no tag
# means latest, as for `docker build -t name`.
image_entry() {
  local name=$1 tag=latest digest=""
  if [[ $name == *@* ]]; then
    digest=${name#*@}; name=${name%%@*}; tag=""
  elif [[ ${name##*/} == *:* ]]; then
    tag=${name##*:}; name=${name%:*}
  fi
  printf '  - name: dynamo-operator\n    newName: %s\n' "$name"
  [ -n "$tag" ] && printf '    newTag: "%s"\n' "$tag"
  [ -n "$digest" ] && printf '    digest: %s\n' "$digest"
  return 0
}

render() {
  local overlay rc=0
  overlay=$(mktemp -d -t dynamo-deploy-XXXXXX)
  {
    echo "# Temporary overlay of hack/deploy.sh: config/default with the image $IMG"
    echo "resources:"
    echo "  - $(realpath --relative-to="$overlay" "$root/config/default")"
    echo "images:"
    image_entry "$IMG"
  } >"$overlay/kustomization.yaml"
  kubectl kustomize "$overlay" || rc=$?
  rm -rf "$overlay"
  return $rc
}

# Documents of a kustomize stream without the CRDs (kustomize separates documents by "---" lines).
without_crds() {
  awk 'BEGIN { RS = "\n---\n"; ORS = "" }
       !/(^|\n)kind: CustomResourceDefinition(\n|$)/ { if (n++) print "\n---\n"; print }
       END { print "\n" }'
}

served() { kubectl get crd "$1" >/dev/null 2>&1; }

undeploy() {
  local timeout=${UNDEPLOY_TIMEOUT:-180} kind left deadline
  for kind in "${KINDS[@]}"; do
    served "$kind" || continue
    if [ -n "$(kubectl get "$kind" -A -o name 2>/dev/null)" ]; then
      say "deleting every ${kind%%.*} (the operator still runs and clears their finalizers)"
      kubectl delete "$kind" --all -A --wait=false >&2
    fi
  done
  deadline=$((SECONDS + timeout))
  while :; do
    left=""
    for kind in "${KINDS[@]}"; do
      served "$kind" || continue
      left+=$(kubectl get "$kind" -A --no-headers -o \
        custom-columns='K:.kind,NS:.metadata.namespace,N:.metadata.name,F:.metadata.finalizers' \
        2>/dev/null | sed "s|^[^ ]*|${kind%%.*}|" || true)
      [ -n "${left##*$'\n'}" ] && left+=$'\n'
    done
    [ -z "$left" ] && break
    if [ $SECONDS -ge $deadline ]; then
      say "still there after ${timeout}s, waiting on their finalizers (kind, namespace, name, finalizers):"
      printf '%s' "$left" | sed 's/^/  /' >&2
      say "the operator must run to clear them (is it up? kubectl get pods -A -l control-plane=controller-manager);"
      say "it is not removed yet. See why with kubectl describe. To give up on one (nothing will clean up"
      say "after it, e.g. a LoRA adapter stays loaded until its pods restart):"
      printf '%s' "$left" | while read -r k ns name _; do
        say "  kubectl patch $k $name -n $ns --type=merge -p '{\"metadata\":{\"finalizers\":null}}'"
      done
      say "then run 'make undeploy' again"
      exit 1
    fi
    sleep 2
  done
  say "no Dynamo custom resources left; removing the operator (the CRDs stay: 'make uninstall' removes them)"
  render | without_crds | kubectl delete --ignore-not-found -f - >&2
}

case ${1:-} in
  render) render ;;
  apply)
    say "deploying config/default with image $IMG"
    render | kubectl apply --server-side --force-conflicts -f -
    ;;
  installer)
    out=${2:?usage: hack/deploy.sh installer FILE}
    mkdir -p "$(dirname "$out")"
    render >"$out.tmp"
    mv "$out.tmp" "$out"
    say "wrote $out (image $IMG): kubectl apply --server-side -f $out"
    ;;
  undeploy) undeploy ;;
  *)
    echo "usage: hack/deploy.sh render | apply | installer FILE | undeploy" >&2
    exit 2
    ;;
esac
