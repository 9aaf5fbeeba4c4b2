"""The two annotations the operator writes on a graph itself. Pure.

`nvidia.com/dynamo-operator-origin-version`: the version of the operator that first deployed the
graph. Upstream stamps it in a defaulting webhook at creation; this operator has no webhook, so the
graph reconciler stamps it at its first look, before any child exists. Its one effect: vLLM multinode
workers default to multiprocessing (`mp`) when it is a semantic version >= 1.0.0, and to Ray otherwise
(backends.vllm_executor) — so a graph keeps the executor it started with across operator upgrades.
The value comes from the cluster, never from memory:
- the graph carries it: kept (a user may also set it, or pin the executor with
  `nvidia.com/vllm-distributed-executor-backend`);
- else a DCD of the graph carries it (the graph's annotation was wiped): restored from there;
- else the graph has DCDs without it: it was deployed before stamping existed and stays unstamped,
  as upstream treats such graphs (Ray), so taking it over changes no pod;
- else (a new graph): the operator's `--operator-version`.

`nvidia.com/current-worker-hash`: the worker hash of the worker pods serving now (rollout/workers.py): the new
hash once no older worker DCD is kept, the old one while it is. Written for people and tools that
read upstream's annotation; the operator itself never reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import (
    Graph,
    StoredGraph,
    component_view,
    graph_view,
    json_object,
    stored_graph_view,
)
from dynamo_operator.internal.dynamo.common.stored_component import pod_annotation
from dynamo_operator.internal.jsontree import copy_tree


def _annotations(obj: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    node: Any = obj
    for key in path:
        node = (node or {}).get(key)
    return node or {}


def origin_version(
    dgd: Mapping[str, Any], children: Sequence[Mapping[str, Any]], operator_version: str
) -> str | None:
    """The origin version the graph carries or must carry (see the module docstring); None: none."""
    current = _annotations(dgd, "metadata", "annotations").get(c.ANNOTATION_ORIGIN_VERSION)
    if current:
        return str(current)
    for dcd in children:
        # In the DCD's pod template (stored_dcd.py), or in the `spec.annotations` of one an older
        # release wrote as v1alpha1. Missing it here while the graph's own stamp is not yet seen would
        # read the graph as older than annotations, change its worker hash and roll it.
        value = pod_annotation(component_view(dcd), c.ANNOTATION_ORIGIN_VERSION)
        if value:
            return value
    if children:
        return None
    return operator_version or None


def with_origin_version(dgd: Mapping[str, object], version: str | None) -> Graph:
    """`dgd` as generation must see it, as its view: carrying `version` (a copy; `dgd` itself is left
    alone)."""
    return graph_view(_carrying(dgd, version))


def stored_with_origin_version(dgd: Mapping[str, object], version: str | None) -> StoredGraph:
    """The same for a graph as stored (v1beta1): what the v2 worker hash reads."""
    return stored_graph_view(_carrying(dgd, version))


def _carrying(dgd: Mapping[str, object], version: str | None) -> dict[str, object]:
    """A shallow copy of `dgd` carrying `version` (its metadata copied when it changes)."""
    out = dict(dgd)
    meta = json_object(dgd.get("metadata"))
    if version and json_object(meta.get("annotations")).get(c.ANNOTATION_ORIGIN_VERSION) != version:
        annotations = {**json_object(meta.get("annotations")), c.ANNOTATION_ORIGIN_VERSION: version}
        out["metadata"] = {**copy_tree(dict(meta)), "annotations": annotations}
    return out


def annotations_to_write(
    current: Mapping[str, str], *, origin: str | None, serving_hash: str | None
) -> dict[str, str]:
    """The annotation values the graph lacks or carries differently (empty: nothing to write)."""
    wanted = {c.ANNOTATION_ORIGIN_VERSION: origin, c.ANNOTATION_CURRENT_WORKER_HASH: serving_hash}
    return {key: value for key, value in wanted.items() if value and current.get(key) != value}
