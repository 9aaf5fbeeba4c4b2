"""Generation is total on what the v1beta1 schema admits: any graph or DCD our v1beta1 CRD accepts
is generated, or refused with a `GenerationError` (a condition with a reason, a Warning Event, a
terminal result). Anything else would be a reconcile error retried forever with nothing said to the
user. Objects are drawn from the CRD schemas (testsupport/schema_objects.py)."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.children import dcd_children, grove_children
from dynamo_operator.internal.dynamo.graph.view import read_graph
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testsupport.schema_objects import BETA_DCD, BETA_DGD

Json = dict[str, Any]
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLUSTERS = st.sampled_from(
    [
        Capabilities(),
        Capabilities(lws=True, grove=True),
        Capabilities(lws=True, grove=True, dra=True, gateway_inference_extension=True, istio=True),
    ]
)


def _stored(obj: Json) -> Json:
    """As the API server hands it over: in a namespace, with a uid of its own (what generation
    remembers of a graph is keyed by it) and a generation."""
    meta = {**obj["metadata"], "namespace": "ns", "uid": str(uuid.uuid4()), "generation": 1}
    return {**obj, "metadata": meta}


@SETTINGS
@given(BETA_DGD, CLUSTERS)
def test_a_v1beta1_graph_is_generated_or_refused_on_the_dcd_pathway(obj: Json, caps: Capabilities) -> None:
    ctx = GenContext(namespace="ns", capabilities=caps, dcd_api_version=consts.STORAGE_API_VERSION)
    with contextlib.suppress(GenerationError):
        view = read_graph(_stored(obj), children=[], operator_version="1.2.0")
        dcd_children(view, ctx, restart_at={}, worker_hash=worker_hash_v2(view.stored, "ns"))


@SETTINGS
@given(BETA_DGD, CLUSTERS)
def test_a_v1beta1_graph_is_generated_or_refused_on_the_grove_pathway(obj: Json, caps: Capabilities) -> None:
    with contextlib.suppress(GenerationError):
        view = read_graph(_stored(obj), children=[], operator_version="1.2.0")
        grove_children(view, GenContext(namespace="ns", capabilities=caps), restart_at={})


@SETTINGS
@given(BETA_DCD, CLUSTERS)
def test_a_v1beta1_dcd_is_generated_or_refused(obj: Json, caps: Capabilities) -> None:
    with contextlib.suppress(GenerationError):
        desired_component_objects(component_view(_stored(obj)), GenContext(namespace="ns", capabilities=caps))
