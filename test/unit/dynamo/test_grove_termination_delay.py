"""`--grove-termination-delay` (operator/flags.py, internal/dynamo/grove/duration.py): the PodCliqueSet's
`terminationDelay`, upstream's `orchestrators.grove.terminationDelay`. Its operator defaults to 15m; its
platform chart sets 4h, which is what the goldens were made with (`4h0m0s`)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from compat.generate import SHAPES, gen_context
from compat.goldens import SET_2A6DA14C, discover, load_golden
from dynamo_operator.context import Capabilities, settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal.dynamo.grove.duration import canonical
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set

GROVE = next(s for s in SHAPES if s.name == "golden-grove")


GRAPH: dict[str, Any] = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns", "uid": "u"},
    "spec": {
        "services": {
            "Frontend": {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": "img"}}}
        }
    },
}


def _template(*flags: str) -> dict[str, Any]:
    options = options_from_args(build_parser().parse_args(list(flags)), environ={})
    ctx = settings_from(options, Capabilities(grove=True)).gen_context("ns")
    template: dict[str, Any] = desired_pod_clique_set(GRAPH, ctx)["spec"]["template"]
    return template


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("4h", "4h0m0s", id="hours"),
        pytest.param("15m", "15m0s", id="minutes"),
        pytest.param("1h30m", "1h30m0s", id="hours-minutes"),
        pytest.param("90m", "1h30m0s", id="minutes-carried"),
        pytest.param("45s", "45s", id="seconds"),
        pytest.param("4h0m0s", "4h0m0s", id="go-form-unchanged"),
        pytest.param("0", "0s", id="zero"),
    ],
)
def test_durations_are_written_as_go_prints_them(text: str, expected: str) -> None:
    assert canonical(text) == expected


@pytest.mark.parametrize("text", ["", "4", "4 h", "1d", "-1h", "1.5h", "h", "9000h"])
def test_what_is_not_a_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration|longer than a year"):
        canonical(text)


def test_the_default_is_upstreams_operator_default() -> None:
    assert _template()["terminationDelay"] == "15m0s"


def test_the_flag_sets_the_pod_clique_sets_termination_delay() -> None:
    assert _template("--grove-termination-delay=4h")["terminationDelay"] == "4h0m0s"


def test_zero_leaves_the_delay_to_grove() -> None:
    assert "terminationDelay" not in _template("--grove-termination-delay", "0")


def test_a_bad_value_stops_the_operator_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--grove-termination-delay", "four hours"])
    assert exc.value.code == 2
    assert "--grove-termination-delay" in capsys.readouterr().err


def test_with_upstreams_chart_setting_the_delay_is_the_goldens() -> None:
    """Every PodCliqueSet upstream made carries 4h0m0s, what 4h gives here."""
    examples = [
        ex
        for ex in discover(tuple(s.name for s in SHAPES), SET_2A6DA14C)
        if any(k.startswith("PodCliqueSet/") for k in load_golden(ex, GROVE.name))
    ]
    assert examples
    delays = {
        obj["spec"]["template"].get("terminationDelay")
        for ex in examples
        for key, obj in load_golden(ex, GROVE.name).items()
        if key.startswith("PodCliqueSet/")
    }
    ctx = dataclasses.replace(gen_context(GROVE, SET_2A6DA14C), grove_termination_delay=canonical("4h"))
    assert delays == {desired_pod_clique_set(GRAPH, ctx)["spec"]["template"]["terminationDelay"]}
