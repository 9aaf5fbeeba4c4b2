"""A CustomResourceDefinition builder shared by the optional-API tests (not a test module)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.optional_apis import OptionalApi


def crd(
    api: OptionalApi,
    *,
    versions: tuple[tuple[str, bool], ...] | None = None,
    established: str | None = "True",
    deleting: bool = False,
) -> dict[str, Any]:
    """A CustomResourceDefinition for `api`'s resource (by default: serving its version, Established)."""
    r = api.resource
    meta: dict[str, Any] = {"name": api.crd_name}
    if deleting:
        meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    conditions = [{"type": "NamesAccepted", "status": "True"}]
    if established is not None:
        conditions.append({"type": "Established", "status": established})
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": r.group,
            "names": {"plural": r.plural, "kind": r.kind},
            "versions": [
                {"name": name, "served": on, "storage": i == 0}
                for i, (name, on) in enumerate(versions or ((r.version, True),))
            ],
        },
        "status": {"conditions": conditions},
    }
