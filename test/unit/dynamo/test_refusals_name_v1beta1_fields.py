"""Every refusal of a v1beta1 graph names a field of the v1beta1 schema, under the component at fault.

The class of input: upstream's v1beta1 examples, each broken in one of the ways the schema cannot see
(a main container without an image, a mount of a volume the pod lacks, failover without per-container
discovery, a frontend sidecar naming no container, a shared memory size that is no quantity or is
negative, a gang minimum off Grove, failover without the GPU memory service, a GPU count that is no
whole number). Generation refuses each; the field the graph's condition names (generation's path as
the reconciler rewrites it, common/stored_terms.py) must be a path of our v1beta1 CRD's schema, and
the component is named.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.conversion import paths
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.stored_terms import graph_message
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from testsupport.field_paths import segments

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO.parent / "shared" / "upstream-examples-2a6da14c" / "examples"
CRD = REPO / "config" / "crd" / "bases" / "nvidia.com_dynamographdeployments.yaml"
CTX = GenContext(
    namespace="ns", capabilities=Capabilities(lws=True, dra=True, gateway_inference_extension=True)
)
WORKER_TYPES = ("worker", "prefill", "decode")

Json = dict[str, Any]


@functools.cache
def beta_schema() -> Json:
    crd = yaml.safe_load(CRD.read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    schema: Json = version["schema"]["openAPIV3Schema"]
    return schema


def in_schema(path: str) -> bool:
    """Whether `path` (dots, `[...]` an entry of a list or map) names a field of the v1beta1 schema
    (the object's metadata is every kind's ObjectMeta, which a CRD's schema does not spell out)."""
    if path.startswith("metadata."):
        return True
    node = beta_schema()
    for key, selectors in segments(path):
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return True
        if key not in (node.get("properties") or {}):
            return False
        node = node["properties"][key]
        for _ in selectors:
            if node.get("type") == "array":
                node = node["items"]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return False
    return True


def graphs() -> list[tuple[str, Json]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
                out.append((path.stem, doc))
    return out


def main_container(component: Json) -> Json:
    containers = component.setdefault("podTemplate", {}).setdefault("spec", {}).setdefault("containers", [])
    found = next((c for c in containers if c.get("name") == "main"), None)
    if found is None:
        found = {"name": "main"}
        containers.insert(0, found)
    return found


def no_image(component: Json) -> None:
    main_container(component).pop("image", None)


def undeclared_mount(component: Json) -> None:
    main_container(component).setdefault("volumeMounts", []).append(
        {"name": "nowhere", "mountPath": "/nowhere"}
    )


def failover_without_discovery(component: Json) -> None:
    main_container(component).setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = "1"
    component.setdefault("experimental", {}).update(gpuMemoryService={}, failover={"mode": "IntraPod"})


def sidecar_naming_no_container(component: Json) -> None:
    component["frontendSidecar"] = "not-there"


def shared_memory_no_quantity(component: Json) -> None:
    component["sharedMemorySize"] = "lots"


def negative_shared_memory(component: Json) -> None:
    component["sharedMemorySize"] = "-1Gi"


def gang_minimum_off_grove(component: Json) -> None:
    component["minAvailable"] = 1


def failover_without_gms(component: Json) -> None:
    component.setdefault("experimental", {})["failover"] = {"mode": "IntraPod"}


def gms_with_a_fraction_of_a_gpu(component: Json) -> None:
    main_container(component).setdefault("resources", {}).setdefault("limits", {})["nvidia.com/gpu"] = "0.5"
    component.setdefault("experimental", {})["gpuMemoryService"] = {}


# What the API server refuses in a Deployment although the CRD admits it (pod/api_rules.py).
def probe_without_a_handler(component: Json) -> None:
    main_container(component)["livenessProbe"] = {"periodSeconds": 5}


def sidecar_probe_with_two_handlers(component: Json) -> None:
    probe = {"exec": {"command": ["true"]}, "tcpSocket": {"port": 80}}
    containers = component["podTemplate"]["spec"]["containers"]
    containers.append({"name": "helper", "image": "helper:1", "readinessProbe": probe})


def env_from_two_sources(component: Json) -> None:
    source = {"fieldRef": {"fieldPath": "metadata.name"}, "secretKeyRef": {"name": "s", "key": "k"}}
    main_container(component).setdefault("env", []).append({"name": "BOTH", "valueFrom": source})


def env_value_beside_value_from(component: Json) -> None:
    source = {"fieldRef": {"fieldPath": "metadata.name"}}
    main_container(component).setdefault("env", []).append({"name": "V", "value": "x", "valueFrom": source})


def env_from_a_config_map_no_name_can_be(component: Json) -> None:
    source = {"configMapKeyRef": {"name": "Not_A_Name", "key": "k"}}
    main_container(component).setdefault("env", []).append({"name": "CM", "valueFrom": source})


def pod_label_key_no_key_can_be(component: Json) -> None:
    component.setdefault("podTemplate", {}).setdefault("metadata", {}).setdefault("labels", {})["-x"] = "y"


def pod_label_value_no_value_can_be(component: Json) -> None:
    component.setdefault("podTemplate", {}).setdefault("metadata", {}).setdefault("labels", {})["x"] = "a b"


def pod_annotation_key_no_key_can_be(component: Json) -> None:
    metadata = component.setdefault("podTemplate", {}).setdefault("metadata", {})
    metadata.setdefault("annotations", {})["example.com/a/b"] = "y"


def sidecar_mount_of_no_volume(component: Json) -> None:
    mount = {"name": "nowhere", "mountPath": "/nowhere"}
    containers = component["podTemplate"]["spec"]["containers"]
    containers.append({"name": "helper", "image": "helper:1", "volumeMounts": [mount]})


def sidecar_name_no_container_can_have(component: Json) -> None:
    component["podTemplate"]["spec"]["containers"].append({"name": "Helper", "image": "helper:1"})


def cache_claim_name_no_volume_can_have(component: Json) -> None:
    component["compilationCache"] = {"pvcName": "Model_Cache", "mountPath": "/cache"}


def pod_volume_name_no_volume_can_have(component: Json) -> None:
    component["podTemplate"]["spec"].setdefault("volumes", []).append({"name": "my.data", "emptyDir": {}})


BREAKAGES: list[Callable[[Json], None]] = [
    sidecar_name_no_container_can_have,
    cache_claim_name_no_volume_can_have,
    pod_volume_name_no_volume_can_have,
    probe_without_a_handler,
    sidecar_probe_with_two_handlers,
    env_from_two_sources,
    env_value_beside_value_from,
    env_from_a_config_map_no_name_can_be,
    pod_label_key_no_key_can_be,
    pod_label_value_no_value_can_be,
    pod_annotation_key_no_key_can_be,
    sidecar_mount_of_no_volume,
    no_image,
    undeclared_mount,
    failover_without_discovery,
    sidecar_naming_no_container,
    shared_memory_no_quantity,
    negative_shared_memory,
    gang_minimum_off_grove,
    failover_without_gms,
    gms_with_a_fraction_of_a_gpu,
]
CASES = [
    pytest.param(name, graph, breakage, id=f"{name}-{breakage.__name__}")
    for name, graph in graphs()
    for breakage in BREAKAGES
    if any(c.get("type") in WORKER_TYPES for c in graph["spec"].get("components") or ())
]


@pytest.mark.parametrize(("name", "graph", "breakage"), CASES)
def test_a_broken_component_is_named_by_a_v1beta1_field(
    name: str, graph: Json, breakage: Callable[[Json], None]
) -> None:
    broken = copy.deepcopy(graph)
    broken["metadata"].update(namespace="ns", uid=f"uid-{name}-{breakage.__name__}", generation=1)
    annotations = broken["metadata"].get("annotations") or {}
    annotations.pop("nvidia.com/dynamo-kube-discovery-mode", None)
    worker = next(c for c in broken["spec"]["components"] if c.get("type") in WORKER_TYPES)
    breakage(worker)
    names = [c["name"] for c in broken["spec"]["components"]]
    with pytest.raises(GenerationError) as raised:
        desired_graph_objects(lowered_graph(broken), CTX)
    field = paths.graph_path(raised.value.field, names)
    assert in_schema(field), field
    # The component at fault is named: by the field, or (for a graph annotation it lacks) the message.
    told = graph_message(str(raised.value), names)
    assert f"spec.components[name={worker['name']}]" in told, told
    assert "spec.services" not in told, told
