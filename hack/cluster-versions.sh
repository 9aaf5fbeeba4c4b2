# Versions of the local control plane; sourced by the build and cluster scripts.
# Changing any of them changes the cache key, so a new set of binaries is built beside the old.
K8S_VERSION=v1.33.13   # staging modules at v0.33.13: the newest 1.33 patch whose zips the module proxy serves
ETCD_VERSION=v3.5.24   # kubeadm's etcd for Kubernetes 1.31-1.33
KWOK_VERSION=v0.8.0
GO_VERSION=$(go env GOVERSION 2>/dev/null || echo unknown)
CLUSTER_CACHE_ROOT=${DYNAMO_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dynamo-operator/cluster}
CLUSTER_BIN_DIR=$CLUSTER_CACHE_ROOT/k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_${GO_VERSION}/bin
