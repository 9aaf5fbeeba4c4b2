"""A graph's components as stored (v1beta1 `spec.components[]`): the form the graph-level objects
(scaling adapters, model Services, the namespace's planner and EPP accounts, the wait-for-leader
script, the EPP's config and InferencePool) are generated from. Pure.

The reconciler hands generation the graph as the cache holds it (`GraphView.stored`). A graph given
in v1alpha1, as `render` reads a manifest and many tests write one, is raised to that form by the
webhook's own conversion (`raised`), so the readers here know one form only. Their refusals still
name v1alpha1 paths, as all of generation's do; the reconciler and `render` put them in the terms of
the graph's own version (common/stored_terms.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, ConversionError, convert
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph, StoredComponent, StoredGraph


def raised(dgd: Graph | StoredGraph | Mapping[str, object]) -> StoredGraph:
    """`dgd` as stored: itself when it is v1beta1 already, else read as v1alpha1 and converted (a
    copy). A graph that names no version is told by its spec (`services` is v1alpha1's). A graph
    v1beta1 cannot hold is refused as a spec error, with the conversion's reason."""
    version = dgd.get("apiVersion")
    spec = dgd.get("spec")
    if version == V1BETA1 or (version is None and not (isinstance(spec, Mapping) and "services" in spec)):
        return cast(StoredGraph, dgd)
    try:
        return cast(StoredGraph, convert({**dgd, "apiVersion": V1ALPHA1}, V1BETA1))
    except ConversionError as err:
        raise GenerationError("spec", f"cannot be read as v1beta1: {err}") from err


def components_of(stored: StoredGraph) -> list[StoredComponent]:
    """`spec.components` in name order (entries without a name left out: the CRD requires one)."""
    components = (stored.get("spec") or {}).get("components") or []
    return sorted((x for x in components if x.get("name")), key=lambda x: x["name"])


def has_component_of_type(stored: StoredGraph, component_type: str) -> bool:
    """Some component of the graph is of `component_type` (v1beta1's `type`: a disaggregated worker
    is `prefill` or `decode`, not `worker`)."""
    return any(x.get("type") == component_type for x in components_of(stored))


def graph_name(stored: StoredGraph) -> str:
    """`metadata.name`, which every generated object is named after."""
    name = (stored.get("metadata") or {}).get("name")
    if not name:
        raise GenerationError("metadata.name", "required")
    return str(name)
