"""A DGDR's status after a transition: state, conditions, the state's fields; generation when taken in."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.dgdr.machine import State, Transition, Validated, advance
from dynamo_operator.internal.dynamo.dgdr.status import request_status
from dynamo_operator.internal.dynamo.dgdr.vocabulary import ConditionSpec, ConditionType, Reason

T0 = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=1)


def test_validation_takes_in_the_generation_and_the_backend() -> None:
    t = advance(State.INITIAL, Validated())
    out = request_status({}, t, {}, generation=2, backend="vllm", now=T0)
    assert (out["state"], out["observedGeneration"], out["backend"]) == ("Pending", 2, "vllm")


@pytest.mark.parametrize(
    ("old", "fields", "expected"),
    [
        pytest.param(
            {}, {"profilingResults": "configmap/x"}, {"profilingResults": "configmap/x"}, id="new-field"
        ),
        pytest.param({"profilingResults": "a"}, {}, {"profilingResults": "a"}, id="old-field-kept"),
        pytest.param(
            {"deployment": {"state": "pending"}}, {"deployment": {"state": "successful"}}, None, id="replaced"
        ),
    ],
)
def test_the_states_fields_go_over_the_old_status(
    old: dict[str, Any], fields: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    out = request_status(old, Transition(State.PROFILING), fields, generation=1, backend="vllm", now=T0)
    for key, value in (expected or fields).items():
        assert out[key] == value
    assert "observedGeneration" not in out  # a transition that does not take the spec in observes nothing


def test_the_old_status_is_not_changed_in_place() -> None:
    old: dict[str, Any] = {"deployment": {"state": "pending"}, "conditions": []}
    request_status(
        old, Transition(State.READY), {"deployment": {"state": "x"}}, generation=1, backend=None, now=T0
    )
    assert old == {"deployment": {"state": "pending"}, "conditions": []}


def test_a_condition_keeps_its_time_until_its_status_flips() -> None:
    spec = ConditionSpec(ConditionType.VALIDATION, False, Reason.REFERENCE_NOT_FOUND, "waiting")
    first = request_status({}, Transition(State.INITIAL, (spec,)), {}, generation=1, backend=None, now=T0)
    again = request_status(first, Transition(State.INITIAL, (spec,)), {}, generation=1, backend=None, now=T1)
    assert again == first
    [cond] = first["conditions"]
    assert cond == {
        "type": "Validation",
        "status": "False",
        "reason": "ReferenceNotFound",
        "message": "waiting",
        "lastTransitionTime": "2026-11-22T08:00:00Z",
        "observedGeneration": 1,
    }
