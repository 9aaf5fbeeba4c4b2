"""Property: for every graph the API accepts, the generated objects have unique, valid names and every
label value is a valid label value, in every cluster shape (optional APIs on or off).

The strategy produces only what the CRD admits (service-key pattern, name budgets, keys distinct once
normalised, DGD names starting with a letter); the CRD side of those rules is proven on the real API
server in test/integration/crds.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from dynamo_operator.api.v1alpha1 import (
    MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS,
    MAX_GRAPH_AND_SERVICE_NAME_CHARS,
    DynamoGraphDeployment,
)
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import (
    desired_graph_objects,
    desired_planner_rbac,
    missing_apis,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

DNS_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN_PART = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(rf"{DNS_SUBDOMAIN_PART}(\.{DNS_SUBDOMAIN_PART})*")
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
# Kinds whose names are DNS-1035 labels; every other kind takes a DNS-1123 subdomain.
LABEL_NAMED_KINDS = {"Service"}

ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


@st.composite
def _part(draw: st.DrawFn, alphabet: str, length: int) -> str:
    """`length` characters of `alphabet` and '-', starting and ending with one of `alphabet`."""
    if length <= 2:
        return draw(st.text(alphabet, min_size=length, max_size=length))
    middle = draw(st.text(alphabet + "-", min_size=length - 2, max_size=length - 2))
    ends = draw(st.text(alphabet, min_size=2, max_size=2))
    return f"{ends[0]}{middle}{ends[1]}"


@st.composite
def _dotted(draw: st.DrawFn, alphabet: str, length: int) -> str:
    """A name of exactly `length` characters: parts of `_part` joined by single dots."""
    parts: list[str] = []
    left = length
    while left > 0:
        size = left if left < 3 or not draw(st.booleans()) else draw(st.integers(1, left - 2))
        parts.append(draw(_part(alphabet, size)))
        left -= size + 1  # the dot before the next part
    name = ".".join(parts)
    return name[:length] if not name[:length].endswith(".") else name[: length - 1]


@st.composite
def service_keys(draw: st.DrawFn, max_size: int) -> str:
    """A key the CRD's pattern admits, often as long as the budget allows."""
    length = draw(st.sampled_from([max_size, 1, min(max_size, 5)]) | st.integers(1, max_size))
    return draw(_dotted(ALNUM, length))


@st.composite
def graph_names(draw: st.DrawFn, max_size: int) -> str:
    """A DGD name: a DNS subdomain that starts with a letter, often as long as allowed."""
    length = draw(st.sampled_from([max_size, 2]) | st.integers(1, max_size))
    first = draw(st.sampled_from("abcdefghijklmnopqrstuvwxyz"))
    if length == 1:
        return first
    rest = draw(_dotted(LOWER_ALNUM, length - 1))
    return f"{first}{rest}" if not rest.startswith(".") else f"{first}a{rest[1:]}"


COMPONENT_TYPES = ["frontend", "worker", "prefill", "decode", "planner", "epp", "main", None]


@st.composite
def service_specs(draw: st.DrawFn, *, backend: str, multinode: bool) -> dict[str, Any]:
    component_type = draw(st.sampled_from(COMPONENT_TYPES))
    spec: dict[str, Any] = {
        "replicas": draw(st.integers(0, 3)),
        "extraPodSpec": {
            "mainContainer": {
                "image": "registry.example/dynamo:1",
                "command": ["python3", "-m", f"dynamo.{backend}"],
                "args": ["--model", "Qwen/Qwen3-0.6B"],
            }
        },
    }
    if component_type:
        spec["componentType"] = component_type
    if component_type == "epp":  # the CRD: single node, exactly one replica
        multinode = False
        spec["replicas"] = 1
    if multinode:
        spec["multinode"] = {"nodeCount": draw(st.integers(2, 3))}
    if draw(st.booleans()):
        spec["scalingAdapter"] = {"enabled": True}
    if draw(st.booleans()):
        spec["modelRef"] = {"name": draw(st.sampled_from(["Qwen/Qwen3-0.6B", "m" * 200]))}
    if component_type == "frontend" and draw(st.booleans()):
        spec["ingress"] = {"enabled": True, "host": "chat", "useVirtualService": draw(st.booleans())}
    if draw(st.booleans()):
        spec["globalDynamoNamespace"] = True
    if component_type == "epp":
        # The smallest inline config the schema accepts: one plugin, one profile running it.
        plugin = {"type": "single-profile-handler"}
        profile = {"name": "default", "plugins": [{"pluginRef": "single-profile-handler"}]}
        spec["eppConfig"] = {
            "config": {"kind": "EndpointPickerConfig", "plugins": [plugin], "schedulingProfiles": [profile]}
        }
    return spec


