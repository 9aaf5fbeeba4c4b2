"""A DGDR read once per lifecycle step: the fields its states decide by, out of the raw object. Pure.

The reconciler walks a request through several states in one reconcile and re-reads it after each
status write; `read_request` is how each step sees it. `raw` stays beside the fields: status writes
and Events address the object itself; the Job and the generated DGD are made from its view
(`request`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.api.views.v1alpha1 import DeploymentStatus
from dynamo_operator.internal.dynamo.common.inputs import Request, RequestSpec, RequestStatus, request_view
from dynamo_operator.internal.dynamo.dgdr.machine import IMMUTABLE_STATES, State, parse_state
from dynamo_operator.internal.dynamo.dgdr.stored import tracked_deployment


@dataclass(frozen=True, slots=True)
class RequestView:
    """One DGDR as a step reads it. `state` is None for a `status.state` this operator does not know
    (`raw_state` keeps the string); `observed_generation` is 0 before the spec was first taken in."""

    raw: JsonObject
    request: Request
    namespace: str
    name: str
    uid: str
    generation: int | None
    resource_version: str | None
    spec: RequestSpec
    status: RequestStatus
    state: State | None
    raw_state: str
    observed_generation: int

    @property
    def auto_apply(self) -> bool:
        return bool(self.spec.get("autoApply"))

    @property
    def deployment(self) -> DeploymentStatus:
        """`status.deployment`: the DGD the request named or created and what it last saw of it, with
        its namespace and `created` derived where the stored v1beta1 status does not hold them
        (`stored.tracked_deployment`)."""
        return tracked_deployment(self.status, self.namespace)

    @property
    def frozen_spec_edited(self) -> bool:
        """Profiling started (the spec is frozen) and the spec has changed since."""
        return (
            self.state in IMMUTABLE_STATES
            and bool(self.observed_generation)
            and self.observed_generation != self.generation
        )


def read_request(raw: JsonObject) -> RequestView:
    """The view of `raw` (a DGDR as cached or as a status write returned it)."""
    request = request_view(raw)
    meta = request.get("metadata") or {}
    status = request.get("status") or {}
    raw_state = str(status.get("state") or "")
    return RequestView(
        raw=raw,
        request=request,
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        uid=str(meta.get("uid") or ""),
        generation=meta.get("generation"),
        resource_version=meta.get("resourceVersion"),
        spec=request.get("spec") or {},
        status=status,
        state=parse_state(raw_state),
        raw_state=raw_state,
        observed_generation=int(status.get("observedGeneration") or 0),
    )
