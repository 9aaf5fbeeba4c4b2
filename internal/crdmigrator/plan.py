"""What the migrator should do with one CRD, decided from the CRD object alone (no I/O).

A CRD needs migration while `status.storedVersions` names any version other than the current storage
version: objects may then still be stored in etcd at that older version, and the API server keeps
the old version in the list until someone who rewrote them says otherwise. Nothing else tells which
version an object is stored at (the API serves every object at the version asked for), so the
migrator rewrites them all and trims the list once every write succeeded.

Trimming is only safe when the storage version did not change while the objects were rewritten:
a change of storage version is a change of `spec`, which bumps `metadata.generation`, so the
migrator compares the generation it started from with the one it trims (`may_trim`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal.client.resource import Resource


class CrdShapeError(ValueError):
    """The CRD object lacks what a migration needs (no single storage version, no names)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """One CRD as the migrator sees it: where its objects live at the storage version, and whether
    any of them may still be stored at another version."""

    crd_name: str
    resource: Resource  # the CRD's objects, addressed at the storage version
    storage_version: str
    stored_versions: tuple[str, ...]
    generation: int
    resource_version: str

    @property
    def needs_migration(self) -> bool:
        """True unless `storedVersions` is exactly [storage version]."""
        return self.stored_versions != (self.storage_version,)

    @property
    def stale_versions(self) -> tuple[str, ...]:
        """The versions objects may still be stored at, besides the storage version."""
        return tuple(v for v in self.stored_versions if v != self.storage_version)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def storage_version(crd: Mapping[str, Any]) -> str:
    """The name of the one version marked `storage: true`; CrdShapeError when not exactly one."""
    versions = _mapping(crd.get("spec")).get("versions")
    names = [
        str(v.get("name"))
        for v in (versions if isinstance(versions, list) else [])
        if isinstance(v, Mapping) and v.get("storage") is True and v.get("name")
    ]
    if len(names) != 1:
        raise CrdShapeError(f"expected exactly one storage version, found {names or 'none'}")
    return names[0]


def plan_for(crd: Mapping[str, Any]) -> Plan:
    """The plan for a CRD object as read from the API server."""
    meta, spec = _mapping(crd.get("metadata")), _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    group, plural, kind = spec.get("group"), names.get("plural"), names.get("kind")
    if not (isinstance(group, str) and isinstance(plural, str) and isinstance(kind, str)):
        raise CrdShapeError("spec.group, spec.names.plural and spec.names.kind are required")
    version = storage_version(crd)
    stored = _mapping(crd.get("status")).get("storedVersions")
    return Plan(
        crd_name=str(meta.get("name") or f"{plural}.{group}"),
        resource=Resource(group, version, plural, kind, namespaced=spec.get("scope") != "Cluster"),
        storage_version=version,
        stored_versions=tuple(str(v) for v in stored) if isinstance(stored, list) else (),
        generation=int(meta.get("generation") or 0),
        resource_version=str(meta.get("resourceVersion") or ""),
    )


def may_trim(started: Plan, now: Plan) -> bool:
    """Whether `storedVersions` may be trimmed to `started`'s storage version, given the CRD as read
    again after every object was rewritten.

    The spec must not have changed since the rewrite began (same generation, so the same storage
    version for every write in between). A list already trimmed needs no second write.
    """
    return (
        now.generation == started.generation
        and now.storage_version == started.storage_version
        and now.needs_migration
    )


def trim_patch(plan: Plan) -> dict[str, Any]:
    """A merge patch of the CRD's status subresource leaving only the storage version, conditional on
    the CRD's resourceVersion as `plan` read it (a change in between is a Conflict, not a lost write)."""
    return {
        "metadata": {"resourceVersion": plan.resource_version},
        "status": {"storedVersions": [plan.storage_version]},
    }
