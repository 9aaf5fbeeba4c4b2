"""A DynamoModel read once: the fields its reconcile decides by, out of the raw object. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal.dynamo.common.inputs import Model, model_view
from dynamo_operator.internal.dynamo.dynamomodel.status import is_lora, lora_source


@dataclass(frozen=True, slots=True)
class ModelView:
    """One DynamoModel as this reconcile read it. `raw` stays beside the fields: status writes, Events
    and finalizer patches address the object itself. `source` is "" when the spec names none."""

    raw: JsonObject
    model: Model
    namespace: str
    name: str
    generation: int | None
    resource_version: str | None
    deletion_timestamp: str | None
    finalizers: tuple[str, ...]
    base_model: str
    model_name: str
    lora: bool
    source: str


def read_model(raw: JsonObject) -> ModelView:
    """The view of `raw` (a DynamoModel as cached or as a patch returned it)."""
    model = model_view(raw)
    meta = model.get("metadata", {})
    spec = model["spec"]
    return ModelView(
        raw=raw,
        model=model,
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        generation=meta.get("generation"),
        resource_version=meta.get("resourceVersion"),
        deletion_timestamp=meta.get("deletionTimestamp"),
        finalizers=tuple(meta.get("finalizers") or ()),
        base_model=str(spec.get("baseModelName", "")),
        model_name=str(spec.get("modelName", "")),
        lora=is_lora(model),
        source=lora_source(model),
    )
