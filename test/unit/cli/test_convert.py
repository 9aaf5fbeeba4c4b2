"""`dynamo-operator convert` and `render` of v1beta1 manifests, offline, with the webhook's conversion."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from dynamo_operator.__main__ import MAX_MANIFEST_DEPTH, main
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO.parent / "shared" / "upstream-examples-2a6da14c" / "examples-applied"

GRAPH = {
    "apiVersion": V1BETA1,
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "agg"},
    "spec": {
        "backendFramework": "vllm",
        "components": [
            {
                "name": "Frontend",
                "type": "frontend",
                "replicas": 1,
                "podTemplate": {"spec": {"containers": [{"name": "main", "image": "runtime:1.5.0"}]}},
            },
            {
                "name": "VllmWorker",
                "type": "worker",
                "podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "main",
                                "image": "runtime:1.5.0",
                                "resources": {"limits": {"nvidia.com/gpu": "1"}},
                                "volumeMounts": [{"name": "cfg", "mountPath": "/cfg", "readOnly": True}],
                            }
                        ]
                    }
                },
            },
        ],
    },
}
MODEL = {
    "apiVersion": V1ALPHA1,
    "kind": "DynamoModel",
    "metadata": {"name": "m"},
    "spec": {"baseModelName": "x"},
}


def _write(tmp_path: Path, *docs: object) -> Path:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[object], str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, [d for d in yaml.safe_load_all(out) if d is not None], err


def test_convert_writes_each_graph_in_the_wanted_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, docs, _ = _run(capsys, "convert", "-f", str(_write(tmp_path, GRAPH)), "--to", "v1alpha1")
    assert code == 0
    assert docs == [convert(GRAPH, V1ALPHA1)]
    [graph] = docs
    assert isinstance(graph, dict)
    assert sorted(graph["spec"]["services"]) == ["Frontend", "VllmWorker"]


def test_convert_back_gives_the_manifest_that_went_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, alpha, _ = _run(capsys, "convert", "-f", str(_write(tmp_path, GRAPH)), "--to", "v1alpha1")
    code, beta, _ = _run(capsys, "convert", "-f", str(_write(tmp_path, *alpha)), "--to", "v1beta1")
    assert code == 0
    assert beta == [GRAPH]


def test_convert_leaves_other_documents_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    code, docs, err = _run(
        capsys, "convert", "-f", str(_write(tmp_path, MODEL, GRAPH, secret)), "--to", "v1alpha1"
    )
    assert code == 0
    assert docs == [MODEL, convert(GRAPH, V1ALPHA1), secret]
    assert err.count("left as it is") == 2


def test_convert_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(yaml.safe_dump(GRAPH)))
    code, docs, _ = _run(capsys, "convert", "-f", "-", "--to", "v1alpha1")
    assert (code, docs) == (0, [convert(GRAPH, V1ALPHA1)])


def test_convert_reports_bad_yaml_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("spec: [unclosed\n  x: {")
    code = main(["convert", "-f", str(path), "--to", "v1beta1"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.startswith("dynamo-operator convert: not valid YAML")
    assert err.count("\n") == 1


def test_convert_refuses_a_document_nested_too_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "[" * (MAX_MANIFEST_DEPTH + 5) + "]" * (MAX_MANIFEST_DEPTH + 5) + "\n")
    code = main(["convert", "-f", str(path), "--to", "v1beta1"])
    assert code == 1
    assert "nested deeper" in capsys.readouterr().err


def test_convert_names_a_graph_it_cannot_convert(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    twice = {**GRAPH, "spec": {"components": [{"name": "a"}, {"name": "a"}]}}
    code = main(["convert", "-f", str(_write(tmp_path, twice)), "--to", "v1alpha1"])
    assert code == 1
    assert "document 1 (DynamoGraphDeployment/agg): duplicate component name" in capsys.readouterr().err


def test_convert_refuses_an_unknown_version() -> None:
    with pytest.raises(SystemExit):
        main(["convert", "-f", "x.yaml", "--to", "v2"])


def test_render_of_a_v1beta1_graph_is_that_of_its_v1alpha1_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = copy.deepcopy(GRAPH)
    del graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["volumeMounts"]  # needs a PVC
    code_beta, from_beta, _ = _run(capsys, "render", "-f", str(_write(tmp_path, graph)))
    code_alpha, from_alpha, _ = _run(capsys, "render", "-f", str(_write(tmp_path, convert(graph, V1ALPHA1))))
    assert (code_beta, code_alpha) == (0, 0)
    assert from_beta == from_alpha
    kinds = {d["kind"] for d in from_beta if isinstance(d, dict)}
    assert {"DynamoComponentDeployment", "Deployment"} <= kinds


def imageless_worker() -> dict[str, object]:
    graph = copy.deepcopy(GRAPH)
    worker = graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    del worker["volumeMounts"], worker["image"]
    return graph


def test_render_refuses_a_v1beta1_graph_naming_the_field_as_v1beta1_spells_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "render", "-f", str(_write(tmp_path, imageless_worker())))
    assert code == 1
    field = "spec.components[name=VllmWorker].podTemplate.spec.containers[name=main].image"
    assert f"DynamoGraphDeployment/agg: {field}: required" in err


def test_render_refuses_a_v1alpha1_graph_in_its_own_terms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = convert(imageless_worker(), V1ALPHA1)
    code, _, err = _run(capsys, "render", "-f", str(_write(tmp_path, alpha)))
    assert code == 1
    assert "DynamoGraphDeployment/agg: spec.services.VllmWorker.extraPodSpec.mainContainer.image" in err


def configless_epp() -> dict[str, object]:
    """A graph whose endpoint picker has no config: refused by the graph-level objects, which are
    read from the stored form (graph/components.py), not by a component's workload."""
    graph = copy.deepcopy(GRAPH)
    del graph["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["volumeMounts"]
    graph["spec"]["components"].append(
        {
            "name": "Epp",
            "type": "epp",
            "replicas": 1,
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img"}]}},
        }
    )
    return graph


@pytest.mark.parametrize(
    ("version", "field"),
    [(V1BETA1, "spec.components[name=Epp].eppConfig"), (V1ALPHA1, "spec.services.Epp.eppConfig")],
)
def test_render_names_a_graph_level_refusal_in_the_graphs_own_terms(
    version: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = convert(configless_epp(), version)
    code, _, err = _run(capsys, "render", "-f", str(_write(tmp_path, graph)), "--with-inference-extension")
    assert code == 1
    assert f"DynamoGraphDeployment/agg: {field}: one of config or configMapRef is required" in err


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_convert_round_trips_every_upstream_example(
    example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = [d for d in yaml.safe_load_all((EXAMPLES / example).read_text()) if d is not None]
    _, alpha, _ = _run(capsys, "convert", "-f", str(EXAMPLES / example), "--to", "v1alpha1")
    _, beta, _ = _run(capsys, "convert", "-f", str(_write(tmp_path, *alpha)), "--to", "v1beta1")
    assert beta == original


def test_convert_converts_the_items_of_a_list_as_kubectl_get_writes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kubectl get dgd -o yaml` writes a `v1` List: its items are the manifests to migrate."""
    listed = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [GRAPH, MODEL]}
    code, docs, err = _run(capsys, "convert", "-f", str(_write(tmp_path, listed)), "--to", "v1alpha1")
    assert code == 0
    assert docs == [{**listed, "items": [convert(GRAPH, V1ALPHA1), MODEL]}]
    assert "document 1 item 2 (DynamoModel) left as it is" in err


def test_convert_gives_a_typed_list_the_version_of_its_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = {"apiVersion": V1BETA1, "kind": "DynamoGraphDeploymentList", "items": [GRAPH]}
    code, docs, _ = _run(capsys, "convert", "-f", str(_write(tmp_path, typed)), "--to", "v1alpha1")
    assert code == 0
    assert docs == [
        {"apiVersion": V1ALPHA1, "kind": "DynamoGraphDeploymentList", "items": [convert(GRAPH, V1ALPHA1)]}
    ]


def test_convert_names_the_list_item_it_cannot_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice = {**GRAPH, "spec": {"components": [{"name": "a"}, {"name": "a"}]}}
    listed = {"apiVersion": "v1", "kind": "List", "items": [GRAPH, twice]}
    code = main(["convert", "-f", str(_write(tmp_path, listed)), "--to", "v1alpha1"])
    assert code == 1
    assert (
        "document 1 item 2 (DynamoGraphDeployment/agg): duplicate component name" in capsys.readouterr().err
    )


LAYERED = {
    "apiVersion": V1ALPHA1,
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "legacy"},
    "spec": {
        "services": {
            "Frontend": {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": "img"}}},
            "Worker": {
                "componentType": "worker",
                "envs": [{"name": "A", "value": "flat"}],
                "extraPodSpec": {"mainContainer": {"image": "img", "env": [{"name": "A", "value": "main"}]}},
            },
        }
    },
}


def test_convert_names_a_component_whose_pods_its_pod_template_alone_would_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, docs, err = _run(capsys, "convert", "-f", str(_write(tmp_path, LAYERED)), "--to", "v1beta1")
    assert (code, docs) == (0, [convert(LAYERED, V1BETA1)])
    assert "(DynamoGraphDeployment/legacy): Worker: an env name in envs and in the main container" in err
    assert "nvidia.com/dgd-spec annotation" in err
    assert "Frontend" not in err


def test_convert_names_a_graph_env_the_main_container_sets_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = copy.deepcopy(LAYERED)
    del graph["spec"]["services"]["Worker"]["envs"]
    graph["spec"]["envs"] = [{"name": "A", "value": "graph"}]
    _, _, err = _run(capsys, "convert", "-f", str(_write(tmp_path, graph)), "--to", "v1beta1")
    assert "Worker: an env name in envs and in the main container" in err


def test_convert_says_nothing_of_components_their_pod_template_states(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = convert(GRAPH, V1ALPHA1)
    _, _, err = _run(capsys, "convert", "-f", str(_write(tmp_path, alpha)), "--to", "v1beta1")
    assert err == ""
