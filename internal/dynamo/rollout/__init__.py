"""How a graph's pods are replaced: the worker hash (v1, and v2 in Go's JSON encoding), the
worker generation rollout, the managed rolling update, its budget and its Recreate strategy, and
`spec.restart`."""
