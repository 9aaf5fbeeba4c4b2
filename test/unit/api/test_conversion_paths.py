"""Refusals name v1beta1 paths: each v1alpha1 path generation reports is where the conversion puts
that field in v1beta1.

The mapping (api/conversion/paths.py) is checked against the conversion itself: a value is planted at
a v1alpha1 path of a graph (or DCD), the object is converted as the webhook converts it, and the
value must be found at the v1beta1 path the mapping gives.
"""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, paths
from testsupport.field_paths import segments


def resolve(obj: Any, path: str) -> Any:
    """The value at `path` (dots; `[i]` an index, `[name=x]` the entry named x, `[k]` a map key)."""
    node = obj
    for key, selectors in segments(path):
        node = node[key]
        for selector in selectors:
            if selector.isdigit():
                node = node[int(selector)]
            elif selector.startswith("name="):
                wanted = selector[len("name=") :]
                node = next(entry for entry in node if entry.get("name") == wanted)
            else:
                node = node[selector]
    return node


def graph(service: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": {"my.worker": {"componentType": "worker", **service}}, **spec},
    }


MAIN = {"extraPodSpec": {"mainContainer": {"image": "img:1"}}}

# (v1alpha1 service fields, path below the service, the value found at the v1beta1 path)
COMPONENT_CASES = [
    (MAIN, "extraPodSpec.mainContainer.image", "img:1"),
    (
        {"extraPodSpec": {"mainContainer": {"image": "i"}, "volumes": [{"name": "v", "emptyDir": {}}]}},
        "extraPodSpec.volumes[name=v].name",
        "v",
    ),
    (
        {"extraPodSpec": {"mainContainer": {"image": "i"}, "nodeSelector": {"k": "planted"}}},
        "extraPodSpec.nodeSelector.k",
        "planted",
    ),
    ({"extraPodMetadata": {"labels": {"k": "planted"}}}, "extraPodMetadata.labels.k", "planted"),
    ({"envs": [{"name": "E", "value": "planted"}]}, "envs[name=E].value", "planted"),
    ({"envFromSecret": "planted"}, "envFromSecret", [{"secretRef": {"name": "planted"}}]),
    ({"livenessProbe": {"periodSeconds": 17}}, "livenessProbe.periodSeconds", 17),
    ({"readinessProbe": {"periodSeconds": 19}}, "readinessProbe.periodSeconds", 19),
    (
        {"volumeMounts": [{"name": "m", "mountPoint": "/planted"}]},
        "volumeMounts[name=m].mountPoint",
        "/planted",
    ),
    ({"resources": {"limits": {"gpu": "3"}}}, "resources.limits.gpu", "3"),
    ({"resources": {"requests": {"cpu": "7"}}}, "resources.requests.cpu", "7"),
    (
        {"resources": {"requests": {"custom": {"example.com/dev": "5"}}}},
        "resources.requests.custom.example.com/dev",
        "5",
    ),
    (
        {"gpuMemoryService": {"enabled": True, "deviceClassName": "planted"}},
        "gpuMemoryService.deviceClassName",
        "planted",
    ),
    (
        {"gpuMemoryService": {"enabled": True, "deviceClassName": "planted"}},
        "gpuMemoryService.enabled",
        {"deviceClassName": "planted"},
    ),
    ({"failover": {"enabled": True, "numShadows": 3}}, "failover.numShadows", 3),
    ({"failover": {"enabled": True, "numShadows": 3}}, "failover.enabled", {"numShadows": 3}),
    ({"checkpoint": {"enabled": True, "checkpointRef": "planted"}}, "checkpoint.checkpointRef", "planted"),
    ({"scalingAdapter": {"enabled": True}}, "scalingAdapter.enabled", {}),
    ({"sharedMemory": {"size": "3Gi"}}, "sharedMemory.size", "3Gi"),
    ({"subComponentType": "prefill"}, "subComponentType", "prefill"),
    ({}, "componentType", "worker"),
    ({"frontendSidecar": {"image": "fe:1"}}, "frontendSidecar.image", "fe:1"),
    ({"frontendSidecar": {"image": "fe:1", "args": ["planted"]}}, "frontendSidecar.args[0]", "planted"),
    (
        {"frontendSidecar": {"image": "fe:1", "envs": [{"name": "E", "value": "planted"}]}},
        "frontendSidecar.envs[name=E].value",
        "planted",
    ),
    ({"multinode": {"nodeCount": 3}}, "multinode.nodeCount", 3),
    ({"replicas": 4}, "replicas", 4),
    ({"modelRef": {"name": "planted"}}, "modelRef.name", "planted"),
]


