"""`render` shows everything: optional APIs switched on by `--with-*` flags (one table row each), pull
secrets discovered from a `--secrets` file, several DGDs per file, other kinds skipped with a note,
and unknown fields refused by the generated CRD schema as the API server refuses them."""

from __future__ import annotations

import base64
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.__main__ import main
from dynamo_operator.flags import build_parser, render_capabilities
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, parse_secrets, render_objects
from dynamo_operator.internal.optional_api_table import OPTIONAL_APIS, RENDER_APIS, OptionalApi

IMAGE = "registry.example:5000/ai-dynamo/vllm-runtime:0.6.1"


def graph(name: str = "g", *, namespace: str | None = None, **services: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {
            "backendFramework": "vllm",
            "services": services
            or {
                "Frontend": {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
            },
        },
    }


def worker(**extra: Any) -> dict[str, Any]:
    main_container = {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "m"]}
    return {"componentType": "worker", "extraPodSpec": {"mainContainer": main_container}, **extra}


def text(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(list(docs))


def render(*docs: dict[str, Any], notes: list[str] | None = None, **caps: bool) -> list[dict[str, Any]]:
    options = RenderOptions(namespace="ns1", capabilities=Capabilities(**caps))
    return render_objects(text(*docs), options, note=(notes.append if notes is not None else lambda _: None))


def kinds_of(objects: list[dict[str, Any]]) -> set[str]:
    return {o["kind"] for o in objects}


# --- the flag table -------------------------------------------------------------------------------


def test_render_flags_are_unique() -> None:
    """An API without one is either built in (DRA: `render` assumes it served) or read by nothing
    generation does."""
    assert RENDER_APIS and all(api in OPTIONAL_APIS for api in RENDER_APIS)
    flags = [api.render.flag for api in RENDER_APIS if api.render]
    assert len(set(flags)) == len(flags)


@pytest.mark.parametrize(
    "api", [pytest.param(api, id=api.render.flag if api.render else api.name) for api in RENDER_APIS]
)
def test_each_flag_switches_on_exactly_its_api(api: OptionalApi) -> None:
    assert api.render is not None
    caps = render_capabilities(build_parser().parse_args(["render", "-f", "g.yaml", api.render.flag]))
    assert {f.name for f in dataclasses.fields(caps) if getattr(caps, f.name)} == {api.name}


def test_without_flags_no_optional_api_is_assumed() -> None:
    assert render_capabilities(build_parser().parse_args(["render", "-f", "g.yaml"])) == Capabilities()


# --- what each flag shows -------------------------------------------------------------------------

MULTINODE = graph(Worker=worker(multinode={"nodeCount": 2}))
EPP = graph(
    Epp={
        "componentType": "epp",
        "replicas": 1,
        "eppConfig": {"config": {"plugins": [], "schedulingProfiles": []}},
        "extraPodSpec": {"mainContainer": {"image": IMAGE}},
    },
    Worker=worker(),
)
VIRTUAL_SERVICE = graph(
    Frontend={
        "componentType": "frontend",
        "ingress": {
            "enabled": True,
            "host": "chat",
            "useVirtualService": True,
            "virtualServiceGateway": "gw",
        },
        "extraPodSpec": {"mainContainer": {"image": IMAGE}},
    }
)


def test_with_lws_renders_multinode_as_leader_worker_sets() -> None:
    assert "LeaderWorkerSet" in kinds_of(render(MULTINODE, lws=True))
    with pytest.raises(ValueError, match="LeaderWorkerSet"):
        render(MULTINODE)


def test_with_volcano_renders_multinode_without_pod_groups() -> None:
    """Upstream 2a6da14c gang-schedules LeaderWorkerSets without Volcano PodGroups: the flag changes
    nothing for them."""
    assert render(MULTINODE, lws=True, volcano=True) == render(MULTINODE, lws=True)


def test_with_inference_extension_renders_the_inference_pool() -> None:
    assert "InferencePool" in kinds_of(render(EPP, gateway_inference_extension=True))
    with pytest.raises(ValueError, match="InferencePool"):
        render(EPP)


def test_with_istio_renders_the_virtual_service() -> None:
    assert "VirtualService" in kinds_of(render(VIRTUAL_SERVICE, istio=True))
    with pytest.raises(ValueError, match="VirtualService"):
        render(VIRTUAL_SERVICE)


# --- pull secrets from a file ---------------------------------------------------------------------


def docker_secret(
    name: str, host: str, *, namespace: str | None = None, string_data: bool = False
) -> dict[str, Any]:
    config = json.dumps({"auths": {host: {"auth": base64.b64encode(b"u:p").decode()}}})
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    payload = (
        {"stringData": {".dockerconfigjson": config}}
        if string_data
        else {"data": {".dockerconfigjson": base64.b64encode(config.encode()).decode()}}
    )
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/dockerconfigjson",
        "metadata": meta,
        **payload,
    }


