// Pins Grove's API module, whose core/v1alpha1/crds/ holds the CRDs of Grove's grove.io kinds, for the
// local control plane's `grove` add-on (hack/build-cluster-addons.sh copies them out of the module
// cache). Nothing here is built: `go mod download` fetches the module through the module proxy.
module dynamo-operator.invalid/hack/tools/grove

go 1.24.0

require github.com/ai-dynamo/grove/operator/api v0.1.0-alpha.6
