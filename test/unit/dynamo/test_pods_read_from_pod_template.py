"""A DCD's pods are read from its v1beta1 `podTemplate` as stored (pod/user_pod.py), and give what
its v1alpha1 form gives: on every DCD of upstream's examples of both eras, on DCDs drawn from the
v1beta1 schema, and on the DCDs of graphs drawn from the v1alpha1 schema.

Only a component first written in v1alpha1 with a pod field in both of v1alpha1's places (or a probe
in the main container alone) is read in v1alpha1, which keeps the pods it had (`layered_apart`).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from compat.goldens import SET_2A6DA14C, SET_DF888F68, Example, discover
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.component import workload
from dynamo_operator.internal.dynamo.component.workload import component_of, desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.pod.user_pod import layered_apart, stored_user_pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testsupport.schema_objects import (
    ALPHA_DGD,
    BETA_DCD,
    LABEL,
    QUANTITY,
    SETTINGS,
    container,
    env_var,
    pod_spec,
)
from unit.dynamo.dynamo_testlib import dgd, service
from unit.dynamo.upstream_examples import EXAMPLES, example_dcds

Obj = dict[str, Any]
CTX = GenContext(
    namespace="ns1",
    dcd_api_version=V1BETA1,
    capabilities=Capabilities(lws=True, dra=True, gateway_inference_extension=True, istio=True),
    docker_secrets={"nvcr.io": ("ngc",)},
    infrastructure_env={"NATS_SERVER": "nats://nats:4222"},
)


@contextmanager
def _read_in_v1alpha1() -> Iterator[None]:
    """Every DCD's pods read from its v1alpha1 form, as they all were before."""
    with mock.patch.object(workload, "layered_apart", lambda spec: "read in v1alpha1"):
        yield


REFUSED = "refused"


def _written(dcd: Obj) -> object:
    """What the DCD's reconciler writes for it, or that it is refused (each reading names the field
    where it read it: `envFromSecret` in v1alpha1 is an `envFrom` entry of the main container in
    v1beta1)."""
    try:
        return desired_component_objects(component_view(copy.deepcopy(dcd)), CTX)
    except GenerationError:
        return REFUSED


def _both_readings(dcd: Obj) -> tuple[object, object]:
    native = _written(dcd)
    with _read_in_v1alpha1():
        alpha = _written(dcd)
    return native, alpha


def _stored(obj: Obj) -> Obj:
    meta = {**obj["metadata"], "namespace": "ns1", "uid": str(uuid.uuid4()), "generation": 1}
    return {**obj, "metadata": meta}


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_examples_dcd_writes_the_same_read_from_its_pod_template(example: Example) -> None:
    for dcd in example_dcds(example, CTX):
        native, alpha = _both_readings(dcd)
        assert native == alpha, dcd["metadata"]["name"]


def test_every_dcd_of_upstreams_v1beta1_examples_is_read_from_its_pod_template() -> None:
    for example in discover(("golden",), SET_2A6DA14C):
        for dcd in example_dcds(example, CTX):
            assert layered_apart(convert(dcd, V1ALPHA1)["spec"]) is None, dcd["metadata"]["name"]


def test_almost_every_dcd_of_upstreams_v1alpha1_examples_is_read_from_its_pod_template() -> None:
    """Of about 100, the few whose manifest gives the main container resources or mounts, or a
    frontendSidecar block."""
    readings = [
        layered_apart(convert(dcd, V1ALPHA1)["spec"]) is None
        for example in discover(("golden",), SET_DF888F68)
        for dcd in example_dcds(example, CTX)
    ]
    assert readings.count(True) > 5 * readings.count(False)


@SETTINGS
@given(BETA_DCD)
def test_a_v1beta1_dcd_drawn_from_the_schema_writes_the_same_read_from_its_pod_template(obj: Obj) -> None:
    native, alpha = _both_readings(_stored(obj))
    assert native == alpha


def _each_dcd_keeps_its_pods(alpha_graph: Obj) -> None:
    """The DCDs of a graph written in v1alpha1 and stored as v1beta1 write the same both ways."""
    try:
        dcds = desired_dcds(lowered_graph(convert(alpha_graph, V1BETA1)), CTX)
    except GenerationError:
        return
    for dcd in dcds:
        dcd["metadata"]["uid"] = "dcd-uid"
        native, alpha = _both_readings(dcd)
        assert native == alpha, dcd["metadata"]["name"]


@SETTINGS
@given(ALPHA_DGD)
def test_the_dcds_of_a_v1alpha1_graph_drawn_from_the_schema_keep_their_pods(obj: Obj) -> None:
    _each_dcd_keeps_its_pods(_stored(obj))


# --- pods drawn field by field: what the builder reads, mostly valid, so that most are generated ---

POD_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROBE = st.fixed_dictionaries(
    {"httpGet": st.fixed_dictionaries({"path": st.just("/health"), "port": st.just(9090)})},
    optional={"periodSeconds": st.integers(1, 30)},
)
SIDECAR_NAMES = st.sampled_from(["sidecar", "proxy", "sidecar-frontend"])


