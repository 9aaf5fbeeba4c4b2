"""Which optional APIs a set of CRDs (or a discovery answer) makes usable: pure functions."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.optional_apis import (
    OPTIONAL_APIS,
    capabilities_from_crds,
    crd_serves,
    difference,
    discovery_serves,
    with_answers,
)
from unit.controllers.optional_apis_testlib import crd

BY_NAME = {api.name: api for api in OPTIONAL_APIS}
LWS = BY_NAME["lws"]


def test_every_api_names_a_distinct_crd_and_a_capability() -> None:
    names = [api.crd_name for api in OPTIONAL_APIS]
    assert len(set(names)) == len(names)
    assert {api.name for api in OPTIONAL_APIS} == set(Capabilities.__dataclass_fields__)
    assert LWS.crd_name == "leaderworkersets.leaderworkerset.x-k8s.io"


@pytest.mark.parametrize(
    ("obj", "serves"),
    [
        pytest.param(crd(LWS), True, id="established-serving-the-version"),
        pytest.param(None, False, id="no-crd"),
        pytest.param(crd(LWS, established=None), False, id="not-established-yet"),
        pytest.param(crd(LWS, established="False"), False, id="established-false"),
        pytest.param(crd(LWS, deleting=True), False, id="being-deleted"),
        pytest.param(crd(LWS, versions=(("v1", False),)), False, id="version-not-served"),
        pytest.param(crd(LWS, versions=(("v1beta1", True),)), False, id="only-another-version"),
        pytest.param(crd(LWS, versions=(("v1beta1", True), ("v1", True))), True, id="among-versions"),
        pytest.param(crd(BY_NAME["istio"]), False, id="another-apis-crd"),
    ],
)
def test_crd_serves(obj: dict[str, Any] | None, serves: bool) -> None:
    assert crd_serves(LWS, obj) is serves


def test_inference_pool_needs_the_v1_api_the_operator_writes() -> None:
    """An InferencePool CRD that serves only an older version does not make v1 writable."""
    pools = BY_NAME["gateway_inference_extension"]
    assert crd_serves(pools, crd(pools))
    assert not crd_serves(pools, crd(pools, versions=(("v1alpha2", True),)))


def test_capabilities_from_a_crd_set() -> None:
    crds = {
        c["metadata"]["name"]: c
        for c in (
            crd(LWS),
            crd(BY_NAME["volcano"], established=None),
            crd(BY_NAME["istio"]),
            crd(BY_NAME["gateway_inference_extension"], deleting=True),
        )
    }
    assert capabilities_from_crds(crds) == Capabilities(lws=True, istio=True)
    assert capabilities_from_crds({}) == Capabilities()


@pytest.mark.parametrize(
    ("answer", "serves"),
    [
        pytest.param([{"name": "leaderworkersets"}, {"name": "leaderworkersets/status"}], True, id="listed"),
        pytest.param([{"name": "leaderworkersets/status"}], False, id="subresource-only"),
        pytest.param([], False, id="empty-group-version"),
        pytest.param(None, False, id="404"),
    ],
)
def test_discovery_serves(answer: list[dict[str, Any]] | None, serves: bool) -> None:
    assert discovery_serves(LWS, answer) is serves


def test_unknown_answers_keep_the_previous_value() -> None:
    base = Capabilities(lws=True, istio=False)
    assert with_answers(base, {"lws": None, "istio": None}) == base
    assert with_answers(base, {"lws": False, "istio": True}) == Capabilities(istio=True)


def test_difference_names_what_appeared_and_vanished() -> None:
    assert difference(Capabilities(lws=True), Capabilities(istio=True)) == (["istio"], ["lws"])
    assert difference(Capabilities(lws=True), Capabilities(lws=True)) == ([], [])


def test_dra_is_a_built_in_api_answered_by_discovery_alone() -> None:
    """Dynamic Resource Allocation is served by the API server itself (resource.k8s.io/v1, the
    version whose ResourceClaimTemplates the operator writes): no CRD can say it is served."""
    dra = BY_NAME["dra"]
    assert dra.builtin and dra.group_version == "resource.k8s.io/v1"
    assert discovery_serves(dra, [{"name": "resourceclaimtemplates"}, {"name": "resourceclaims"}])
    assert not discovery_serves(dra, None)
    assert capabilities_from_crds({dra.crd_name: crd(dra)}) == Capabilities()
