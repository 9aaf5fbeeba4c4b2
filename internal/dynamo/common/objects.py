"""Small builders shared by every generator: object envelopes and owner references."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamo_operator.api.views.scalars import JsonObject, JsonValue
from dynamo_operator.internal import consts as c

# A Kubernetes object (or a part of one) in its JSON form, as generation builds it: the outputs of
# generation. What generation reads of Dynamo's own kinds is typed by their views (inputs.py).
Obj = dict[str, Any]
# The same, read only: an object of another kind that generation looks at (a live workload, say).
ReadObj = Mapping[str, Any]
# An object generation hands out of internal/dynamo (to the client, the syncer, a file): plain JSON,
# typed without Any. Builders assemble it as `Obj`; the two are compatible both ways (an Any
# argument is), so nothing is cast, yet a caller reading one back must narrow what it reads.
GeneratedObject = JsonObject


def json_fields(value: JsonValue) -> JsonObject:
    """`value` if it is a JSON object, else an empty one: how a builder steps into a field of a JSON
    object it copies from (a missing or malformed field reads as empty, as `obj.get(key) or {}`)."""
    return value if isinstance(value, dict) else {}


def owner_api_version(owner: Mapping[str, Any]) -> str | None:
    """The apiVersion an ownerReference to `owner` names: the storage version (v1beta1) for the
    four converted kinds of our group, whichever version `owner` was read in; else its own."""
    api_version = owner.get("apiVersion")
    group = str(api_version or "").split("/", 1)[0]
    if group == c.GROUP and owner.get("kind") in c.CONVERTED_KINDS:
        return c.STORAGE_API_VERSION
    return str(api_version) if api_version is not None else None


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any] | None:
    """A controller ownerReference to `owner`, or None while the owner has no UID (offline render).
    A converted kind is named by its storage version (owner_api_version)."""
    meta = owner.get("metadata") or {}
    uid = meta.get("uid")
    if not uid:
        return None
    return {
        "apiVersion": owner_api_version(owner),
        "kind": owner.get("kind"),
        "name": meta.get("name"),
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def envelope(
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    owner: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """apiVersion/kind/metadata of a new object; empty maps are left out."""
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(sorted(labels.items()))
    if annotations:
        meta["annotations"] = dict(sorted(annotations.items()))
    if owner is not None and (ref := owner_reference(owner)) is not None:
        meta["ownerReferences"] = [ref]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta}
