"""The optional APIs the operator uses when the cluster serves them, and how to tell that it does.

Each API is named by the one resource the operator calls in it (group, version, plural): it counts as
served when exactly that version of that resource is, because that is what the operator would call
(an InferencePool CRD serving only `v1alpha2` does not make `v1` InferencePools writable). Two
sources answer: discovery at start-up (`discovery_serves`) and, while the operator runs, the
CustomResourceDefinition behind the resource (`crd_serves`, fed by `OptionalApiWatch`). A built-in
API (Dynamic Resource Allocation) has no CRD: discovery alone answers for it, once at start-up (it
changes only when the API server is reconfigured, which restarts nothing here but is rare enough).

The APIs themselves are the entries of internal/optional_api_table.py. Pure functions over plain
dicts; the I/O is the callers'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.optional_api_table import (
    BY_NAME,
    CRD_APIS,
    OPTIONAL_APIS,
    OptionalApi,
    capabilities,
)
from dynamo_operator.internal.optional_api_table import with_answers as _with

Obj = dict[str, Any]

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
    return capabilities(api for api in CRD_APIS if crd_serves(api, crds.get(api.crd_name)))


def with_answers(base: Capabilities, answers: Mapping[str, Answer]) -> Capabilities:
    """`base` with every definite answer (by API name) applied; an unknown one keeps `base`'s value
    (an error is never taken for "absent", nor for "present")."""
    return _with(base, ((BY_NAME[name], value) for name, value in answers.items() if value is not None))


def difference(old: Capabilities, new: Capabilities) -> tuple[list[str], list[str]]:
    """(appeared, vanished) API names, in table order."""
    appeared = [a.name for a in OPTIONAL_APIS if a.capability(new) and not a.capability(old)]
    vanished = [a.name for a in OPTIONAL_APIS if a.capability(old) and not a.capability(new)]
    return appeared, vanished


def as_fields(capabilities: Capabilities) -> dict[str, bool]:
    """API name → served, for log lines."""
    return {api.name: api.capability(capabilities) for api in OPTIONAL_APIS}
