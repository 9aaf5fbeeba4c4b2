"""The one typed settings object every reconciler module is built from (`build(mgr, settings)`).

The entry point makes it from the flags and the optional APIs found at start-up; the wiring adds the
two things that change while the operator runs (the APIs served now, the namespaces' pull secrets),
so `gen_context(namespace)` always describes the cluster of this moment.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Protocol

from dynamo_operator.internal.controller.orphans import DEFAULT_GRACE_SECONDS
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
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


def _operator_wide() -> GenContext:
    return GenContext(namespace="")


@dataclass(frozen=True, slots=True)
class Settings:
    """Operator-wide settings of the reconcilers; the defaults are generation's defaults."""

    # Restricted mode: the one namespace watched; None watches the cluster.
    namespace: str | None = None
    # Served at start-up; `apis` (when the wiring sets it) is what is served now.
    capabilities: Capabilities = field(default_factory=Capabilities)
    # Generation's operator-wide inputs (ingress, cluster roles, MPI key Secret, discovery backend,
    # infrastructure env, version), kept once in generation's own type: `gen_context` fills in the
    # namespace, the APIs served now and its pull secrets, and copies nothing field by field.
    generation: GenContext = field(default_factory=_operator_wide)
    profiling_cluster_role: str = ""
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
            istio=served.istio and bool(self.generation.ingress.virtual_service_gateway),
            grove=served.grove and self.grove != "false",
        )

    def gen_context(self, namespace: str) -> GenContext:
        """Generation's context for one namespace: these settings, the APIs served at this moment and
        the namespace's pull secrets."""
        return dataclasses.replace(
            self.generation,
            namespace=namespace,
            capabilities=self.generation_capabilities(self.served()),
            docker_secrets=self.pull_secrets.snapshot(namespace),
        )
