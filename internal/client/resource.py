"""Resource descriptors: which REST collection an object lives in, and how to address it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST collection (group, version, plural) plus the kind its objects carry.

    `group` is "" for the core API. Descriptors are hashable and used as cache/informer keys.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def collection_path(self, namespace: str | None = None) -> str:
        """`/api/v1/namespaces/ns/pods` or `/apis/g/v/plural`; namespace None means all namespaces."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{base}/namespaces/{namespace}/{self.plural}"
        return f"{base}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        path = f"{self.collection_path(namespace)}/{name}"
        return f"{path}/{subresource}" if subresource else path


def object_key(obj: Mapping[str, object]) -> str:
    """The workqueue/cache key of an object: `namespace/name`, or `name` when cluster-scoped."""
    meta = obj.get("metadata")
    assert isinstance(meta, dict)
    name, namespace = meta.get("name", ""), meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of `object_key`: (namespace or None, name)."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, namespace)


# Built-in kinds the operator reads or writes. Dynamo's own kinds are declared next to their models.
NAMESPACE = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
CONFIG_MAP = Resource("", "v1", "configmaps", "ConfigMap")
SECRET = Resource("", "v1", "secrets", "Secret")
POD = Resource("", "v1", "pods", "Pod")
SERVICE = Resource("", "v1", "services", "Service")
SERVICE_ACCOUNT = Resource("", "v1", "serviceaccounts", "ServiceAccount")
PERSISTENT_VOLUME_CLAIM = Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim")
EVENT = Resource("", "v1", "events", "Event")
NODE = Resource("", "v1", "nodes", "Node", namespaced=False)
DEPLOYMENT = Resource("apps", "v1", "deployments", "Deployment")
REPLICA_SET = Resource("apps", "v1", "replicasets", "ReplicaSet")
JOB = Resource("batch", "v1", "jobs", "Job")
INGRESS = Resource("networking.k8s.io", "v1", "ingresses", "Ingress")
ENDPOINT_SLICE = Resource("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice")
LEASE = Resource("coordination.k8s.io", "v1", "leases", "Lease")
ROLE = Resource("rbac.authorization.k8s.io", "v1", "roles", "Role")
ROLE_BINDING = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
CUSTOM_RESOURCE_DEFINITION = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)
HORIZONTAL_POD_AUTOSCALER = Resource(
    "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"
)
LEADER_WORKER_SET = Resource("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet")
VIRTUAL_SERVICE = Resource("networking.istio.io", "v1beta1", "virtualservices", "VirtualService")