def _runnable(drawn: Obj, probes: Obj) -> Obj:
    """A drawn container with an image, and the probes drawn with a handler."""
    out = {**drawn, "image": drawn.get("image", "img:1.5.0")}
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        out.pop(probe, None)
    return {**out, **probes}


PROBES = st.fixed_dictionaries(
    {}, optional={"livenessProbe": PROBE, "readinessProbe": PROBE, "startupProbe": PROBE}
)


@st.composite
def _pod_template(draw: st.DrawFn) -> Obj:
    main = _runnable(draw(container(st.just("main"))), draw(PROBES))
    pod = draw(pod_spec(with_containers=False))
    others = [_runnable(x, {}) for x in draw(st.lists(container(SIDECAR_NAMES), max_size=2, unique_by=str))]
    others = list({x["name"]: x for x in others}.values())
    pod["containers"] = [main, *others]
    pod.update(
        draw(st.fixed_dictionaries({}, optional={"securityContext": st.sampled_from([{}, {"runAsUser": 1}])}))
    )
    template: Obj = {"spec": pod}
    meta = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "labels": st.dictionaries(LABEL, LABEL, max_size=2),
                "annotations": st.dictionaries(LABEL, LABEL, max_size=2),
            },
        )
    )
    if meta:
        template["metadata"] = meta
    return template


@st.composite
def _v1beta1_dcds(draw: st.DrawFn) -> Obj:
    template = draw(_pod_template())
    spec: Obj = {
        "type": draw(st.sampled_from(["worker", "prefill", "decode", "frontend", "planner"])),
        "podTemplate": template,
    }
    names = [x["name"] for x in template["spec"]["containers"][1:]]
    optional = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "sharedMemorySize": st.one_of(QUANTITY, st.just("0")),
                "compilationCache": st.fixed_dictionaries(
                    {"pvcName": st.sampled_from(["cache", "models"])},
                    optional={"mountPath": st.just("/cache")},
                ),
                "backendFramework": st.sampled_from(["vllm", "sglang", "trtllm"]),
                "multinode": st.just({"nodeCount": 2}),
                "frontendSidecar": st.sampled_from(names) if names else st.nothing(),
                "replicas": st.integers(0, 3),
            },
        )
    )
    spec.update(optional)
    return _stored({"apiVersion": V1BETA1, "kind": c.KIND_DCD, "metadata": {"name": "w"}, "spec": spec})


@st.composite
def _v1alpha1_services(draw: st.DrawFn) -> Obj:
    main = _runnable(draw(container(st.just("main"))), draw(PROBES))
    main.pop("name")
    pod = draw(pod_spec(with_containers=False))
    pod["containers"] = [_runnable(x, {}) for x in pod.get("containers") or [] if x["name"] != "main"]
    if not pod["containers"]:
        del pod["containers"]
    quantities = st.fixed_dictionaries(
        {},
        optional={
            "cpu": QUANTITY.map(str),
            "memory": QUANTITY.map(str),
            "gpu": st.sampled_from(["1", "2", "8"]),
            "gpuType": st.sampled_from(["nvidia.com/gpu", "amd.com/gpu"]),
            "custom": st.dictionaries(
                st.sampled_from(["rdma/ib", "ephemeral-storage"]), QUANTITY.map(str), max_size=1
            ),
        },
    )
    svc: Obj = {
        "componentType": draw(st.sampled_from(["worker", "frontend", "planner"])),
        "extraPodSpec": {**pod, "mainContainer": main},
    }
    svc.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "envs": st.lists(env_var(), max_size=2, unique_by=lambda e: e["name"]),
                    "envFromSecret": LABEL,
                    "resources": st.fixed_dictionaries(
                        {},
                        optional={
                            "requests": quantities,
                            "limits": quantities,
                            "claims": st.just([{"name": "gpu"}]),
                        },
                    ),
                    "livenessProbe": PROBE,
                    "readinessProbe": PROBE,
                    "volumeMounts": st.lists(
                        st.fixed_dictionaries(
                            {"name": st.sampled_from(["cache", "models"])},
                            optional={
                                "mountPoint": st.sampled_from(["/cache", "/models"]),
                                "useAsCompilationCache": st.booleans(),
                            },
                        ),
                        max_size=2,
                    ),
                    "extraPodMetadata": st.fixed_dictionaries(
                        {},
                        optional={
                            "labels": st.dictionaries(LABEL, LABEL, max_size=2),
                            "annotations": st.dictionaries(LABEL, LABEL, max_size=2),
                        },
                    ),
                    "sharedMemory": st.fixed_dictionaries(
                        {}, optional={"disabled": st.booleans(), "size": QUANTITY}
                    ),
                    "frontendSidecar": st.fixed_dictionaries(
                        {"image": st.just("fe:1")},
                        optional={
                            "args": st.lists(LABEL, max_size=2),
                            "envs": st.lists(env_var(), max_size=2, unique_by=lambda e: e["name"]),
                            "envFromSecret": LABEL,
                        },
                    ),
                    "subComponentType": st.sampled_from(["prefill", "decode"]),
                },
            )
        )
    )
    return svc


