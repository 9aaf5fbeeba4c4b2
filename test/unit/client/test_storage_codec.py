"""The codec the operator's client speaks Dynamo's converted kinds with (internal/stored_version.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.stored_version import (
    CONVERTED,
    StorageCodec,
    older,
    speaking_v1alpha1,
    storage_codecs,
)
from hypothesis import given
from hypothesis import strategies as st
from testsupport.schema_objects import BETA_DCD, BETA_DGD, SETTINGS


def graph() -> dict[str, Any]:
    return {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "n"},
        "spec": {"services": {"Worker": {"componentType": "worker", "replicas": 2}}},
    }


def test_the_older_version_is_the_same_collection_at_v1alpha1() -> None:
    for kind in CONVERTED:
        alpha = older(kind)
        assert kind.version == "v1beta1"
        assert (alpha.group, alpha.plural, alpha.kind, alpha.version) == (
            kind.group,
            kind.plural,
            kind.kind,
            "v1alpha1",
        )


def test_encode_then_decode_gives_back_the_operators_object() -> None:
    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    wire = codec.encode(graph())
    assert wire["apiVersion"] == V1BETA1
    assert wire["spec"]["components"] == [{"name": "Worker", "type": "worker", "replicas": 2}]
    assert codec.decode(wire) == graph()


def test_an_object_that_cannot_be_converted_is_handed_on_as_read() -> None:
    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    odd = {"apiVersion": V1BETA1, "kind": "NotDynamo", "metadata": {"name": "x"}}
    assert codec.decode(odd) == odd


# The CRDs this release installs, by plural: every converted kind's stores v1beta1.
THIS_RELEASE = frozenset(view.plural for view in CONVERTED)


def test_this_releases_crds_need_no_codec() -> None:
    """Every converted kind is read as stored, and this release's CRDs store v1beta1."""
    assert storage_codecs(THIS_RELEASE) == {}


def test_kinds_read_as_stored_get_a_codec_where_an_older_release_stored_v1alpha1() -> None:
    assert set(storage_codecs(frozenset())) == {kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR}
    assert set(storage_codecs(frozenset({"dynamographdeployments", "dynamographdeploymentrequests"}))) == {
        kinds.DCD,
        kinds.DGDSA,
    }


@pytest.mark.parametrize("kind", [kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR], ids=lambda r: r.kind)
def test_a_kind_read_as_stored_needs_no_codec_on_this_releases_crds(kind: Resource) -> None:
    assert kind.api_version == V1BETA1
    assert kind not in storage_codecs(THIS_RELEASE)


def test_an_older_releases_component_crd_is_spoken_in_v1alpha1_and_read_as_v1beta1() -> None:
    codec = storage_codecs(frozenset())[kinds.DCD]
    assert codec.wire == older(kinds.DCD)
    alpha = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w", "uid": "u", "generation": 1},
        "spec": {"componentType": "worker", "replicas": 2},
        "status": {
            "service": {
                "componentKind": "Deployment",
                "componentName": "w",
                "replicas": 2,
                "updatedReplicas": 2,
            }
        },
    }
    read = codec.decode(copy.deepcopy(alpha))
    assert (read["apiVersion"], read["spec"]["type"], read["status"]["component"]["componentNames"]) == (
        V1BETA1,
        "worker",
        ["w"],
    )
    assert codec.encode(read)["spec"] == alpha["spec"]


def test_an_older_releases_adapter_crd_is_spoken_in_v1alpha1_and_read_as_v1beta1() -> None:
    """An adapter CRD that stores v1alpha1 (an older release's, before its migration): the wire is
    v1alpha1, so no request of the operator's needs the conversion webhook."""
    codec = storage_codecs(frozenset())[kinds.DGDSA]
    assert codec.wire == older(kinds.DGDSA)
    on_wire = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "a", "namespace": "n", "uid": "u", "generation": 1},
        "spec": {"replicas": 2, "dgdRef": {"name": "g", "serviceName": "Worker"}},
    }
    read = codec.decode(copy.deepcopy(on_wire))
    assert (read["apiVersion"], read["spec"]["dgdRef"]) == (V1BETA1, {"name": "g", "componentName": "Worker"})
    assert codec.encode(read) == {**on_wire, "metadata": read["metadata"]}


