"""The profiler output parser's hard limits: every hostile shape is refused with the limit named, before
it costs memory, and a normal output still parses. Memory figures are printed (`pytest -s`) for the
issue's note."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator

import pytest
import yaml
from dynamo_operator.internal.dynamo.dgdr.output import (
    LIMITS,
    OutputLimitExceeded,
    ProfileOutputError,
    load_documents,
    parse_output,
)

DGD = """apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: gen
spec:
  services:
    Frontend: {componentType: frontend, replicas: 1}
    VllmDecodeWorker:
      componentType: decode
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0
          args: ["--model", "Qwen/Qwen3-0.6B"]
"""


def laughs(levels: int, fanout: int = 10) -> str:
    """The billion-laughs shape: each anchor a list of `fanout` aliases of the one before."""
    lines = ['l0: &l0 "lol"']
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]")
    return "\n".join(lines) + "\n"


def merge_bomb(levels: int) -> str:
    """The same growth through merge keys: each mapping merges the one before twice."""
    lines = ["m0: &m0 {a: lol, b: lol}"]
    for i in range(1, levels + 1):
        lines.append(f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: x}}")
    return "\n".join(lines) + "\n"


def big_scalar_repeated() -> str:
    """One large string, aliased many times: few nodes, a huge result once written out."""
    return f"s: &s {'x' * 100_000}\nlist: [{', '.join(['*s'] * 100)}]\n"


@pytest.fixture
def peak() -> Iterator[Callable[[], int]]:
    """Bytes allocated at the peak since the test began (tracemalloc)."""
    tracemalloc.start()
    try:
        yield lambda: tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_billion_laughs_bomb_is_refused_before_expanding(peak: Callable[[], int]) -> None:
    """Eight levels of ten: 414 bytes that `yaml.safe_load` turns into 10**8 references, past 1 GiB
    as JSON. Refused on the expanded size while composing; nothing is expanded."""
    text = laughs(8)
    with pytest.raises(OutputLimitExceeded, match="expanded size limit") as refused:
        load_documents(text)
    assert refused.value.limit == "expanded size"
    used = peak()
    print(f"\nbillion laughs (8 levels, {len(text)} bytes): refused, tracemalloc peak {used / 1024:.0f} KiB")
    assert used < 1024 * 1024


def test_the_expanded_size_limit_falls_between_five_and_six_levels() -> None:
    """The reference figure: PyYAML's own safe loader on six levels, written out as JSON, is past the
    limit (and grows ten-fold per level); five levels pass."""
    text = laughs(6)
    expanded = len(json.dumps(yaml.safe_load(text)))
    print(f"\nsafe_load + json.dumps, 6 levels: {len(text)} bytes -> {expanded / 1e6:.1f} MB (x10 a level)")
    assert expanded > LIMITS.max_expanded
    with pytest.raises(OutputLimitExceeded, match="expanded size"):
        load_documents(text)
    assert load_documents(laughs(5))


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        pytest.param(merge_bomb(22), "expanded size", id="merge-key-bomb"),
        pytest.param(big_scalar_repeated(), "expanded size", id="large-scalar-aliased"),
        pytest.param(
            "base: &b x\nrefs: [" + ", ".join(["*b"] * (LIMITS.max_aliases + 1)) + "]\n",
            "alias count",
            id="too-many-aliases",
        ),
        pytest.param("a: " + "x" * (LIMITS.max_bytes + 1) + "\n", "document size", id="oversize"),
        pytest.param(
            "[" * (LIMITS.max_depth + 1) + "]" * (LIMITS.max_depth + 1), "nesting depth", id="deep-flow"
        ),
        pytest.param(
            "".join(f"{'  ' * i}k{i}:\n" for i in range(LIMITS.max_depth + 1)) + "  " * 65 + "v\n",
            "nesting depth",
            id="deep-block",
        ),
        pytest.param("---\n{}\n" * (LIMITS.max_documents + 1), "document count", id="too-many-documents"),
        pytest.param("[" + ",".join(["1"] * (LIMITS.max_nodes + 1)) + "]", "node count", id="too-many-nodes"),
    ],
)
def test_documents_past_a_limit_are_refused_with_the_limit_named(text: str, limit: str) -> None:
    with pytest.raises(OutputLimitExceeded) as refused:
        parse_output(text + "---\n" + DGD)
    assert refused.value.limit == limit
    assert f"{limit} limit" in str(refused.value)


def test_a_deep_document_is_refused_at_the_limit_not_by_recursion(peak: Callable[[], int]) -> None:
    """Two hundred thousand levels (400 KB) stop at level 65: no RecursionError, little memory."""
    text = "[" * 200_000 + "]" * 200_000
    with pytest.raises(OutputLimitExceeded, match="nesting depth limit"):
        load_documents(text)
    used = peak()
    print(f"\n200,000 levels ({len(text)} bytes): refused, tracemalloc peak {used / 1024:.0f} KiB")
    assert used < 4 * 1024 * 1024


def test_an_alias_of_its_own_ancestor_is_refused() -> None:
    with pytest.raises(ProfileOutputError, match="own ancestor"):
        load_documents("a: &a [1, *a]\n")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("n: " + "9" * 5000 + "\n", id="integer-too-long"),
        pytest.param("t: 2024-13-45\n", id="impossible-timestamp"),
    ],
)
def test_scalars_the_constructor_cannot_convert_are_output_errors(text: str) -> None:
    """Not a crash and not a retry loop: a ProfileOutputError like any invalid output."""
    with pytest.raises(ProfileOutputError):
        load_documents(text)


def test_normal_output_with_a_few_aliases_still_parses() -> None:
    """PyYAML's dumper writes anchors for repeated objects: a handful is fine."""
    shared = {"cpu": "1", "memory": "1Gi"}
    planner = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "planner-profile-data"}}
    planner["data"] = {"prefill.json": json.dumps({"isl": list(range(2000))}), "decode.json": "[]"}
    resources = yaml.safe_dump({"requests": shared, "limits": shared})
    assert "&id001" in resources
    out = parse_output(yaml.safe_dump(planner) + "---\n" + DGD + "---\nresources:\n" + resources)
    assert out.deployment["spec"]["services"]["VllmDecodeWorker"]["componentType"] == "decode"
    assert [e["metadata"]["name"] for e in out.extra] == ["planner-profile-data"]
