# Versions of the local control plane and of the tools built from Go modules; sourced by the build
# scripts, hack/localcluster.py and the tests. Changing a version changes its cache key, so a new set of
# binaries is built beside the old.
K8S_VERSION=v1.33.13   # staging modules at v0.33.13: the newest 1.33 patch whose zips the module proxy serves
ETCD_VERSION=v3.5.24   # kubeadm's etcd for Kubernetes 1.31-1.33
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.18.6   # hack/tools/helm pins it, with the k8s.io modules at the control plane's v0.33.13
# The keys name what is built, never the Go that builds it: the binaries are static (CGO_ENABLED=0) and
# the versions pin every module (go.sum), so another Go on the same machine reuses them.
DYNAMO_CACHE_ROOT=${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-operator
CLUSTER_CACHE_ROOT=${DYNAMO_CLUSTER_CACHE:-$DYNAMO_CACHE_ROOT/cluster}
CLUSTER_KEY=k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}
CLUSTER_BIN_DIR=$CLUSTER_CACHE_ROOT/$CLUSTER_KEY/bin
TOOLS_CACHE_ROOT=${DYNAMO_TOOLS_CACHE:-$DYNAMO_CACHE_ROOT/tools}
HELM_BIN_DIR=$TOOLS_CACHE_ROOT/helm-$HELM_VERSION/bin
# Opt-in add-ons (hack/build-cluster-addons.sh prepares them, localcluster.py --addons runs them). Each
# is keyed by its own version only: a bump rebuilds that add-on and nothing of the control plane.
LWS_VERSION=v0.6.1             # sigs.k8s.io/lws, pinned by hack/tools/lws (upstream Dynamo's pin too)
GROVE_VERSION=v0.1.0-alpha.6   # Grove's API module (its CRDs), pinned by hack/tools/grove (upstream Dynamo's pin)
ADDONS_CACHE_ROOT=$CLUSTER_CACHE_ROOT/addons
LWS_ADDON_DIR=$ADDONS_CACHE_ROOT/lws-$LWS_VERSION
GROVE_ADDON_DIR=$ADDONS_CACHE_ROOT/grove-crds-$GROVE_VERSION  # CRDs only: the operator is GROVE_OPERATOR
