"""`render_documents`: sample-like DGDs render every object, deterministically; bad input names the field."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, render_documents


def opts(*, with_lws: bool, operator_version: str = "") -> RenderOptions:
    return RenderOptions(
        namespace="ns1", capabilities=Capabilities(lws=with_lws), operator_version=operator_version
    )


IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"

AGG = f"""
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {{name: vllm-agg}}
spec:
  backendFramework: vllm
  services:
    Frontend:
      componentType: frontend
      replicas: 1
      extraPodSpec: {{mainContainer: {{image: {IMAGE}}}}}
    VllmDecodeWorker:
      componentType: worker
      replicas: 1
      resources: {{limits: {{gpu: "1"}}}}
      extraPodSpec:
        mainContainer:
          image: {IMAGE}
          command: [python3, -m, dynamo.vllm]
          args: [--model, Qwen/Qwen3-0.6B]
"""

DISAGG = f"""
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {{name: vllm-disagg, annotations: {{nvidia.com/enable-metrics: "false"}}}}
spec:
  backendFramework: vllm
  envs: [{{name: HF_HOME, value: /models}}]
  pvcs:
  - {{name: models, create: true, size: 100Gi, storageClass: standard, volumeAccessMode: ReadWriteMany}}
  services:
    Frontend:
      componentType: frontend
      ingress: {{enabled: true, host: chat, ingressControllerClassName: nginx}}
      extraPodSpec: {{mainContainer: {{image: {IMAGE}}}}}
    Planner:
      componentType: planner
      extraPodSpec: {{mainContainer: {{image: {IMAGE}, command: [python3, -m, planner]}}}}
    Prefill:
      componentType: prefill
      subComponentType: prefill
      scalingAdapter: {{enabled: true}}
      volumeMounts: [{{name: models, mountPoint: /models}}]
      modelRef: {{name: Qwen/Qwen3-0.6B}}
      extraPodSpec:
        mainContainer: {{image: {IMAGE}, command: [python3, -m, dynamo.vllm], args: [--is-prefill-worker]}}
    Decode:
      componentType: decode
      replicas: 2
      scalingAdapter: {{enabled: true}}
      volumeMounts: [{{name: models, mountPoint: /models}}]
      modelRef: {{name: Qwen/Qwen3-0.6B}}
      extraPodSpec:
        mainContainer: {{image: {IMAGE}, command: [python3, -m, dynamo.vllm], args: [--model, m]}}
"""

SGLANG_MULTINODE = f"""
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {{name: sglang-mn}}
spec:
  backendFramework: sglang
  services:
    Frontend:
      componentType: frontend
      extraPodSpec: {{mainContainer: {{image: {IMAGE}}}}}
    Worker:
      componentType: worker
      replicas: 2
      multinode: {{nodeCount: 2}}
      resources: {{limits: {{gpu: "8"}}}}
      extraPodSpec:
        mainContainer: {{image: {IMAGE}, command: [python3, -m, dynamo.sglang], args: [--tp, "16"]}}
"""

TRTLLM_MULTINODE = SGLANG_MULTINODE.replace("sglang", "trtllm")


def _docs(text: str, *, with_lws: bool = True) -> list[dict]:  # type: ignore[type-arg]
    return list(yaml.safe_load_all(render_documents(text, opts(with_lws=with_lws))))


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        pytest.param(
            AGG,
            {
                "ServiceAccount": 1,
                "Role": 1,
                "RoleBinding": 1,
                "DynamoComponentDeployment": 2,
                "Deployment": 2,
                "Service": 2,
            },
            id="vllm-agg",
        ),
        pytest.param(
            DISAGG,
            {
                "PersistentVolumeClaim": 1,
                "ServiceAccount": 2,
                "Role": 1,
                "RoleBinding": 1,
                "Service": 5,
                "DynamoComponentDeployment": 4,
                "DynamoGraphDeploymentScalingAdapter": 2,
                "Deployment": 4,
                "Ingress": 1,
            },
            id="vllm-disagg",
        ),
        pytest.param(
            SGLANG_MULTINODE,
            {
                "ServiceAccount": 1,
                "Role": 1,
                "RoleBinding": 1,
                "DynamoComponentDeployment": 2,
                "Deployment": 1,
                "LeaderWorkerSet": 1,  # two replicas, one native-scaled set
                "Service": 2,
                "ConfigMap": 1,
                "Secret": 1,  # the MPI SSH key, with a placeholder
            },
            id="sglang-multinode",
        ),
        pytest.param(
            TRTLLM_MULTINODE,
            {
                "ServiceAccount": 1,
                "Role": 1,
                "RoleBinding": 1,
                "DynamoComponentDeployment": 2,
                "Deployment": 1,
                "LeaderWorkerSet": 1,  # two replicas, one native-scaled set
                "Service": 2,
                "ConfigMap": 1,
                "Secret": 1,  # the MPI SSH key, with a placeholder
            },
            id="trtllm-multinode",
        ),
    ],
)
def test_render_sample(text: str, kinds: dict[str, int]) -> None:
    """Each sample renders to exactly the expected objects."""
    assert Counter(d["kind"] for d in _docs(text)) == Counter(kinds)


@pytest.mark.parametrize("text", [AGG, DISAGG, SGLANG_MULTINODE, TRTLLM_MULTINODE])
def test_render_is_deterministic(text: str) -> None:
    """Rendering twice gives byte-identical output."""
    assert render_documents(text, opts(with_lws=True)) == render_documents(text, opts(with_lws=True))


@pytest.mark.parametrize("text", [AGG, DISAGG])
def test_rendered_objects_live_in_namespace(text: str) -> None:
    """Every namespaced object lands in the requested namespace."""
    assert {d["metadata"]["namespace"] for d in _docs(text)} == {"ns1"}


def test_render_prefers_namespace_in_document() -> None:
    """A namespace in the document's metadata wins over the flag."""
    text = AGG.replace("metadata: {name: vllm-agg}", "metadata: {name: vllm-agg, namespace: prod}")
    docs = yaml.safe_load_all(render_documents(text, opts(with_lws=False)))
    assert {d["metadata"]["namespace"] for d in docs} == {"prod"}