def test_dynamo_model_is_never_converted() -> None:
    assert kinds.DYNAMO_MODEL not in storage_codecs(frozenset())


def test_a_tool_speaking_v1alpha1_converts_in_process() -> None:
    [(view, codec)] = speaking_v1alpha1(kinds.DGD).items()
    assert (view, codec.wire, codec.view) == (kinds.DGD, kinds.DGD, older(kinds.DGD))
    assert codec.encode(graph())["apiVersion"] == V1BETA1


def _stored_graph(generation: int, *, state: str = "pending") -> dict[str, Any]:
    wire = StorageCodec(older(kinds.DGD), kinds.DGD).encode(graph())
    wire["metadata"].update({"uid": "u-1", "generation": generation})
    wire["metadata"].setdefault("annotations", {})["nvidia.com/dgd-spec"] = (
        '{"spec":{"services":{"Worker":{"dynamoNamespace":"n-g"}}},"version":1}'
    )
    wire["status"] = {"state": state, "services": {}}
    return wire


def test_an_event_that_leaves_the_spec_alone_reads_as_a_full_conversion_would() -> None:
    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    codec.decode(_stored_graph(1))
    later = _stored_graph(1, state="successful")
    # decode takes the response over (the client parsed it for this call alone): expected first.
    expected = convert(later, V1ALPHA1)
    assert codec.decode(later) == expected


def test_a_spec_change_is_converted_anew() -> None:
    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    codec.decode(_stored_graph(1))
    changed = _stored_graph(2)
    changed["spec"]["components"][0]["replicas"] = 5
    assert codec.decode(changed)["spec"]["services"]["Worker"]["replicas"] == 5


def test_a_change_held_in_the_reserved_annotation_is_converted_anew() -> None:
    """v1alpha1-only fields change without a generation bump: the annotation is part of the key."""
    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    codec.decode(_stored_graph(1))
    renamed = _stored_graph(1)
    renamed["metadata"]["annotations"]["nvidia.com/dgd-spec"] = (
        '{"spec":{"services":{"Worker":{"dynamoNamespace":"other"}}},"version":1}'
    )
    assert codec.decode(renamed)["spec"]["services"]["Worker"]["dynamoNamespace"] == "other"


@SETTINGS
@given(st.one_of(BETA_DGD, BETA_DCD))
def test_a_remembered_spec_decodes_as_a_full_conversion_would(obj: dict[str, Any]) -> None:
    # Read as v1alpha1: graphs and DCDs are read as stored now, but the codec is the same for any kind.
    kind = kinds.DGD if obj["kind"] == "DynamoGraphDeployment" else kinds.DCD
    codec = StorageCodec(older(kind), kind)
    obj = {**obj, "metadata": {**obj.get("metadata", {}), "uid": "u-1", "generation": 3}}
    expected = convert(obj, V1ALPHA1)
    # decode takes each response over, as the client hands it a freshly parsed one: a copy each time.
    first = codec.decode(copy.deepcopy(obj))
    assert codec.decode(copy.deepcopy(obj)) == first == expected


def test_an_event_that_leaves_the_spec_alone_does_not_parse_the_spec_payload_again(
    monkeypatch: Any,
) -> None:
    """Most events of an object are its status's: the remembered spec stands for the payload too."""
    from dynamo_operator.api.conversion import preserve

    codec = StorageCodec(older(kinds.DGD), kinds.DGD)
    codec.decode(_stored_graph(1))
    parsed: list[str] = []
    real = preserve.decode_spec

    def counting(raw: str, key: str = "spec payload") -> dict[str, Any] | None:
        if raw:
            parsed.append(raw)
        return real(raw, key)

    monkeypatch.setattr(preserve, "decode_spec", counting)
    out = codec.decode(_stored_graph(1, state="successful"))
    assert parsed == []
    assert out["status"]["state"] == "successful"
