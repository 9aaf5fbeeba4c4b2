"""What a v1beta1 component says that v1alpha1 has no field for reaches the pods (common/remainder.py).

The operator reads graphs and DCDs as v1alpha1, converted from the stored v1beta1; a volume mount's
readOnly/subPath and a frontendSidecar naming a pod template container travel in the reserved
annotation, and generation reads them back from there. Each test follows the operator's own path:
a v1beta1 graph converted to v1alpha1, its DCDs written as v1beta1 and read back as v1alpha1.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, preserve
from dynamo_operator.internal.dynamo import desired_component_objects, desired_dcds, validate_graph
from dynamo_operator.internal.dynamo.common import remainder
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set
from unit.dynamo.dynamo_testlib import CTX, IMAGE, NS

Obj = dict[str, Any]

CONFIG_MOUNT = {
    "name": "engine-config",
    "mountPath": "/etc/engine/agg.yaml",
    "readOnly": True,
    "subPath": "agg.yaml",
}
SIDECAR_IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"


def beta_graph(*, worker: Obj | None = None) -> Obj:
    """A v1beta1 graph: a frontend and a decode worker that mounts a ConfigMap key as a file."""
    main: Obj = {
        "name": "main",
        "image": IMAGE,
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "Qwen/Qwen3-0.6B"],
        "volumeMounts": [CONFIG_MOUNT],
    }
    decode: Obj = {
        "name": "decode",
        "type": "decode",
        "replicas": 1,
        "podTemplate": {
            "spec": {
                "containers": [main],
                "volumes": [{"name": "engine-config", "configMap": {"name": "engine-config"}}],
            }
        },
    }
    decode.update(worker or {})
    return {
        "apiVersion": V1BETA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS, "uid": "uid-1"},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": "frontend",
                    "type": "frontend",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
                },
                decode,
            ],
        },
    }


def with_sidecar(graph: Obj, container: Obj | None = None) -> Obj:
    out = copy.deepcopy(graph)
    decode = out["spec"]["components"][1]
    decode["frontendSidecar"] = "sidecar-frontend"
    sidecar = container if container is not None else {"name": "sidecar-frontend", "image": SIDECAR_IMAGE}
    decode["podTemplate"]["spec"]["containers"].append(sidecar)
    return out


def as_read(obj: Obj) -> Obj:
    """An object as the operator's client hands it over: the stored v1beta1 converted to v1alpha1."""
    return dict(convert(obj, V1ALPHA1))


def decode_dcd(graph: Obj) -> Obj:
    [dcd] = [d for d in desired_dcds(as_read(graph), CTX) if d["spec"]["serviceName"] == "decode"]
    dcd["metadata"]["uid"] = "dcd-uid"
    return dcd


def stored_dcd(graph: Obj) -> Obj:
    """The decode DCD as the API server stores it (written as v1beta1)."""
    return dict(convert(decode_dcd(graph), V1BETA1))


def deployment_pod(graph: Obj) -> Obj:
    """The decode Deployment's pod spec, made from the DCD read back as v1alpha1."""
    objs = desired_component_objects(as_read(stored_dcd(graph)), CTX)
    [deployment] = [o for o in objs if o["kind"] == "Deployment"]
    pod: Obj = deployment["spec"]["template"]["spec"]
    return pod


def container(pod: Obj, name: str) -> Obj:
    [found] = [c for c in pod["containers"] if c["name"] == name]
    return found


def mount_at(c: Obj, path: str) -> Obj:
    [found] = [m for m in c.get("volumeMounts") or [] if m["mountPath"] == path]
    return found


def test_a_read_only_sub_path_mount_reaches_the_deployment() -> None:
    mount = mount_at(container(deployment_pod(beta_graph()), "main"), CONFIG_MOUNT["mountPath"])
    assert mount == CONFIG_MOUNT


def test_the_stored_dcd_keeps_the_mount_details_in_its_pod_template() -> None:
    main = container(stored_dcd(beta_graph())["spec"]["podTemplate"]["spec"], "main")
    assert mount_at(main, CONFIG_MOUNT["mountPath"]) == CONFIG_MOUNT


@pytest.mark.parametrize("detail", ["subPathExpr", "mountPropagation", "recursiveReadOnly"])
def test_every_mount_detail_v1alpha1_lacks_reaches_the_deployment(detail: str) -> None:
    value = {
        "subPathExpr": "$(POD_NAME)",
        "mountPropagation": "HostToContainer",
        "recursiveReadOnly": "Disabled",
    }[detail]
    mount = {"name": "engine-config", "mountPath": "/etc/engine", detail: value}
    graph = beta_graph()
    graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["volumeMounts"] = [mount]
    assert mount_at(container(deployment_pod(graph), "main"), "/etc/engine") == mount


def test_a_read_only_mount_reaches_the_pod_clique_set() -> None:
    pcs = desired_pod_clique_set(as_read(beta_graph()), CTX)
    [clique] = [q for q in pcs["spec"]["template"]["cliques"] if q["name"] == "decode"]
    main = container(clique["spec"]["podSpec"], "main")
    assert mount_at(main, CONFIG_MOUNT["mountPath"]) == CONFIG_MOUNT