@pytest.mark.parametrize(("service", "path", "planted"), COMPONENT_CASES, ids=[c[1] for c in COMPONENT_CASES])
def test_a_service_field_is_named_where_the_conversion_puts_it(
    service: dict[str, Any], path: str, planted: Any
) -> None:
    alpha = graph(service)
    beta = convert(alpha, V1BETA1)
    where = paths.graph_path(f"spec.services.my.worker.{path}", ["my.worker"])
    assert where.startswith("spec.components[name=my.worker]")
    assert resolve(beta, where) == planted


@pytest.mark.parametrize(
    ("service", "path", "planted"), COMPONENT_CASES[:12], ids=[c[1] for c in COMPONENT_CASES[:12]]
)
def test_a_dcd_field_is_named_where_the_conversion_puts_it(
    service: dict[str, Any], path: str, planted: Any
) -> None:
    alpha = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"componentType": "worker", **service},
    }
    beta = convert(alpha, V1BETA1)
    assert resolve(beta, paths.dcd_path(path)) == planted
    assert paths.dcd_path(f"spec.{path}") == paths.dcd_path(path)


@pytest.mark.parametrize(
    ("spec", "path", "planted"),
    [
        ({"envs": [{"name": "E", "value": "planted"}]}, "spec.envs[name=E].value", "planted"),
        (
            {"topologyConstraint": {"topologyProfile": "planted"}},
            "spec.topologyConstraint.topologyProfile",
            "planted",
        ),
        ({"backendFramework": "vllm"}, "spec.backendFramework", "vllm"),
    ],
)
def test_a_graph_field_is_named_where_the_conversion_puts_it(
    spec: dict[str, Any], path: str, planted: Any
) -> None:
    beta = convert(graph({}, **spec), V1BETA1)
    assert resolve(beta, paths.graph_path(path)) == planted


def test_the_services_map_is_the_components_list() -> None:
    assert paths.graph_path("spec.services") == "spec.components"


def test_a_service_name_holding_dots_is_split_at_the_longest_known_name() -> None:
    assert (
        paths.graph_path("spec.services.a.b.replicas", ["a", "a.b"]) == "spec.components[name=a.b].replicas"
    )
    assert paths.graph_path("spec.services.a.b.replicas", ["a"]) == "spec.components[name=a].b.replicas"


@pytest.mark.parametrize(
    "path", ["spec.services.W.ingress.host", "spec.services.W.labels", "spec.pvcs[0].size"]
)
def test_a_field_v1beta1_has_no_place_for_keeps_its_v1alpha1_path(path: str) -> None:
    assert paths.graph_path(path, ["W"]).endswith(path.rsplit("W.", 1)[-1])


@pytest.mark.parametrize(
    "path", ["metadata.name", "metadata.annotations[nvidia.com/x]", "spec", "spec.restart.id"]
)
def test_paths_both_versions_share_are_unchanged(path: str) -> None:
    assert paths.graph_path(path) == path


def request(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": {"model": "m", "backend": "vllm", **spec},
    }


def profiling(config: dict[str, Any], image: str = "prof:1") -> dict[str, Any]:
    return {"profilingConfig": {"profilerImage": image, "config": config}}


REQUEST_CASES = [
    (profiling({}, image="planted:1"), "spec.profilingConfig.profilerImage", "planted:1"),
    (profiling({"sla": {"ttft": 123}}), "spec.profilingConfig.config.sla.ttft", 123),
    (profiling({"sla": {"isl": 1000, "osl": 10}}), "spec.profilingConfig.config.sla.isl", 1000),
    (profiling({"sla": {"isl": 1000, "osl": 10}}), "spec.profilingConfig.config.sla.osl", 10),
    (
        profiling({"deployment": {"modelCache": {"pvcName": "c", "modelPathInPvc": "/planted"}}}),
        "spec.profilingConfig.config.deployment.modelCache.modelPathInPvc",
        "/planted",
    ),
    (
        profiling({"deployment": {"modelCache": {"pvcName": "planted"}}}),
        "spec.profilingConfig.config.deployment.modelCache.pvcName",
        "planted",
    ),
    ({**profiling({}), "useMocker": True}, "spec.useMocker", True),
]


@pytest.mark.parametrize(("spec", "path", "planted"), REQUEST_CASES, ids=[c[1] for c in REQUEST_CASES])
def test_a_request_field_is_named_where_the_conversion_puts_it(
    spec: dict[str, Any], path: str, planted: Any
) -> None:
    beta = convert(request(**spec), V1BETA1)
    assert resolve(beta, paths.request_path(path)) == planted


@pytest.mark.parametrize(
    "path", ["spec.enableGpuDiscovery", "spec.deploymentOverrides.namespace", "spec.model"]
)
def test_a_request_field_both_versions_spell_alike_or_only_v1alpha1_has_keeps_its_path(path: str) -> None:
    assert paths.request_path(path) == path
