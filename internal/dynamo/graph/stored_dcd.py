"""A generated DCD in the form upstream's generator (2a6da14c) stores it: v1beta1, the component's
pod metadata in `spec.podTemplate.metadata`, and a `nvidia.com/dcd-spec` payload made from the
graph's v1alpha1 component. Pure.

Generation writes a DCD as v1alpha1 (`desired_dcds`): what the graph adds to a component (its
labels, the annotations it propagates, the restart id) sits in the DCD's `spec.labels` and
`spec.annotations`, fields v1beta1 does not have. Converted as they are, those would travel in the
payload, and the stored object would differ from upstream's in that one annotation. So, before the
DCD is written in its storage version:
- the labels stay on the DCD object (they are its `metadata.labels` already) and the graph's own
  labels are also put under the pod template's, as upstream does (a component's own label of the
  same key wins, here as before, where upstream's graph label would);
- the annotations the graph contributed go under the pod template's (the component's own pod
  template annotations win; a restart id always goes there);
- the payload is what upstream's conversion saves of the graph's v1alpha1 component, which is how
  upstream's generator makes it, in upstream's text (`carrier_annotations`, alpha_payload.py).
The DCD reconciler reads both forms alike (component/workload.py `component_of`): for a DCD of a
graph, its labels are the object's plus the spec's, its annotations the spec's plus the pod
template's. Nothing a pod gets depends on the form (test_stored_dcd.py pins that per example).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

import orjson
from dynamo_operator.api.conversion import V1BETA1, convert, preserve
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.hashing import digest, stamp_hash
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.graph.alpha_payload import dcd_spec_payload


def carrier_annotations(alpha_component: Mapping[str, Any] | None) -> dict[str, str]:
    """The reserved annotations upstream's generator puts on a DCD made from `alpha_component` (the
    graph's v1alpha1 component): its `nvidia.com/dcd-spec`, as upstream's conversion writes it
    (alpha_payload.py)."""
    if not isinstance(alpha_component, Mapping):
        return {}
    return {preserve.DCD_SPEC: dcd_spec_payload(alpha_component)}


# Stored forms already made, by a digest of what they are made of. Making one converts the DCD and
# encodes the graph component's payload (about 0.15 ms a DCD), and a graph is generated again at each
# step of a rollout or restart, which leaves most of its DCDs as they were (an unchanged graph is not
# generated at all: the reconciler's remembered sync). 1,024 cover the graphs being worked on at
# once. A form is kept as its JSON text (about 1 KB; as dicts it took four times that, which at 1,000
# graphs was 3 MB of the operator's memory) and parsed anew for each caller, which then owns all of it.
_MEMO: collections.OrderedDict[bytes, bytes] = collections.OrderedDict()
MEMO_SIZE = 1024


def stored_dcd(
    dcd: Mapping[str, Any], *, alpha_component: Mapping[str, Any] | None, graph_labels: Mapping[str, str]
) -> Obj:
    """`dcd` (as `desired_dcds` makes it, v1alpha1) in its stored v1beta1 form (see the module
    docstring), stamped with its content hash. `alpha_component`: the graph's service it was made
    from; `graph_labels`: the graph's `spec.labels`."""
    key = bytes.fromhex(digest([dcd, alpha_component, graph_labels]))
    found = _MEMO.get(key)
    if found is not None:
        _MEMO.move_to_end(key)
        out: Obj = orjson.loads(found)
        return out
    made = stamp_hash(_stored_dcd(dcd, alpha_component=alpha_component, graph_labels=graph_labels))
    try:
        text = orjson.dumps(made)
    except orjson.JSONEncodeError:
        # Only a manifest read offline can hold what JSON from the API server cannot (an integer
        # past 64 bits, a non-string key): such a form is made again each time, not remembered.
        return made
    _MEMO[key] = text
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return made


def _stored_dcd(
    dcd: Mapping[str, Any], *, alpha_component: Mapping[str, Any] | None, graph_labels: Mapping[str, str]
) -> Obj:
    alpha_spec: Mapping[str, Any] = dcd.get("spec") or {}
    own_annotations: Mapping[str, Any] = (alpha_component or {}).get("annotations") or {}
    out: Obj = convert(dcd, V1BETA1)
    metadata: Obj = out.setdefault("metadata", {})
    annotations: dict[str, str] = {
        k: v for k, v in (metadata.get("annotations") or {}).items() if k != preserve.DCD_SPEC
    }
    meta = (alpha_spec.get("annotations") or {}).items()
    graph_added = {k: str(v) for k, v in meta if own_annotations.get(k) != v or k == c.ANNOTATION_RESTART_AT}
    if graph_added or graph_labels:
        template_meta = _template_metadata(out["spec"])
        pod_annotations: dict[str, str] = template_meta.setdefault("annotations", {})
        for key, value in graph_added.items():
            if key == c.ANNOTATION_RESTART_AT:
                pod_annotations[key] = value
            else:
                pod_annotations.setdefault(key, value)
        own_labels: Mapping[str, Any] = (alpha_component or {}).get("labels") or {}
        pod_labels: dict[str, str] = template_meta.setdefault("labels", {})
        for key, value in graph_labels.items():
            if key not in own_labels:  # the component's own label wins, on the object and on pods
                pod_labels.setdefault(key, str(value))
        for key in ("annotations", "labels"):
            if not template_meta.get(key):
                template_meta.pop(key, None)
    carried = carrier_annotations(alpha_component)
    annotations.update(carried)
    if annotations:
        metadata["annotations"] = annotations
    else:
        metadata.pop("annotations", None)
    return out


def _template_metadata(spec: Obj) -> Obj:
    template: Obj = spec.setdefault("podTemplate", {})
    meta: Obj = template.setdefault("metadata", {})
    return meta
