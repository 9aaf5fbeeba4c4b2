"""Pure logic of DynamoGraphDeploymentRequests: lifecycle state machine, profiling Job, result parsing
and the DGD deployed from it. No I/O: the reconciler in controllers/ does the reads and writes."""
