"""DGD → the objects the graph reconciler owns (DCDs, PVCs, adapters, RBAC, side objects, the MPI
SSH Secret), the graph read once into a view, and the annotations written on the graph itself."""
