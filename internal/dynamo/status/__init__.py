"""Status from observed objects: conditions, workload readiness, pod diagnosis, and the DCD and
DGD status documents."""