def test_render_without_lws_refuses_multinode() -> None:
    """Without --with-lws a multinode graph is refused with the missing API named."""
    with pytest.raises(ValueError, match="LeaderWorkerSet"):
        render_documents(SGLANG_MULTINODE, opts(with_lws=False))


def test_render_has_no_owner_references() -> None:
    """Rendered objects have no UIDs to point at, so they carry no ownerReferences."""
    assert all("ownerReferences" not in d["metadata"] for d in _docs(DISAGG))


@pytest.mark.parametrize(
    ("text", "field"),
    [
        pytest.param("a: [", "not valid YAML", id="bad-yaml"),
        pytest.param(
            "kind: Deployment\napiVersion: apps/v1\n", "no DynamoGraphDeployment", id="only-other-kinds"
        ),
        pytest.param(AGG.replace("nvidia.com/v1alpha1", "nvidia.com/v2"), "apiVersion", id="wrong-version"),
        pytest.param(AGG + "---\n" + AGG, "appears twice", id="same-graph-twice"),
        pytest.param(
            AGG.replace("replicas: 1", "replicas: -1", 1),
            r"spec\.services\.Frontend\.replicas",
            id="negative-replicas",
        ),
        pytest.param(
            AGG.replace("backendFramework: vllm", "backendFramework: tgi"),
            r"spec\.backendFramework",
            id="bad-backend",
        ),
        pytest.param(
            AGG.replace(
                "componentType: worker",
                "componentType: worker\n      volumeMounts: [{name: nope, mountPoint: /x}]",
            ),
            r"volumeMounts\[name=nope\]",
            id="undeclared-pvc",
        ),
        pytest.param(AGG.replace('gpu: "1"', 'gpu: "one"'), r"resources\.limits\.gpu", id="bad-quantity"),
    ],
)
def test_render_invalid_input_names_field(text: str, field: str) -> None:
    """Invalid input raises ValueError whose message names the field."""
    with pytest.raises(ValueError, match=field):
        render_documents(text, opts(with_lws=True))


@pytest.mark.parametrize(("version", "stamped"), [("1.0.0", "1.0.0"), ("", None)])
def test_render_stamps_a_new_graph_with_the_operator_version(version: str, stamped: str | None) -> None:
    """Rendered DCDs carry the origin version the operator would stamp at its first look."""
    docs = yaml.safe_load_all(render_documents(AGG, opts(with_lws=True, operator_version=version)))
    dcds = [d for d in docs if d["kind"] == "DynamoComponentDeployment"]
    assert dcds
    for dcd in dcds:
        origin = (dcd["spec"].get("annotations") or {}).get("nvidia.com/dynamo-operator-origin-version")
        assert origin == stamped


POD_VOLUME_MOUNT = """
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: pv, namespace: ns}
spec:
  services:
    Frontend:
      componentType: frontend
      volumeMounts: [{name: models, mountPoint: /models}]
      extraPodSpec:
        volumes: [{name: models, persistentVolumeClaim: {claimName: models}}]
        mainContainer: {image: "img:1"}
"""


def test_a_mount_of_a_pod_volume_is_accepted_and_mounted_once() -> None:
    """v1beta1 graphs declare PVC volumes in the pod template; their v1alpha1 view mounts them through
    spec.services.*.volumeMounts without a spec.pvcs entry (upstream's examples do): one volume, one mount."""
    (deployment,) = [d for d in _docs(POD_VOLUME_MOUNT, with_lws=False) if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert [v for v in pod["volumes"] if v["name"] == "models"] == [
        {"name": "models", "persistentVolumeClaim": {"claimName": "models"}}
    ]
    (main,) = [c for c in pod["containers"] if c["name"] == "main"]
    assert [m for m in main["volumeMounts"] if m["name"] == "models"] == [
        {"name": "models", "mountPath": "/models"}
    ]