def pull_secrets(objects: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for obj in objects:
        if obj["kind"] == "Deployment":
            out |= {s["name"] for s in obj["spec"]["template"]["spec"].get("imagePullSecrets") or ()}
    return out


def render_with_secrets(*secrets: dict[str, Any], notes: list[str] | None = None) -> list[dict[str, Any]]:
    found = parse_secrets(
        text(*secrets), namespace="ns1", note=(notes.append if notes is not None else print)
    )
    return render_objects(text(graph(Worker=worker())), RenderOptions(namespace="ns1", secrets=found))


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        pytest.param(docker_secret("regcred", "registry.example:5000"), {"regcred"}, id="same-host-and-port"),
        pytest.param(
            docker_secret("regcred", "registry.example:5000", string_data=True), {"regcred"}, id="stringData"
        ),
        pytest.param(
            docker_secret("other", "registry.example"), set(), id="host-without-the-port-does-not-match"
        ),
        pytest.param(
            docker_secret("elsewhere", "registry.example:5000", namespace="ns2"), set(), id="other-namespace"
        ),
    ],
)
def test_pull_secrets_are_discovered_as_the_operator_does(secret: dict[str, Any], expected: set[str]) -> None:
    assert pull_secrets(render_with_secrets(secret)) == expected


def test_secrets_file_skips_other_documents_with_a_note() -> None:
    notes: list[str] = []
    opaque = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "plain"}}
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    objects = render_with_secrets(
        opaque, config_map, docker_secret("regcred", "registry.example:5000"), notes=notes
    )
    assert pull_secrets(objects) == {"regcred"}
    assert len(notes) == 2 and "Secret/plain" in notes[0] and "ConfigMap/cm" in notes[1]


def test_a_kind_list_of_secrets_is_unwrapped() -> None:
    wrapped = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [docker_secret("regcred", "registry.example:5000")],
    }
    assert pull_secrets(render_with_secrets(wrapped)) == {"regcred"}


def test_an_unreadable_docker_secret_refuses_the_file() -> None:
    broken = {**docker_secret("bad", "x"), "data": {".dockerconfigjson": "not base64!"}}
    with pytest.raises(ValueError, match="Secret/bad"):
        parse_secrets(text(broken), namespace="ns1", note=print)


# --- several documents ----------------------------------------------------------------------------


def test_every_graph_of_a_file_is_rendered() -> None:
    objects = render(graph("one"), graph("two", namespace="ns2"))
    dcds = {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in objects
        if o["kind"] == "DynamoComponentDeployment"
    }
    assert dcds == {("ns1", "one-frontend"), ("ns2", "two-frontend")}


def test_other_kinds_are_skipped_with_a_note_each() -> None:
    notes: list[str] = []
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mine"}}
    objects = render(deployment, graph("one"), {"kind": "ConfigMap", "metadata": {"name": "cm"}}, notes=notes)
    assert not any(o["metadata"]["name"] == "mine" for o in objects)
    assert [("Deployment/mine" in n, "ConfigMap/cm" in n) for n in notes] == [(True, False), (False, True)]


