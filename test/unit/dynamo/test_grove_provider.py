"""The workload provider recorded on a graph (internal/dynamo/grove/provider.py) decides its pathway
once set (podcliqueset.py `takes_grove`): a flag or a CRD that changes later never moves a graph;
only its owner's `nvidia.com/enable-grove` does."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.grove.podcliqueset import takes_grove
from dynamo_operator.internal.dynamo.grove.provider import (
    InvalidWorkloadProviderError,
    provider_of,
    recorded_provider,
)

GROVE = GenContext(namespace="ns", capabilities=Capabilities(grove=True))
NO_GROVE = GenContext(namespace="ns", capabilities=Capabilities())


def _graph(provider: str | None = None, enable: str | None = None) -> dict[str, Any]:
    annotations = {}
    if provider is not None:
        annotations[consts.ANNOTATION_WORKLOAD_PROVIDER] = provider
    if enable is not None:
        annotations[consts.ANNOTATION_ENABLE_GROVE] = enable
    return {"metadata": {"name": "g", "namespace": "ns", "annotations": annotations}, "spec": {}}


@pytest.mark.parametrize(
    ("provider", "enable", "ctx", "runs", "expected"),
    [
        # recorded grove: stays, whatever the operator can use now or what runs
        pytest.param("grove", None, GROVE, "pcs", True, id="grove-stays"),
        pytest.param("grove", None, NO_GROVE, "nothing", True, id="grove-gone-does-not-fall-back"),
        pytest.param("grove", "auto", NO_GROVE, "nothing", True, id="grove-any-other-ask-stays"),
        pytest.param("grove", "false", GROVE, "pcs", False, id="grove-owner-opts-out"),
        # recorded component: stays, Grove appearing changes nothing
        pytest.param("component", None, GROVE, "dcds", False, id="component-grove-appears"),
        pytest.param("component", None, GROVE, "nothing", False, id="component-without-dcds-yet"),
        pytest.param("component", "true", GROVE, "dcds", True, id="component-owner-asks-for-grove"),
        pytest.param("component", "true", NO_GROVE, "dcds", False, id="component-ask-needs-grove"),
        # nothing recorded yet: inferred as before
        pytest.param(None, None, GROVE, "nothing", True, id="new-graph-with-grove"),
        pytest.param(None, None, NO_GROVE, "nothing", False, id="new-graph-without-grove"),
        pytest.param(None, None, GROVE, "dcds", False, id="legacy-dcd-graph"),
        pytest.param(None, None, GROVE, "pcs", True, id="legacy-grove-graph"),
    ],
)
def test_the_recorded_provider_decides_the_pathway(
    provider: str | None, enable: str | None, ctx: GenContext, runs: str, expected: bool
) -> None:
    """`runs`: what the graph's children are now (DCDs, a PodCliqueSet, nothing)."""
    graph = _graph(provider, enable)
    got = takes_grove(graph, ctx, has_dcds=runs == "dcds", has_pod_clique_set=runs == "pcs")
    assert got is expected


def test_an_unknown_provider_is_refused_with_what_is_supported() -> None:
    with pytest.raises(InvalidWorkloadProviderError, match="supported: component, grove") as err:
        recorded_provider(_graph("lws"))
    assert err.value.reason == "InvalidWorkloadProvider"


def test_an_unknown_provider_refuses_the_pathway_choice() -> None:
    with pytest.raises(InvalidWorkloadProviderError):
        takes_grove(_graph("Grove"), GROVE, has_dcds=False, has_pod_clique_set=False)


def test_the_recorded_values_are_upstreams() -> None:
    assert (provider_of(True), provider_of(False)) == ("grove", "component")
    assert recorded_provider(_graph()) is None
