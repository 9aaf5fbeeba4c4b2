"""Property tests: any object of either version comes back unchanged from a trip through the other.

Objects are drawn from our CRD schemas of each version (testsupport/schema_objects.py).
"""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, ConversionError, convert, preserve, sparse
from hypothesis import given
from hypothesis import strategies as st
from testsupport.schema_objects import ALPHA_DCD, ALPHA_DGD, BETA_DCD, BETA_DGD, SCHEMAS, SETTINGS, Json


@SETTINGS
@given(ALPHA_DGD)
def test_v1alpha1_graph_round_trips_through_v1beta1(obj: Json) -> None:
    assert convert(convert(obj, V1BETA1), V1ALPHA1) == obj


@SETTINGS
@given(BETA_DGD)
def test_v1beta1_graph_round_trips_through_v1alpha1(obj: Json) -> None:
    assert convert(convert(obj, V1ALPHA1), V1BETA1) == obj


@SETTINGS
@given(ALPHA_DCD)
def test_v1alpha1_component_round_trips_through_v1beta1(obj: Json) -> None:
    assert convert(convert(obj, V1BETA1), V1ALPHA1) == obj


@SETTINGS
@given(BETA_DCD)
def test_v1beta1_component_round_trips_through_v1alpha1(obj: Json) -> None:
    assert convert(convert(obj, V1ALPHA1), V1BETA1) == obj


@SETTINGS
@given(ALPHA_DGD)
def test_conversion_leaves_its_input_unchanged(obj: Json) -> None:
    before = copy.deepcopy(obj)
    convert(obj, V1BETA1)
    assert obj == before


@SETTINGS
@given(
    BETA_DGD, st.sampled_from(["{", "[1,2]", '{"spec": 3}', "null", '{"version":1,"spec":{"services":[]}}'])
)
def test_damaged_payload_never_fails_a_conversion(obj: Json, damage: str) -> None:
    damaged = copy.deepcopy(obj)
    damaged.setdefault("metadata", {}).setdefault("annotations", {})[preserve.DGD_SPEC] = damage
    converted = convert(damaged, V1ALPHA1)
    assert set(converted["spec"].get("services", {})) == {
        c["name"] for c in obj["spec"].get("components", [])
    }


@SETTINGS
@given(BETA_DGD)
def test_v1alpha1_edit_wins_over_a_stale_payload(obj: Json) -> None:
    """Edit the v1alpha1 view (replicas of every service), convert back: the edit is what v1beta1 shows."""
    alpha = convert(obj, V1ALPHA1)
    for service in alpha["spec"].get("services", {}).values():
        service["replicas"] = 7
    back = convert(alpha, V1BETA1)
    assert all(c.get("replicas") == 7 for c in back["spec"].get("components", []))


def test_duplicate_component_names_are_refused() -> None:
    obj = {
        "apiVersion": V1BETA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g"},
        "spec": {"components": [{"name": "a"}, {"name": "a"}]},
    }
    with pytest.raises(ConversionError, match="duplicate"):
        convert(obj, V1ALPHA1)


def _without_reserved(obj: Json) -> Json:
    out = copy.deepcopy(obj)
    annotations = out.get("metadata", {}).get("annotations", {})
    for key in [k for k in annotations if k.startswith(("nvidia.com/dgd-", "nvidia.com/dcd-"))]:
        del annotations[key]
    if "annotations" in out.get("metadata", {}) and not annotations:
        del out["metadata"]["annotations"]
    return out


def _edit_hub_components(obj: Json) -> None:
    """An edit made in v1beta1 that touches nested objects and lists of every component."""
    for component in obj["spec"].get("components", []):
        component["replicas"] = 7
        containers = component.get("podTemplate", {}).get("spec", {}).get("containers", [])
        for container in containers:
            container.setdefault("env", []).append({"name": "EDITED", "value": "yes"})
            container.pop("image", None)


@SETTINGS
@given(ALPHA_DGD)
def test_stale_payload_never_overrides_an_edit_in_the_other_version(obj: Json) -> None:
    """v1alpha1 -> v1beta1, edit the v1beta1 object keeping its payload, -> v1alpha1 -> v1beta1 again:
    the second v1beta1 view is the edited one (upstream's mutation fuzz, CONVERSION.md)."""
    hub = convert(obj, V1BETA1)
    _edit_hub_components(hub)
    again = convert(convert(hub, V1ALPHA1), V1BETA1)
    schema = SCHEMAS[V1BETA1]
    assert sparse.normalize(_without_reserved(again), schema) == sparse.normalize(
        _without_reserved(hub), schema
    )


def _status_alone(obj: Json) -> Json:
    return {k: obj[k] for k in ("apiVersion", "kind", "metadata", "status") if k in obj}


@SETTINGS
@given(st.one_of(ALPHA_DGD, ALPHA_DCD))
def test_a_status_converts_the_same_without_its_spec(obj: Json) -> None:
    """The operator's status writes convert the status alone (internal/apply/status.py)."""
    assert convert(_status_alone(obj), V1BETA1).get("status") == convert(obj, V1BETA1).get("status")
