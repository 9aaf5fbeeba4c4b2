"""The restart phases the restart plan writes are the API's own words."""

from __future__ import annotations

from dynamo_operator.api.v1alpha1.enums import RestartPhase
from dynamo_operator.internal.dynamo.rollout.restart import COMPLETED, RESTARTING


def test_the_written_phases_are_the_api_enumeration_values() -> None:
    assert (RestartPhase.RESTARTING.value, RestartPhase.COMPLETED.value) == (RESTARTING, COMPLETED)


def test_the_written_phases_are_plain_strings() -> None:
    # A str subclass would not survive every serialiser.
    assert type(RESTARTING) is str and type(COMPLETED) is str
