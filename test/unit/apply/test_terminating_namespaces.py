"""Which objects a reconciler leaves alone once a create in their namespace was refused because the
namespace is being deleted (internal/apply/terminating.py)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildWriteError, Desired, TerminatingNamespaces
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller.result import Result
from unit.apply.fakes import (
    OWNER,
    FakeCache,
    FakeRecorder,
    RefusingClient,
    cm,
    namespace_gone,
    syncer,
    terminating_namespace,
)

REFUSED_AT = 1_800_000_000.25  # a quarter past a whole second
HOLD = 10.0


def created(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def obj(namespace: str = "ns", creation: str | None = created(REFUSED_AT - 60)) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "o", "namespace": namespace}
    if creation is not None:
        meta["creationTimestamp"] = creation
    return {"metadata": meta}


def refused_in(namespace: str = "ns") -> tuple[TerminatingNamespaces, FakeClock]:
    clock = FakeClock.at(REFUSED_AT)
    terminating = TerminatingNamespaces(clock=clock, hold=HOLD)
    terminating.refused(namespace)
    return terminating, clock


def test_nothing_is_left_alone_before_a_refusal() -> None:
    assert TerminatingNamespaces().leave_alone(obj()) is None


def test_an_object_older_than_the_refusal_is_left_alone_without_a_requeue() -> None:
    """It goes with the namespace: no event needs to bring it back."""
    terminating, clock = refused_in()
    clock.advance(HOLD - 1)
    assert terminating.leave_alone(obj()) == Result()


@pytest.mark.parametrize(
    "creation", [None, "", "not a time"], ids=["no-creation-time", "empty", "unparsable"]
)
def test_an_object_of_unknown_age_counts_as_older(creation: str | None) -> None:
    terminating, _ = refused_in()
    assert terminating.leave_alone(obj(creation=creation)) == Result()


def test_other_namespaces_are_not_held() -> None:
    terminating, _ = refused_in("going")
    assert terminating.leave_alone(obj(namespace="staying")) is None
    assert terminating.leave_alone(obj(namespace="going")) == Result()


def test_the_hold_ends_after_its_seconds_and_is_forgotten() -> None:
    terminating, clock = refused_in()
    clock.advance(HOLD)
    assert terminating.leave_alone(obj()) is None
    assert len(terminating) == 0


def test_an_object_created_after_the_refusal_drops_the_hold() -> None:
    """Nothing can be created in a namespace being deleted: the namespace is a new one."""
    terminating, clock = refused_in()
    clock.advance(2)
    assert terminating.leave_alone(obj(creation=created(REFUSED_AT + 1))) is None
    assert terminating.leave_alone(obj()) is None  # the hold is gone for everyone in it


def test_an_object_created_in_the_refusals_own_second_is_looked_at_when_the_hold_ends() -> None:
    terminating, clock = refused_in()
    clock.advance(3)
    assert terminating.leave_alone(obj(creation=created(REFUSED_AT))) == Result(requeue_after=HOLD - 3)


@pytest.mark.parametrize("host_ahead", [-5.0, 5.0], ids=["host-clock-behind", "host-clock-ahead"])
def test_ages_are_judged_by_the_servers_clock(host_ahead: float) -> None:
    """The refusal's time is the API server's (its Date header), as creation times are: a host
    clock off by seconds neither holds a new namespace's objects nor frees the old one's."""
    clock = FakeClock.at(REFUSED_AT + host_ahead)
    terminating = TerminatingNamespaces(clock=clock, hold=HOLD)
    terminating.refused("ns", server_time=REFUSED_AT)
    assert terminating.leave_alone(obj(creation=created(REFUSED_AT - 2))) == Result()
    assert terminating.leave_alone(obj(creation=created(REFUSED_AT + 1))) is None


def test_a_later_refusal_renews_the_hold() -> None:
    terminating, clock = refused_in()
    clock.advance(HOLD - 1)
    terminating.refused("ns")
    clock.advance(HOLD - 1)
    assert terminating.leave_alone(obj()) == Result()


def test_a_refusal_drops_the_holds_that_ended_elsewhere() -> None:
    """A namespace that is gone sends no more events, so its entry goes with the next refusal."""
    terminating, clock = refused_in("gone")
    clock.advance(HOLD)
    terminating.refused("going")
    assert len(terminating) == 1


@pytest.mark.parametrize(
    ("error", "held"),
    [
        pytest.param(terminating_namespace(), True, id="namespace-terminating"),
        pytest.param(namespace_gone(), True, id="namespace-gone"),
        pytest.param(
            errors.NotFound(404, "NotFound", "not found", {"kind": "configmaps"}), False, id="not-found"
        ),
        pytest.param(errors.Forbidden(403, "Forbidden", "no RBAC for you"), False, id="rbac"),
        pytest.param(
            errors.Forbidden(403, "Forbidden", 'admission webhook "w" denied the request: no'),
            False,
            id="admission",
        ),
        pytest.param(errors.Invalid(422, "Invalid", "bad"), False, id="invalid"),
    ],
)
async def test_the_syncer_reports_only_refusals_of_a_namespace_going_or_gone(
    error: errors.ApiError, held: bool
) -> None:
    cache = FakeCache()
    terminating = TerminatingNamespaces(clock=FakeClock.at(REFUSED_AT), hold=HOLD)
    child_syncer = syncer(RefusingClient(cache, error), cache, FakeRecorder(), terminating=terminating)
    with pytest.raises(ChildWriteError):
        await child_syncer.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c"))], owned=[kinds.CONFIG_MAP])
    assert (terminating.leave_alone(obj(namespace=OWNER["metadata"]["namespace"])) is not None) == held


async def test_the_syncer_passes_on_the_servers_time_of_the_refusal() -> None:
    cache = FakeCache()
    refusal = terminating_namespace()
    refusal.server_time = REFUSED_AT
    terminating = TerminatingNamespaces(
        clock=FakeClock.at(REFUSED_AT + 30), hold=60
    )  # a host clock 30 s ahead
    child_syncer = syncer(RefusingClient(cache, refusal), cache, FakeRecorder(), terminating=terminating)
    with pytest.raises(ChildWriteError):
        await child_syncer.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c"))], owned=[kinds.CONFIG_MAP])
    assert terminating.leave_alone(obj(creation=created(REFUSED_AT + 1))) is None
