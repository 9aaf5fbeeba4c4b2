"""A DynamoModel's status from its endpoints and (for LoRA models) the load results."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from dynamo_operator.api.v1alpha1.enums import ModelType
from dynamo_operator.api.views.v1alpha1 import EndpointInfo
from dynamo_operator.internal.dynamo.common.inputs import Model, ModelStatusView
from dynamo_operator.internal.dynamo.dynamomodel.endpoints import Endpoint, services_of
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition

SERVICES_FOUND = "ServicesFound"
ENDPOINTS_READY = "EndpointsReady"
# Until every endpoint has the adapter, look again this often (pods may have been starting).
LORA_RETRY_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Cond:
    type: str
    status: bool
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Event:
    type: str  # "Normal" | "Warning"
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class LoadResult:
    """Outcome of one POST /v1/loras; `error` is empty on a 2xx."""

    ok: bool
    error: str = ""


@dataclass(frozen=True, slots=True)
class ModelStatus:
    endpoints: list[EndpointInfo]
    ready: int
    total: int
    conditions: tuple[Cond, ...]
    events: tuple[Event, ...] = ()
    requeue_after: float | None = None
    failures: tuple[str, ...] = field(default=())

    def as_status(self) -> ModelStatusView:
        """The status fields besides conditions (the writer merges those by type)."""
        return {"endpoints": self.endpoints, "readyEndpoints": self.ready, "totalEndpoints": self.total}


def is_lora(model: Model) -> bool:
    return str(model["spec"].get("modelType") or "").lower() == ModelType.LORA


def lora_source(model: Model) -> str:
    source = model["spec"].get("source")
    return str(source.get("uri") or "") if source else ""


def to_load(endpoints: Sequence[Endpoint]) -> list[Endpoint]:
    """Where to POST: only serving pods, since an engine that is still starting refuses (or loses) the
    adapter; a pod turning ready updates its slice and triggers the next attempt."""
    return [e for e in endpoints if e.serving]


def compute(
    model: Model, endpoints: Sequence[Endpoint], results: Mapping[str, LoadResult] | None
) -> ModelStatus:
    """Status for the endpoints found. `results` maps address → load outcome (LoRA models only);
    an endpoint without a result was not attempted and is not ready."""
    base = model["spec"].get("baseModelName", "")
    total = len(endpoints)
    if total == 0:
        return ModelStatus(
            endpoints=[],
            ready=0,
            total=0,
            conditions=(
                Cond(SERVICES_FOUND, False, "NoServicesFound", f"No services found for base model {base}"),
                Cond(ENDPOINTS_READY, False, "NoEndpoints", "No endpoints found"),
            ),
            events=(Event("Warning", "NoEndpointsFound", f"No endpoint slices found for base model {base}"),),
        )
    lora = is_lora(model)
    results = results or {}
    infos = []
    for e in endpoints:
        result = results.get(e.address)
        info: EndpointInfo = {"address": e.address, "ready": bool(lora and result and result.ok)}
        if e.pod_name:
            info["podName"] = e.pod_name
        infos.append(info)
    ready = sum(1 for i in infos if i["ready"])
    services = services_of(endpoints)
    found = Cond(SERVICES_FOUND, True, "ServicesFound", f"Found {len(services)} service(s)")
    failures = tuple(f"{a}: {r.error}" for a, r in sorted(results.items()) if not r.ok)
    events: list[Event] = []
    if failures:
        events.append(
            Event(
                "Warning",
                "PartialEndpointFailure",
                f"Some endpoints failed to load LoRA: {'; '.join(failures)}",
            )
        )
    if not lora:
        cond = Cond(ENDPOINTS_READY, True, "EndpointsDiscovered", f"Found {total} endpoint(s)")
        events.append(
            Event("Normal", "EndpointsDiscovered", f"Found {total} endpoint(s) for base model {base}")
        )
        return ModelStatus(infos, ready, total, (found, cond), tuple(events))
    if ready == total:
        cond = Cond(ENDPOINTS_READY, True, "AllEndpointsReady", f"All {total} endpoint(s) are ready")
        events.append(Event("Normal", "EndpointsReady", cond.message))
        return ModelStatus(infos, ready, total, (found, cond), tuple(events), failures=failures)
    message = f"Found {ready} ready endpoint(s) out of {total} total"
    cond = Cond(ENDPOINTS_READY, False, "NotReady", message)
    events.append(Event("Warning", "NotReady", message))
    return ModelStatus(infos, ready, total, (found, cond), tuple(events), LORA_RETRY_SECONDS, failures)


def model_status(
    old: ModelStatusView, status: ModelStatus, *, generation: int | None, now: datetime.datetime
) -> ModelStatusView:
    """The whole status to write: endpoints and counts, the conditions upserted over the old ones
    (their `lastTransitionTime` moves only when their status flips)."""
    out = status.as_status()
    out["conditions"] = conditions.set_conditions(
        old.get("conditions"),
        [Condition(c.type, "True" if c.status else "False", c.reason, c.message) for c in status.conditions],
        observed_generation=generation,
        now=now,
    )
    return out


def metrics_state(model: Model) -> str:
    """The `status` label of the resource-count metric: `ready` when every endpoint (at least one) is."""
    status = model.get("status", {})
    total, ready = int(status.get("totalEndpoints") or 0), int(status.get("readyEndpoints") or 0)
    return "ready" if total > 0 and ready == total else "not_ready"
