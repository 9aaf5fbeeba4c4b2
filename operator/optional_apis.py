"""The optional APIs the operator uses when the cluster serves them, and how to tell that it does.

Each API is named by the one resource the operator calls in it (group, version, plural): it counts as
served when exactly that version of that resource is, because that is what the operator would call
(an InferencePool CRD serving only `v1alpha2` does not make `v1` InferencePools writable). Two
sources answer: discovery at start-up (`discovery_serves`) and, while the operator runs, the
CustomResourceDefinition behind the resource (`crd_serves`, fed by `OptionalApiWatch`). A built-in
API (Dynamic Resource Allocation) has no CRD: discovery alone answers for it, once at start-up (it
changes only when the API server is reconfigured, which restarts nothing here but is rare enough).

Pure functions over plain dicts; the I/O is the callers'.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.dynamo.common.context import Capabilities

Obj = dict[str, Any]

GROVE_POD_CLIQUE_SET: Final = kinds.POD_CLIQUE_SET
# KAI: Grove cliques get its scheduler and queue label when served (internal/dynamo/grove/podcliqueset.py).
KAI_QUEUE: Final = Resource("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False)


@dataclass(frozen=True, slots=True)
class OptionalApi:
    """One optional API: `name` is its `Capabilities` field, `resource` what the operator calls."""

    name: str
    resource: Resource
    # Served by the API server itself (no CRD): the CRD watch never answers for it.
    builtin: bool = False

    @property
    def crd_name(self) -> str:
        """The name its CustomResourceDefinition must have (`<plural>.<group>`)."""
        return f"{self.resource.plural}.{self.resource.group}"

    @property
    def group_version(self) -> str:
        return self.resource.api_version


OPTIONAL_APIS: Final[tuple[OptionalApi, ...]] = (
    OptionalApi("lws", kinds.LWS),
    OptionalApi("volcano", kinds.POD_GROUP),
    OptionalApi("grove", GROVE_POD_CLIQUE_SET),
    OptionalApi("kai_scheduler", KAI_QUEUE),
    OptionalApi("istio", kinds.VIRTUAL_SERVICE),
    OptionalApi("gateway_inference_extension", kinds.INFERENCE_POOL),
    OptionalApi("dra", kinds.RESOURCE_CLAIM_TEMPLATE, builtin=True),
)
# The APIs a CustomResourceDefinition makes served (what `OptionalApiWatch` follows).
CRD_APIS: Final = tuple(api for api in OPTIONAL_APIS if not api.builtin)
CRD_NAMES: Final = frozenset(api.crd_name for api in CRD_APIS)

# One answer per API: True served, False not served, None unknown (the question could not be asked).
Answer = bool | None


def _established(crd: Mapping[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def crd_serves(api: OptionalApi, crd: Mapping[str, Any] | None) -> bool:
    """Whether `crd` (the full object; None when there is none) makes `api` usable: Established (the
    API server serves it), not being deleted (its objects are about to go), and serving the version."""
    if crd is None or (crd.get("metadata") or {}).get("deletionTimestamp") or not _established(crd):
        return False
    spec = crd.get("spec") or {}
    plural = (spec.get("names") or {}).get("plural")
    if spec.get("group") != api.resource.group or plural != api.resource.plural:
        return False
    versions = spec.get("versions") or ()
    return any(v.get("name") == api.resource.version and v.get("served") for v in versions)


def discovery_serves(api: OptionalApi, resources: Iterable[Mapping[str, Any]] | None) -> bool:
    """Whether a discovery answer for the API's group/version (None: 404) lists its resource."""
    return resources is not None and any(r.get("name") == api.resource.plural for r in resources)


def capabilities_from_crds(crds: Mapping[str, Mapping[str, Any]]) -> Capabilities:
    """Every CRD-backed API's answer from the CRDs present, by CRD name (a missing name: not served);
    built-in APIs are not served as far as CRDs can tell."""
    return Capabilities(**{api.name: crd_serves(api, crds.get(api.crd_name)) for api in CRD_APIS})


def with_answers(base: Capabilities, answers: Mapping[str, Answer]) -> Capabilities:
    """`base` with every definite answer applied; an unknown one keeps `base`'s value (an error is
    never taken for "absent", nor for "present")."""
    known = {name: value for name, value in answers.items() if value is not None}
    return dataclasses.replace(base, **known)


def difference(old: Capabilities, new: Capabilities) -> tuple[list[str], list[str]]:
    """(appeared, vanished) API names, in table order."""
    appeared = [a.name for a in OPTIONAL_APIS if getattr(new, a.name) and not getattr(old, a.name)]
    vanished = [a.name for a in OPTIONAL_APIS if getattr(old, a.name) and not getattr(new, a.name)]
    return appeared, vanished


def as_fields(capabilities: Capabilities) -> dict[str, bool]:
    """API name → served, for log lines."""
    return {api.name: bool(getattr(capabilities, api.name)) for api in OPTIONAL_APIS}
