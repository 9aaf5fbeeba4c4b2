"""DCD → the workload that runs it (Deployment or LeaderWorkerSets, Service, route), and the
per-service features that reshape its pods: backends, frontend sidecar, GPU Memory Service, failover."""