@POD_SETTINGS
@given(_v1beta1_dcds())
def test_a_v1beta1_dcds_pods_read_from_its_pod_template_are_those_of_its_v1alpha1_form(dcd: Obj) -> None:
    native, alpha = _both_readings(dcd)
    assert native == alpha


@POD_SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["Worker", "Frontend", "Planner"]), _v1alpha1_services(), min_size=1, max_size=2
    )
)
def test_a_v1alpha1_graphs_dcds_keep_their_pods_stored_as_v1beta1(services: dict[str, Obj]) -> None:
    _each_dcd_keeps_its_pods(dgd(services))


def test_a_v1beta1_dcds_pods_are_read_from_its_pod_template() -> None:
    [dcd] = desired_dcds(dgd({"W": service("worker", envs=[{"name": "A", "value": "1"}])}), CTX)
    with mock.patch.object(workload, "stored_user_pod", wraps=stored_user_pod) as reader:
        comp = component_of(component_view(dcd))
    reader.assert_called_once_with(dcd["spec"])
    assert comp.pod == stored_user_pod(dcd["spec"])
    assert [e["name"] for e in comp.pod.env] == ["A"]


LAYERED_APART = {
    "an env name in both places": dict(
        envs=[{"name": "A", "value": "flat"}],
        extraPodSpec={"mainContainer": {"env": [{"name": "A", "value": "main"}]}},
    ),
    "envFromSecret beside envFrom": dict(
        envFromSecret="s1", extraPodSpec={"mainContainer": {"envFrom": [{"secretRef": {"name": "s2"}}]}}
    ),
    "resources in both places": dict(
        resources={"limits": {"cpu": "2"}},
        extraPodSpec={"mainContainer": {"resources": {"limits": {"cpu": "3"}}}},
    ),
    "a main container probe alone": dict(
        extraPodSpec={"mainContainer": {"livenessProbe": {"periodSeconds": 30}}}
    ),
    "a main container probe under a flat one": dict(
        readinessProbe={"httpGet": {"path": "/flat", "port": 9090}},
        extraPodSpec={"mainContainer": {"readinessProbe": {"httpGet": {"path": "/main", "port": 9090}}}},
    ),
    "a main container mount": dict(
        extraPodSpec={"mainContainer": {"volumeMounts": [{"name": "data", "mountPath": "/data"}]}}
    ),
    "flat mounts out of v1beta1's order": dict(
        volumeMounts=[
            {"name": "data", "mountPoint": "/data"},
            {"name": "cache", "mountPoint": "/cache", "useAsCompilationCache": True},
        ]
    ),
    "a zero shared memory size": dict(sharedMemory={"size": "0"}),
    "a frontendSidecar block": dict(
        frontendSidecar={"image": "fe:1"}, volumeMounts=[{"name": "data", "mountPoint": "/data"}]
    ),
}


@pytest.mark.parametrize("fields", LAYERED_APART.values(), ids=LAYERED_APART.keys())
def test_a_v1alpha1_component_layered_apart_keeps_its_v1alpha1_pods(fields: Obj) -> None:
    graph = dgd({"W": service("worker", **fields)})
    [dcd] = desired_dcds(graph, CTX)
    dcd["metadata"]["uid"] = "dcd-uid"
    assert layered_apart(convert(dcd, V1ALPHA1)["spec"]) is not None
    native, alpha = _both_readings(dcd)
    assert native == alpha


@pytest.mark.parametrize("fields", LAYERED_APART.values(), ids=LAYERED_APART.keys())
def test_its_pod_template_alone_would_give_other_pods(fields: Obj) -> None:
    """Why `layered_apart` exists: read from the pod template, these pods would change."""
    [dcd] = desired_dcds(dgd({"W": service("worker", **fields)}), CTX)
    dcd["metadata"]["uid"] = "dcd-uid"
    with mock.patch.object(workload, "layered_apart", lambda spec: None):
        native = _written(dcd)
    with _read_in_v1alpha1():
        alpha = _written(dcd)
    assert native != alpha


def test_a_main_container_mounts_details_come_from_the_pod_template() -> None:
    dcd = _stored(
        {
            "apiVersion": V1BETA1,
            "kind": c.KIND_DCD,
            "metadata": {"name": "w"},
            "spec": {
                "type": "worker",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "img",
                                "volumeMounts": [
                                    {
                                        "name": "cfg",
                                        "mountPath": "/etc/x.yaml",
                                        "subPath": "x.yaml",
                                        "readOnly": True,
                                    }
                                ],
                            }
                        ],
                        "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}],
                    }
                },
            },
        }
    )
    [deployment, *_] = desired_component_objects(component_view(dcd), CTX)
    [main] = [x for x in deployment["spec"]["template"]["spec"]["containers"] if x["name"] == "main"]
    assert {"name": "cfg", "mountPath": "/etc/x.yaml", "readOnly": True, "subPath": "x.yaml"} in main[
        "volumeMounts"
    ]
    assert {"name": "cfg", "configMap": {"name": "cfg"}} in deployment["spec"]["template"]["spec"]["volumes"]
