"""Everything generation needs besides the object itself: namespace, detected APIs, operator settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from dynamo_operator.internal import consts


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Optional APIs the cluster serves, one flag per API (each field name is the API's name in the
    operator's table of optional APIs). Detected at start-up and kept current while it runs; a
    `GenContext` carries the value of the moment it was built."""

    lws: bool = False
    volcano: bool = False
    grove: bool = False
    kai_scheduler: bool = False
    istio: bool = False
    gateway_inference_extension: bool = False
    # Dynamic Resource Allocation (resource.k8s.io/v1): the GPU Memory Service claims GPUs through it.
    dra: bool = False
    # Grove's ClusterTopologyBinding (grove.io/v1alpha1), which `topologyConstraint` names.
    grove_cluster_topology: bool = False


@dataclass(frozen=True, slots=True)
class IngressDefaults:
    """Operator-wide ingress settings applied to frontends that declare no `ingress` of their own."""

    controller_class_name: str = ""
    tls_secret_name: str = ""
    host_suffix: str = ""
    virtual_service_gateway: str = ""

    @property
    def enabled(self) -> bool:
        return bool(self.controller_class_name or self.virtual_service_gateway)


def _empty_index() -> Mapping[str, Sequence[str]]:
    return MappingProxyType({})


def _empty_env() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class GenContext:
    """Inputs of generation other than the DGD/DCD itself. Frozen: build a new one to change it."""

    namespace: str
    capabilities: Capabilities = field(default_factory=Capabilities)
    # Registry host → names of dockerconfigjson Secrets in `namespace` that authenticate to it.
    docker_secrets: Mapping[str, Sequence[str]] = field(default_factory=_empty_index)
    planner_service_account: str = consts.PLANNER_SERVICE_ACCOUNT_NAME
    # ClusterRole the planner SA is bound to (cluster-wide installs); "" binds nothing.
    planner_cluster_role: str = ""
    # ClusterRole the EPP SA is bound to (`--epp-cluster-role-name`); "" binds nothing.
    epp_cluster_role: str = ""
    ingress: IngressDefaults = field(default_factory=IngressDefaults)
    discovery_backend: str = consts.DISCOVERY_BACKEND_KUBERNETES
    mpi_ssh_secret_name: str = consts.DEFAULT_MPI_SSH_SECRET_NAME
    # Where the MPI SSH key Secret is kept and copied from; "": a key pair per namespace, made there.
    mpi_ssh_secret_namespace: str = ""
    # Infrastructure env (NATS_SERVER, ETCD_ENDPOINTS, ...) injected at the lowest priority.
    infrastructure_env: Mapping[str, str] = field(default_factory=_empty_env)
    # Stamped on new graphs as their origin version (graph/meta.py); "" stamps nothing.
    operator_version: str = ""
    # Grove's pods scheduled by Volcano (`--volcano-scheduler`), while Volcano's API is served.
    volcano_on_grove: bool = False
    # A PodCliqueSet's terminationDelay, in Go's form (`--grove-termination-delay`); "0s" sets none.
    grove_termination_delay: str = consts.DEFAULT_GROVE_TERMINATION_DELAY
    # The version generated DCDs are written in: the one their CRD stores (graph/stored_dcd.py says
    # what changes in v1beta1). v1alpha1 here (offline rendering, the April goldens); the operator
    # sets it from the CRD it finds at start (operator/app.py).
    dcd_api_version: str = consts.API_VERSION


class SharedContexts:
    """`build(namespace)` on every call, but the namespace's previous context returned while the new
    one equals it: callers that keep a context per object (what it was generated from) then share
    one per namespace instead of holding a copy each. At most `limit` namespaces are held, the
    oldest dropped first: a dropped one only costs a second, equal copy, never a wrong answer."""

    def __init__(self, build: Callable[[str], GenContext], *, limit: int = 4096) -> None:
        self._build, self._limit = build, limit
        self._last: dict[str, GenContext] = {}

    def __len__(self) -> int:
        return len(self._last)

    def __call__(self, namespace: str) -> GenContext:
        ctx = self._build(namespace)
        previous = self._last.get(namespace)
        if previous is not None and ctx == previous:
            return previous
        self._last.pop(namespace, None)
        self._last[namespace] = ctx
        while len(self._last) > self._limit:
            del self._last[next(iter(self._last))]
        return ctx
