"""Fixtures for integration tests against a real kube-apiserver; each lives in a testsupport module."""

from testsupport.cluster import cluster, kubectl, local_cluster, ns  # noqa: F401