def test_a_named_frontend_sidecar_is_completed_with_the_frontend_defaults() -> None:
    sidecar = container(deployment_pod(with_sidecar(beta_graph())), "sidecar-frontend")
    assert sidecar["image"] == SIDECAR_IMAGE
    assert sidecar["command"] == ["python3"]
    assert [p["containerPort"] for p in sidecar["ports"]] == [8000]
    assert sidecar["readinessProbe"]["httpGet"]["path"] == "/health"
    env = {e["name"]: e.get("value") for e in sidecar["env"]}
    assert env["DYN_COMPONENT"] == "frontend"
    assert env["DYN_NAMESPACE"] == f"{NS}-g"


def test_the_users_fields_win_over_the_sidecar_defaults() -> None:
    user = {
        "name": "sidecar-frontend",
        "image": SIDECAR_IMAGE,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
        "env": [{"name": "DYN_HTTP_PORT", "value": "9000"}],
    }
    sidecar = container(deployment_pod(with_sidecar(beta_graph(), user)), "sidecar-frontend")
    assert sidecar["args"] == user["args"]
    assert {e["name"]: e.get("value") for e in sidecar["env"]}["DYN_HTTP_PORT"] == "9000"


def test_the_sidecar_shares_the_main_containers_mounts() -> None:
    sidecar = container(deployment_pod(with_sidecar(beta_graph())), "sidecar-frontend")
    assert mount_at(sidecar, CONFIG_MOUNT["mountPath"]) == CONFIG_MOUNT


def test_the_stored_dcd_names_its_frontend_sidecar() -> None:
    assert stored_dcd(with_sidecar(beta_graph()))["spec"]["frontendSidecar"] == "sidecar-frontend"


def test_a_frontend_sidecar_naming_no_container_is_refused() -> None:
    graph = with_sidecar(beta_graph())
    read = as_read(graph)
    payload = preserve.decode_spec(read["metadata"]["annotations"][preserve.DGD_SPEC])
    assert payload is not None
    [decode] = [c for c in payload["components"] if c["name"] == "decode"]
    decode["frontendSidecar"] = "no-such-container"
    read["metadata"]["annotations"][preserve.DGD_SPEC] = preserve.encode_spec(payload)
    with pytest.raises(GenerationError, match="no-such-container"):
        desired_pod_clique_set(read, CTX)


def test_a_frontend_sidecar_without_an_image_is_refused() -> None:
    graph = with_sidecar(beta_graph(), {"name": "sidecar-frontend"})
    with pytest.raises(GenerationError, match="image"):
        desired_pod_clique_set(as_read(graph), CTX)


def test_a_graph_written_as_v1alpha1_has_no_remainder() -> None:
    assert remainder.of_graph({"name": "g"}) == {}


@pytest.mark.parametrize(
    "damaged",
    [
        "not json",
        json.dumps([1, 2]),
        json.dumps({"version": 1, "spec": "x"}),
        "[" * 100 + "]" * 100,
        "x" * (300 * 1024),
    ],
)
def test_a_damaged_payload_reads_as_no_remainder(damaged: str) -> None:
    meta = {"annotations": {preserve.DGD_SPEC: damaged, preserve.DCD_SPEC: damaged}}
    assert remainder.of_graph(meta) == {}
    assert remainder.of_dcd(meta) is remainder.NONE


def test_a_stale_payload_does_not_undo_an_edit_in_the_other_version() -> None:
    """The mount moved in v1alpha1 after its details were recorded: the old mount is not put back."""
    dcd = decode_dcd(beta_graph())
    dcd["spec"]["volumeMounts"] = [{"name": "engine-config", "mountPoint": "/elsewhere"}]
    stored = dict(convert(dcd, V1BETA1))
    main = container(stored["spec"]["podTemplate"]["spec"], "main")
    assert [m["mountPath"] for m in main["volumeMounts"]] == ["/elsewhere"]


@pytest.mark.parametrize(
    ("container", "says"),
    [(None, "does not have"), ({"name": "sidecar-frontend"}, "no image")],
    ids=["no-such-container", "no-image"],
)
def test_the_graph_is_refused_before_anything_is_written_for_a_bad_named_sidecar(
    container: Obj | None, says: str
) -> None:
    graph = with_sidecar(beta_graph(), container or {"name": "other", "image": SIDECAR_IMAGE})
    with pytest.raises(GenerationError, match=says) as caught:
        validate_graph(as_read(graph), CTX)
    assert caught.value.field == "spec.services.decode.frontendSidecar"


def test_the_stored_dcd_holds_the_pod_template_metadata_upstream_writes() -> None:
    graph = beta_graph()
    graph["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": "1.5.0"}
    stored = stored_dcd(graph)
    metadata = stored["spec"]["podTemplate"]["metadata"]
    assert (
        metadata["labels"]["nvidia.com/dynamo-worker-hash"]
        == stored["metadata"]["labels"]["nvidia.com/dynamo-worker-hash"]
    )
    assert metadata["annotations"]["nvidia.com/dynamo-operator-origin-version"] == "1.5.0"


def test_the_origin_version_in_the_pod_template_metadata_stays_off_the_pods() -> None:
    graph = beta_graph()
    graph["metadata"]["annotations"] = {"nvidia.com/dynamo-operator-origin-version": "1.5.0"}
    objs = desired_component_objects(as_read(stored_dcd(graph)), CTX)
    [deployment] = [o for o in objs if o["kind"] == "Deployment"]
    template = deployment["spec"]["template"]["metadata"]
    assert "nvidia.com/dynamo-operator-origin-version" not in (template.get("annotations") or {})
    assert template["labels"]["nvidia.com/dynamo-worker-hash"]
