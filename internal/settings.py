"""The one typed settings object every reconciler module is built from (`build(mgr, settings)`).

The entry point makes it from the flags and the optional APIs found at start-up; the wiring adds the
two things that change while the operator runs (the APIs served now, the namespaces' pull secrets),
so `gen_context(namespace)` always describes the cluster of this moment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from dynamo_operator.internal import consts
from dynamo_operator.internal.controller.orphans import DEFAULT_GRACE_SECONDS
from dynamo_operator.internal.dynamo.context import Capabilities, GenContext, IngressDefaults
from dynamo_operator.internal.secrets.index import DockerSecretIndex

# Upstream's default: a deleted LoRA model keeps its finalizer this long while unloads fail.
DEFAULT_LORA_UNLOAD_GRACE = 60.0
GROVE_MODES = ("true", "auto", "false")


class CapabilitySource(Protocol):
    """The optional APIs served right now (`OptionalApiWatch`)."""

    @property
    def current(self) -> Capabilities: ...


@dataclass(frozen=True, slots=True)
class _Fixed:
    """What is served when nobody follows the APIs: the capabilities detected at start-up."""

    current: Capabilities


def _no_env() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Settings:
    """Operator-wide settings of the reconcilers; the defaults are generation's defaults."""

    # Restricted mode: the one namespace watched; None watches the cluster.
    namespace: str | None = None
    # Served at start-up; `apis` (when the wiring sets it) is what is served now.
    capabilities: Capabilities = field(default_factory=Capabilities)
    ingress: IngressDefaults = field(default_factory=IngressDefaults)
    planner_cluster_role: str = ""
    epp_cluster_role: str = ""
    profiling_cluster_role: str = ""
    mpi_ssh_secret_name: str = consts.DEFAULT_MPI_SSH_SECRET_NAME
    mpi_ssh_secret_namespace: str = ""
    discovery_backend: str = consts.DISCOVERY_BACKEND_KUBERNETES
    infrastructure_env: Mapping[str, str] = field(default_factory=_no_env)
    operator_version: str = ""
    # `--enable-grove`: "true" (required), "auto" (when served) or "false" (never).
    grove: str = "false"
    lora_unload_grace: float = DEFAULT_LORA_UNLOAD_GRACE
    orphan_grace: float = DEFAULT_GRACE_SECONDS
    apis: CapabilitySource | None = field(default=None, compare=False)
    # Registry host → dockerconfigjson Secret names, per namespace; the DCD controller feeds it.
    pull_secrets: DockerSecretIndex = field(default_factory=DockerSecretIndex, compare=False)

    def served(self) -> Capabilities:
        """The optional APIs served now (those of start-up when nobody follows them)."""
        return (self.apis or _Fixed(self.capabilities)).current

    def generation_capabilities(self, served: Capabilities) -> Capabilities:
        """What generation may use of the served APIs: VirtualServices only with a gateway configured,
        as upstream does; Grove only when `--enable-grove` is not `false`."""
        return dataclasses.replace(
            served,
            istio=served.istio and bool(self.ingress.virtual_service_gateway),
            grove=served.grove and self.grove != "false",
        )

    def gen_context(self, namespace: str) -> GenContext:
        """Generation's context for one namespace: these settings, the APIs served at this moment and
        the namespace's pull secrets."""
        return GenContext(
            namespace=namespace,
            capabilities=self.generation_capabilities(self.served()),
            docker_secrets=self.pull_secrets.snapshot(namespace),
            ingress=self.ingress,
            planner_cluster_role=self.planner_cluster_role,
            epp_cluster_role=self.epp_cluster_role,
            mpi_ssh_secret_name=self.mpi_ssh_secret_name,
            mpi_ssh_secret_namespace=self.mpi_ssh_secret_namespace,
            discovery_backend=self.discovery_backend,
            infrastructure_env=self.infrastructure_env,
            operator_version=self.operator_version,
        )
