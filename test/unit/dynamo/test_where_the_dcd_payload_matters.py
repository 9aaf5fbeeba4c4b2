"""Where a generated DCD's pods depend on its `nvidia.com/dcd-spec` payload, and where the stored
v1beta1 spec alone gives them (docs/design/ARCHITECTURE.md, "Two API versions": what a reader of
`podTemplate` without the lowering must keep).

A graph's DCD carries upstream's save of its v1alpha1 component. These tests render each DCD twice,
as stored and with the payload taken off, and compare every object its reconciler would write.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from compat.goldens import Example
from dynamo_operator.api.conversion import preserve
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds
from unit.dynamo.dynamo_testlib import dgd, service
from unit.dynamo.upstream_examples import EXAMPLES, example_dcds

Obj = dict[str, Any]
CTX = GenContext(namespace="ns1", dcd_api_version="nvidia.com/v1beta1", capabilities=Capabilities(lws=True))


def _both_ways(dcd: Obj) -> tuple[object, object]:
    """(what the DCD's reconciler writes, the same with the payload taken off); a refusal as text."""
    out: list[object] = []
    for payload in (True, False):
        obj = copy.deepcopy(dcd)
        obj["metadata"]["uid"] = "dcd-uid"
        if not payload:
            obj["metadata"].get("annotations", {}).pop(preserve.DCD_SPEC, None)
        try:
            out.append(desired_component_objects(obj, CTX))
        except GenerationError as err:
            out.append(str(err))
    return out[0], out[1]


@pytest.mark.parametrize("example", EXAMPLES)
def test_no_examples_dcd_needs_its_payload_for_what_is_written(example: Example) -> None:
    for dcd in example_dcds(example, CTX):
        with_payload, without = _both_ways(dcd)
        assert with_payload == without, dcd["metadata"]["name"]


NEEDS_THE_PAYLOAD = {
    "same-env-name-flat-and-main": dict(
        envs=[{"name": "A", "value": "flat"}],
        extraPodSpec={"mainContainer": {"env": [{"name": "A", "value": "main"}]}},
    ),
    "envFromSecret-and-main-envFrom": dict(
        envFromSecret="s1", extraPodSpec={"mainContainer": {"envFrom": [{"secretRef": {"name": "s2"}}]}}
    ),
    "resources-flat-and-main": dict(
        resources={"limits": {"cpu": "2"}},
        extraPodSpec={"mainContainer": {"resources": {"limits": {"cpu": "3"}}}},
    ),
    "main-probe-alone": dict(extraPodSpec={"mainContainer": {"livenessProbe": {"periodSeconds": 30}}}),
    "component-labels-and-annotations": dict(labels={"team": "a"}, annotations={"example.com/x": "y"}),
}
NEEDS_NO_PAYLOAD = {
    "envs-flat-and-main-apart": dict(
        envs=[{"name": "A", "value": "flat"}],
        extraPodSpec={"mainContainer": {"env": [{"name": "B", "value": "main"}]}},
    ),
    "flat-probe": dict(livenessProbe={"httpGet": {"path": "/live", "port": 9090}}),
    "autoscaling": dict(autoscaling={"enabled": True, "minReplicas": 1, "maxReplicas": 3}),
}


@pytest.mark.parametrize("fields", NEEDS_THE_PAYLOAD.values(), ids=NEEDS_THE_PAYLOAD.keys())
def test_a_v1alpha1_worker_of_this_shape_needs_its_payload(fields: Obj) -> None:
    [dcd] = desired_dcds(dgd({"W": service("worker", **fields)}), CTX)
    with_payload, without = _both_ways(dcd)
    assert with_payload != without


@pytest.mark.parametrize("fields", NEEDS_NO_PAYLOAD.values(), ids=NEEDS_NO_PAYLOAD.keys())
def test_a_v1alpha1_worker_of_this_shape_needs_no_payload(fields: Obj) -> None:
    [dcd] = desired_dcds(dgd({"W": service("worker", **fields)}), CTX)
    with_payload, without = _both_ways(dcd)
    assert with_payload == without
