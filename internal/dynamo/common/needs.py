"""Which optional API a feature of a service needs, and what a graph that uses it without the API is
told: one `Need` each. `missing_apis` (graph/generate.py) reads this list and nothing else.

Generation is pure and cannot import the table of optional APIs (internal/optional_api_table.py), so
the API a need names is checked against it the other way round: the table, at import, refuses a
`Need` whose `api` is not "<group>/<version> <Kind>" of the entry its `capability` reads. The
GPU Memory Service's need of DRA is the component's (`component.gpu_memory_service.missing_dra`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.common.inputs import ServiceSpec

Spec = ServiceSpec


@dataclass(frozen=True, slots=True)
class Need:
    """A service whose spec `uses` a feature needs the API `capability` reads. `field`: the spec
    field that asks for it (under `spec.services.<name>`); `api`: "<group>/<version> <Kind>";
    `message` may name the API as `{api}`. `uses(spec, grove)`: `grove` is true when the graph
    takes the Grove pathway."""

    capability: Callable[[Capabilities], bool]
    uses: Callable[[Spec, bool], bool]
    field: str
    api: str
    message: str

    def text(self) -> str:
        return self.message.format(api=self.api)


def _ingress_wants_virtual_service(spec: Spec, grove: bool) -> bool:
    ingress = spec.get("ingress") or {}
    return bool(ingress.get("enabled") and ingress.get("useVirtualService"))


NEEDS: Final[tuple[Need, ...]] = (
    Need(
        capability=lambda caps: caps.lws,
        # Grove's scaling groups run multinode services on the Grove pathway.
        uses=lambda spec, grove: spec.get("multinode") is not None and not grove,
        field="multinode",
        api=f"{c.LWS_GROUP}/v1 LeaderWorkerSet",
        message="multinode needs the {api} API; install LeaderWorkerSet or make the service single-node",
    ),
    Need(
        capability=lambda caps: caps.istio,
        uses=_ingress_wants_virtual_service,
        field="ingress.useVirtualService",
        api=f"{c.ISTIO_API_VERSION} VirtualService",
        message="a VirtualService needs Istio; install it or use an Ingress",
    ),
    Need(
        capability=lambda caps: caps.gateway_inference_extension,
        uses=lambda spec, grove: spec.get("componentType") == c.COMPONENT_EPP,
        field="componentType",
        api=f"{c.GATEWAY_INFERENCE_GROUP}/v1 InferencePool",
        message="an epp component needs the {api} API",
    ),
)
