"""The profiler's report as its sidecar relays it in the output ConfigMap (`phase`, `message`), read
as upstream's controller reads it, within bounds: the requester's data."""

from __future__ import annotations

import pytest
from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.internal.dynamo.dgdr.machine import ProfilerReport
from dynamo_operator.internal.dynamo.dgdr.progress import MAX_MESSAGE, UnknownStep, read_report


def _cm(**data: str) -> dict[str, object]:
    return {"metadata": {"name": "dgdr-output-r"}, "data": data}


def test_a_relayed_step_and_its_message_are_read() -> None:
    report = read_report(_cm(phase="SweepingPrefill", message="sweeping prefill: tp=4"))
    assert report == ProfilerReport(ProfilingPhase.SWEEPING_PREFILL, "sweeping prefill: tp=4")


def test_the_final_write_keeps_the_last_step_beside_the_results() -> None:
    cm = _cm(phase="Done", message="", **{"config_with_planner.yaml": "kind: X\n"})
    assert read_report(cm) == ProfilerReport(ProfilingPhase.DONE, "")


@pytest.mark.parametrize(
    "cm",
    [
        pytest.param({"metadata": {}}, id="no-data"),
        pytest.param(_cm(**{"config_with_planner.yaml": "kind: X\n"}), id="no-phase-key"),
        pytest.param(_cm(phase="", message=""), id="empty-phase"),
    ],
)
def test_no_step_reported_is_no_report(cm: dict[str, object]) -> None:
    assert read_report(cm) is None


def test_a_step_the_api_does_not_know_is_refused() -> None:
    with pytest.raises(UnknownStep, match="Calibrating"):
        read_report(_cm(phase="Calibrating"))


def test_a_long_message_is_cut_to_the_bound() -> None:
    report = read_report(_cm(phase="Initializing", message="x" * (MAX_MESSAGE * 10)))
    assert report is not None
    assert len(report.message) == MAX_MESSAGE
    assert report.message.endswith("...")
