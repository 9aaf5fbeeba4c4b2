"""dynamo-operator: a Kubernetes operator for NVIDIA Dynamo inference graphs."""