def test_one_bad_graph_refuses_the_whole_file_naming_it() -> None:
    bad = graph("two")
    bad["spec"]["services"]["Frontend"]["replicas"] = -1
    with pytest.raises(ValueError, match=r"document 2 \(DynamoGraphDeployment/two\)"):
        render(graph("one"), bad)


# --- unknown fields -------------------------------------------------------------------------------


def with_field(path: list[str | int], value: Any) -> dict[str, Any]:
    doc = graph(
        Worker=worker(envs=[{"name": "A", "value": "b"}]), Frontend=graph()["spec"]["services"]["Frontend"]
    )
    doc["spec"]["pvcs"] = [{"name": "p", "create": False}]
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    ("path", "reported"),
    [
        pytest.param(["bogus"], "bogus", id="top-level"),
        pytest.param(["spec", "servcies"], "spec.servcies", id="spec-typo"),
        pytest.param(
            ["spec", "services", "Worker", "replica"], "spec.services.Worker.replica", id="service-typo"
        ),
        pytest.param(
            ["spec", "services", "Worker", "extraPodSpec", "mainContainer", "imagee"],
            "spec.services.Worker.extraPodSpec.mainContainer.imagee",
            id="inside-a-core-type",
        ),
        pytest.param(
            ["spec", "services", "Worker", "envs", 0, "valu"],
            "spec.services.Worker.envs[0].valu",
            id="list-item",
        ),
        pytest.param(["spec", "pvcs", 0, "sise"], "spec.pvcs[0].sise", id="pvc-entry"),
    ],
)
def test_unknown_fields_are_refused_as_the_api_server_does(path: list[str | int], reported: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f'unknown field "{reported}"')):
        render(with_field(path, 1))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(["metadata", "labels", "anything"], id="map-of-strings"),
        pytest.param(["spec", "services", "NewService"], id="services-map-key"),
    ],
)
def test_declared_free_form_places_accept_any_key(path: list[str | int]) -> None:
    value: Any = "x" if path[0] == "metadata" else graph()["spec"]["services"]["Frontend"]
    doc = with_field(path, value) if path[0] != "metadata" else graph()
    if path[0] == "metadata":
        doc["metadata"]["labels"] = {"anything": "x"}
    assert render(doc)


def test_preserve_unknown_fields_subtrees_accept_anything() -> None:
    """An EPP's inline config keeps fields beyond its typed ones (x-kubernetes-preserve-unknown-fields)
    and hands them to the picker's ConfigMap."""
    epp = json.loads(json.dumps(EPP))
    config = epp["spec"]["services"]["Epp"]["eppConfig"]["config"]
    config["whatever"] = {"deep": [1, 2]}
    objects = render(epp, gateway_inference_extension=True)
    [config_map] = [o for o in objects if o["kind"] == "ConfigMap" and "whatever" in json.dumps(o)]
    assert "deep" in json.dumps(config_map["data"])


# --- the command line -----------------------------------------------------------------------------


def test_cli_renders_several_graphs_with_secrets_and_notes_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dgds = tmp_path / "g.yaml"
    dgds.write_text(
        text(graph("one", Worker=worker()), {"kind": "ConfigMap", "metadata": {"name": "cm"}}, graph("two"))
    )
    secrets = tmp_path / "s.yaml"
    secrets.write_text(text(docker_secret("regcred", "registry.example:5000")))
    assert main(["render", "-f", str(dgds), "--secrets", str(secrets), "-n", "ns1"]) == 0
    out, err = capsys.readouterr()
    objects = list(yaml.safe_load_all(out))
    names = {o["metadata"]["name"] for o in objects if o["kind"] == "DynamoComponentDeployment"}
    assert "two-frontend" in names and any(n.startswith("one-worker-") for n in names)
    assert pull_secrets(objects) == {"regcred"}
    assert "ConfigMap/cm" in err and err.startswith("dynamo-operator render: ")


def test_cli_refusal_prints_nothing_on_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dgds = tmp_path / "g.yaml"
    dgds.write_text(text(graph("one"), with_field(["spec", "bogus"], 1)))
    assert main(["render", "-f", str(dgds)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and 'unknown field "spec.bogus"' in err
