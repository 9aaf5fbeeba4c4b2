"""A graph read as stored (v1beta1) is lowered to the v1alpha1 form generation reads: its spec
converted by the webhook's conversion, once per change of it; its metadata always the stored one's."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, convert, preserve
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph import lowering
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from hypothesis import given
from testsupport.dcd_view import stored_graph
from testsupport.schema_objects import BETA_DGD, SETTINGS


def _graph(uid: str = "u-1", generation: int = 1, replicas: int = 2) -> dict[str, Any]:
    return stored_graph(
        {
            "metadata": {"name": "g", "namespace": "ns", "uid": uid, "generation": generation},
            "spec": {
                "pvcs": [{"name": "cache", "create": False}],  # v1alpha1 only: in the reserved annotation
                "services": {"Worker": {"componentType": "worker", "replicas": replicas}},
            },
            "status": {"state": "pending", "components": {}},
        }
    )


@SETTINGS
@given(BETA_DGD)
def test_the_lowered_spec_is_the_conversions(obj: dict[str, Any]) -> None:
    obj = {**obj, "metadata": {**obj.get("metadata", {}), "uid": "u-prop", "generation": 1}}
    lowering.forget("u-prop")
    expected = convert({k: v for k, v in obj.items() if k != "status"}, V1ALPHA1)
    out = lowered_graph(obj)
    assert out["apiVersion"] == V1ALPHA1
    assert out["spec"] == expected["spec"]
    assert out["metadata"] == expected["metadata"]


def test_the_status_is_not_carried() -> None:
    assert "status" not in lowered_graph(_graph(uid="u-status"))


def test_a_v1alpha1_only_field_is_read_from_the_reserved_annotation() -> None:
    assert lowered_graph(_graph(uid="u-pvcs"))["spec"]["pvcs"] == [{"name": "cache", "create": False}]


def test_a_status_or_metadata_change_converts_nothing() -> None:
    first = lowered_graph(_graph(uid="u-same"))
    later = _graph(uid="u-same")
    later["status"] = {"state": "successful"}
    later["metadata"]["labels"] = {"team": "a"}
    again = lowered_graph(later)
    assert again["spec"] is first["spec"]  # remembered, not converted again
    assert again["metadata"]["labels"] == {"team": "a"}  # the metadata is always the stored object's


def test_a_new_generation_is_converted_anew() -> None:
    lowered_graph(_graph(uid="u-gen", generation=1, replicas=2))
    out = lowered_graph(_graph(uid="u-gen", generation=2, replicas=5))
    assert out["spec"]["services"]["Worker"]["replicas"] == 5


def test_a_change_of_the_reserved_annotation_alone_is_converted_anew() -> None:
    lowered_graph(_graph(uid="u-payload"))
    edited = _graph(uid="u-payload")
    annotations = edited["metadata"]["annotations"]
    saved = preserve.decode_spec(annotations[preserve.DGD_SPEC])
    assert saved is not None
    saved["pvcs"] = [{"name": "other", "create": True}]
    annotations[preserve.DGD_SPEC] = preserve.encode_spec(saved)
    assert lowered_graph(edited)["spec"]["pvcs"] == [{"name": "other", "create": True}]


def test_the_cached_object_is_left_as_it_was() -> None:
    stored = _graph(uid="u-untouched")
    before = copy.deepcopy(stored)
    lowered_graph(stored)
    lowered_graph(stored)
    assert stored == before


def test_a_graph_v1alpha1_cannot_hold_is_a_spec_error() -> None:
    twins = _graph(uid="u-twins")
    twins["spec"]["components"] = [{"name": "A", "type": "worker"}, {"name": "A", "type": "worker"}]
    with pytest.raises(GenerationError, match="cannot be read as v1alpha1"):
        lowered_graph(twins)


def test_a_v1alpha1_graph_is_handed_back_as_it_is() -> None:
    alpha = {"apiVersion": V1ALPHA1, "kind": "DynamoGraphDeployment", "metadata": {"name": "g"}, "spec": {}}
    assert lowered_graph(alpha) is alpha
