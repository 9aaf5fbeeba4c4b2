"""What the operator learns at start-up and hands to the controllers: flags and optional APIs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

import structlog
from dynamo_operator.flags import OperatorOptions

log = structlog.get_logger(__name__)


class Discovery(Protocol):
    async def api_resources(self, group_version: str) -> list[dict[str, object]] | None: ...


# Optional APIs, by the group/versions that count as "installed" (any one of them).
_OPTIONAL_APIS: dict[str, tuple[str, ...]] = {
    "lws": ("leaderworkerset.x-k8s.io/v1",),
    "volcano": ("scheduling.volcano.sh/v1beta1",),
    "grove": ("grove.io/v1alpha1",),
    "kai_scheduler": ("scheduling.run.ai/v2",),
    "istio": ("networking.istio.io/v1", "networking.istio.io/v1beta1"),
    "inference_extension": ("inference.networking.k8s.io/v1", "inference.networking.x-k8s.io/v1alpha2"),
}


@dataclass(frozen=True, slots=True)
class Capabilities:
    """Optional APIs served by the cluster, detected once at start-up (restart to re-detect)."""

    lws: bool = False
    volcano: bool = False
    grove: bool = False
    kai_scheduler: bool = False
    istio: bool = False
    inference_extension: bool = False


@dataclass(frozen=True, slots=True)
class OperatorContext:
    """Flags plus detected capabilities; `register_controllers` builds everything from this."""

    options: OperatorOptions = field(default_factory=OperatorOptions)
    capabilities: Capabilities = field(default_factory=Capabilities)

    @property
    def restricted_namespace(self) -> str | None:
        return self.options.namespace


async def detect_capabilities(discovery: Discovery) -> Capabilities:
    """Ask discovery for each optional group/version; any failure counts as "absent"."""

    async def served(group_versions: tuple[str, ...]) -> bool:
        for group_version in group_versions:
            try:
                if await discovery.api_resources(group_version) is not None:
                    return True
            except Exception as err:  # detection must never stop the operator from starting
                log.warning(
                    "API discovery failed; treating as absent", group_version=group_version, error=str(err)
                )
        return False

    names = list(_OPTIONAL_APIS)
    found = await asyncio.gather(*(served(_OPTIONAL_APIS[name]) for name in names))
    capabilities = Capabilities(**dict(zip(names, found, strict=True)))
    log.info("Detected optional APIs", **{name: getattr(capabilities, name) for name in names})
    return capabilities
