"""A DGDR read once per lifecycle step: the fields its states decide by, out of the raw object. Pure,
with a bounded memory.

The reconciler walks a request through several states in one reconcile and re-reads it after each
status write; `read_request` is how each step sees it. The cache holds requests as stored (v1beta1)
and the machine decides by the v1alpha1 form, so the request is lowered here, by the webhook's own
conversion, once per version of it (its resourceVersion). `raw` stays beside the fields, as stored:
status writes (stored.py) and Events address the object itself; the Job and the generated DGD are
made from its v1alpha1 view (`request`).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

from dynamo_operator.api.conversion import V1ALPHA1, ConversionError, convert
from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.api.views.v1alpha1 import DeploymentStatus
from dynamo_operator.internal.dynamo.common.inputs import (
    Request,
    RequestSpec,
    RequestStatus,
    StoredRequestStatus,
    json_object,
    request_view,
    stored_request_status_of,
)
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
    def stored_status(self) -> StoredRequestStatus:
        """The status as stored (v1beta1): what a status write builds on (stored.py `beta_status`), and
        where the v1beta1-only fields (`profilingPhase`...) are read."""
        return stored_request_status_of(json_object(self.raw.get("status")))

    @property
    def frozen_spec_edited(self) -> bool:
        """Profiling started (the spec is frozen) and the spec has changed since."""
        return (
            self.state in IMMUTABLE_STATES
            and bool(self.observed_generation)
            and self.observed_generation != self.generation
        )


# uid → (resourceVersion, the stored object's metadata, the request lowered to v1alpha1); most recent
# last. The mappers of the ConfigMaps and PVCs a request waits for read every request of a namespace
# at each such event. A hit needs the very metadata object the entry was made from (a shallow copy of
# the cached object shares it): an object built elsewhere with the same resourceVersion is lowered anew.
_LOWERED: collections.OrderedDict[str, tuple[str, object, JsonObject]] = collections.OrderedDict()
LOWERED_SIZE: Final = 1024


def lowered_request(stored: JsonObject) -> JsonObject:
    """`stored` (a request as cached or as a write returned it) in v1alpha1: itself when it already is
    (read offline, or from a CRD an older release installed); a request v1alpha1 cannot hold is read
    as it is (its v1alpha1 fields then read as absent, and validation refuses it). Shared with other
    callers: read, never changed in place."""
    if stored.get("apiVersion") == V1ALPHA1:
        return stored
    meta = stored.get("metadata")
    uid = str(meta.get("uid") or "") if isinstance(meta, Mapping) else ""
    version = str(meta.get("resourceVersion") or "") if isinstance(meta, Mapping) else ""
    found = _LOWERED.get(uid) if uid and version else None
    if found is not None and found[0] == version and found[1] is meta:
        _LOWERED.move_to_end(uid)
        return found[2]
    try:
        lowered = cast(JsonObject, convert(stored, V1ALPHA1))
    except ConversionError:
        return stored
    if uid and version:
        _LOWERED[uid] = (version, meta, lowered)
        _LOWERED.move_to_end(uid)
        while len(_LOWERED) > LOWERED_SIZE:
            _LOWERED.popitem(last=False)
    return lowered


def read_request(raw: JsonObject) -> RequestView:
    """The view of `raw` (a DGDR as cached or as a status write returned it, as stored)."""
    request = request_view(lowered_request(raw))
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
