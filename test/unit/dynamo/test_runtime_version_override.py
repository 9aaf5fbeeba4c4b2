"""`runtimeVersionOverride` in worker hash v2 (internal/dynamo/rollout/workerhash_v2.py), as upstream
2a6da14c resolves it (internal/dynamo/hash.go, internal/runtimeversion): a component's Dynamo runtime
version is its override when one is set, else its main image's tag; from 1.5.0 on it is hashed as
"X.Y.Z" beside the worker DCD, while the raw override is left out of the hashed spec. So an explicit
version equal to the image's hashes like none, and correcting the override without a new image starts
a new worker generation.

Pinned to upstream's data: the vLLM disaggregated example, whose workers run 1.5.0 images, as
upstream's operator deployed it (hash 9eaeebc7, the value upstream recorded). Upstream keys no pod
rendering by the runtime version at 2a6da14c (its one runtime gate, CanaryHealthChecks, is declared
and used nowhere), so the hash is the whole of the override's effect on generation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import hash_input, runtime_version, worker_hash_v2

Obj = dict[str, Any]
UPSTREAM = Path(__file__).resolve().parents[4] / "shared" / "upstream-examples-2a6da14c"
EXAMPLE = "backends_vllm_disagg"
RECORDED = "9eaeebc7"
WORKERS = ("VllmDecodeWorker", "VllmPrefillWorker")


def _golden() -> tuple[Obj, str]:
    """The example's graph as upstream stored it, read as v1alpha1, in the namespace it ran in
    (`ux<N>`, N its place among the applied file names, sorted: the README's procedure)."""
    applied = sorted(p.name for p in (UPSTREAM / "examples-applied").glob("*.yaml"))
    namespace = f"ux{applied.index(f'{EXAMPLE}.yaml') + 1}"
    text = (UPSTREAM / "golden-conversion" / f"{EXAMPLE}.json").read_text().replace("<ns>", namespace)
    [graph] = [obj for key, obj in json.loads(text).items() if key.startswith("DynamoGraphDeployment/")]
    graph["metadata"]["namespace"] = namespace
    return graph, namespace


def _graph(**overrides: str) -> tuple[Obj, str]:
    graph, namespace = _golden()
    for service, version in overrides.items():
        graph["spec"]["services"][service]["runtimeVersionOverride"] = version
    return graph, namespace


def _hashed_versions(graph: Obj, namespace: str) -> dict[str, str | None]:
    document = json.loads(hash_input(graph, namespace))
    return {name: template.get("runtimeVersion") for name, template in document.items()}


def test_the_golden_graph_hashes_its_images_version() -> None:
    graph, namespace = _graph()
    assert _hashed_versions(graph, namespace) == dict.fromkeys(WORKERS, "1.5.0")
    assert worker_hash_v2(graph, namespace) == RECORDED


@pytest.mark.parametrize("version", ["1.5.0", "1.5.0-rc.1+build.7"])
def test_an_override_equal_to_the_images_version_hashes_like_none(version: str) -> None:
    graph, namespace = _graph(**dict.fromkeys(WORKERS, version))
    assert worker_hash_v2(graph, namespace) == RECORDED


def test_correcting_the_override_without_a_new_image_starts_a_new_generation() -> None:
    graph, namespace = _graph(VllmDecodeWorker="1.6.0")
    assert _hashed_versions(graph, namespace) == {"VllmDecodeWorker": "1.6.0", "VllmPrefillWorker": "1.5.0"}
    assert worker_hash_v2(graph, namespace) != RECORDED


def test_an_override_older_than_1_5_takes_the_version_out_of_the_hash() -> None:
    """The override wins over the image even downwards; versions before 1.5.0 are not hashed."""
    graph, namespace = _graph(**dict.fromkeys(WORKERS, "1.4.0"))
    assert _hashed_versions(graph, namespace) == dict.fromkeys(WORKERS, None)
    assert worker_hash_v2(graph, namespace) != RECORDED


def test_an_override_that_does_not_parse_does_not_fall_back_to_the_image() -> None:
    graph, namespace = _graph(VllmDecodeWorker="v1.5.0")
    assert _hashed_versions(graph, namespace)["VllmDecodeWorker"] is None


def test_an_override_names_the_version_of_an_image_without_one() -> None:
    graph, namespace = _graph(VllmDecodeWorker="1.7.2")
    main = graph["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"]
    main["image"] = "registry.example/vllm-runtime:my-tag"
    assert _hashed_versions(graph, namespace)["VllmDecodeWorker"] == "1.7.2"


def test_a_frontends_override_does_not_change_the_hash() -> None:
    graph, namespace = _graph(Frontend="1.9.0")
    assert worker_hash_v2(graph, namespace) == RECORDED


def test_a_version_part_beyond_uint64_is_no_version() -> None:
    """Upstream parses each part into a uint64 and resolves nothing when one overflows."""
    assert runtime_version("img:1.5.0", "18446744073709551616.0.0") == ""
    assert runtime_version("img:18446744073709551615.0.0", "") == "18446744073709551615.0.0"
