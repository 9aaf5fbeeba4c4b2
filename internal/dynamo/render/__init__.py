"""Offline rendering (`dynamo-operator render`): YAML in, the operator's objects out, with the
API server's unknown-field check and kubectl-safe YAML text."""
