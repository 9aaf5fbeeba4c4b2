"""What a graph says to its components' pods, read off a DCD as stored (v1beta1). Pure.

A graph hands each DCD annotations for its pods (the restart id, the origin version...). A DCD the
operator writes holds them in its pod template's metadata (graph/stored_dcd.py); one an older release
wrote as v1alpha1 held them in `spec.annotations`, which v1beta1 has no field for, so its conversion
keeps them in the DCD's reserved annotation. Readers on the graph's side look in both, without
converting the DCD.
"""

from __future__ import annotations

from dynamo_operator.api.conversion import preserve
from dynamo_operator.internal.dynamo.common.inputs import ComponentDeployment, json_object


def pod_annotation(dcd: ComponentDeployment, key: str) -> str | None:
    """The value of the pod annotation `key` the DCD carries: its pod template's, else the one of
    its v1alpha1 `spec.annotations` kept in the reserved annotation; None when neither has it."""
    template = json_object((dcd.get("spec") or {}).get("podTemplate"))
    value = json_object(json_object(template.get("metadata")).get("annotations")).get(key)
    if not value:
        value = _kept_by_conversion(dcd, key)
    return str(value) if value else None


def _kept_by_conversion(dcd: ComponentDeployment, key: str) -> object:
    payload = ((dcd.get("metadata") or {}).get("annotations") or {}).get(preserve.DCD_SPEC)
    if not payload or key not in payload:
        return None  # most DCDs: parsing the payload would find nothing
    saved = preserve.decode_spec(payload, preserve.DCD_SPEC) or {}
    return json_object(saved.get("annotations")).get(key)