@st.composite
def accepted_graphs(draw: st.DrawFn) -> dict[str, Any]:
    """A DGD the CRD accepts: name budgets per service, keys distinct once normalised."""
    name = draw(graph_names(MAX_GRAPH_AND_SERVICE_NAME_CHARS - 1))
    backend = draw(st.sampled_from(["vllm", "sglang", "trtllm"]))
    count = draw(st.integers(1, 5))
    services: dict[str, Any] = {}
    seen: set[str] = set()
    for _ in range(count):
        multinode = draw(st.booleans())
        budget = MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS if multinode else MAX_GRAPH_AND_SERVICE_NAME_CHARS
        if budget - len(name) < 1:
            continue
        key = draw(service_keys(min(63, budget - len(name))))
        if naming.normalised_service(key) in seen:
            continue
        spec = draw(service_specs(backend=backend, multinode=multinode))
        if spec.get("componentType") == "epp" and any(
            s.get("componentType") == "epp" for s in services.values()
        ):
            continue  # the CRD admits one epp per graph
        seen.add(naming.normalised_service(key))
        services[key] = spec
    if not services:
        services["a"] = draw(service_specs(backend=backend, multinode=False))
    namespace = draw(st.sampled_from(["default", "n" * 63, "team-a"]))
    dgd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace, "uid": "uid-1"},
        "spec": {"backendFramework": backend, "services": services},
    }
    DynamoGraphDeployment.model_validate(dgd)  # the structural schema accepts it
    return dgd


CLUSTER_SHAPES = st.builds(
    Capabilities,
    lws=st.booleans(),
    volcano=st.booleans(),
    grove=st.just(False),
    istio=st.booleans(),
    gateway_inference_extension=st.booleans(),
)


def everything_generated(dgd: dict[str, Any], caps: Capabilities) -> list[dict[str, Any]]:
    """What the graph and component reconcilers would write for `dgd` (those whose APIs exist)."""
    ctx = GenContext(namespace=dgd["metadata"]["namespace"], capabilities=caps)
    if missing_apis(dgd, ctx):
        return []  # the graph reports the missing API and writes nothing
    graph = desired_planner_rbac(dgd, ctx) + desired_graph_objects(dgd, ctx)
    out = list(graph)
    for obj in graph:
        if obj["kind"] == "DynamoComponentDeployment":
            obj["metadata"]["uid"] = f"uid-{obj['metadata']['name']}"
            out += desired_component_objects(obj, ctx)
    return out


def _labels_everywhere(obj: Any) -> list[tuple[str, str]]:
    """Every (key, value) under any `labels` or `matchLabels` or Service `selector` map."""
    found: list[tuple[str, str]] = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("labels", "matchLabels") and isinstance(value, dict):
                found += [(str(k), str(v)) for k, v in value.items()]
            found += _labels_everywhere(value)
    elif isinstance(obj, list):
        for item in obj:
            found += _labels_everywhere(item)
    return found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dgd=accepted_graphs(), caps=CLUSTER_SHAPES)
def test_generated_names_are_unique_per_kind(dgd: dict[str, Any], caps: Capabilities) -> None:
    objects = everything_generated(dgd, caps)
    counts = Counter((o["kind"], o["metadata"]["name"]) for o in objects)
    assert [key for key, n in counts.items() if n > 1] == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dgd=accepted_graphs(), caps=CLUSTER_SHAPES)
def test_generated_names_are_valid_for_their_kind(dgd: dict[str, Any], caps: Capabilities) -> None:
    for obj in everything_generated(dgd, caps):
        name = obj["metadata"]["name"]
        if obj["kind"] in LABEL_NAMED_KINDS:
            assert len(name) <= 63 and DNS_LABEL.fullmatch(name), (obj["kind"], name)
        else:
            assert len(name) <= 253 and DNS_SUBDOMAIN.fullmatch(name), (obj["kind"], name)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dgd=accepted_graphs(), caps=CLUSTER_SHAPES)
def test_every_generated_label_value_is_valid(dgd: dict[str, Any], caps: Capabilities) -> None:
    for obj in everything_generated(dgd, caps):
        for key, value in _labels_everywhere(obj):
            assert len(value) <= 63 and LABEL_VALUE.fullmatch(value), (obj["kind"], key, value)
