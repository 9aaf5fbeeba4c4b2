"""Start-up discovery of optional APIs: a 404 is "absent", a transient error is retried (bounded),
and an error is never reported as "absent" (the API stays unknown until its CRD is seen)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.context import (
    Capabilities,
    DiscoveryRetry,
    ask,
    capabilities_from_answers,
    detect_answers,
    detect_capabilities,
    is_transient,
)
from dynamo_operator.internal.client import errors
from dynamo_operator.optional_apis import OPTIONAL_APIS, OptionalApi

LWS = next(api for api in OPTIONAL_APIS if api.name == "lws")
RETRY = DiscoveryRetry(attempts=4, base_delay=1.0, max_delay=4.0)


def served(api: OptionalApi) -> list[dict[str, Any]]:
    """A discovery answer listing the API's resource (and its status subresource)."""
    plural = api.resource.plural
    return [{"name": plural, "kind": api.resource.kind}, {"name": f"{plural}/status"}]


class StubDiscovery:
    """Answers per group/version from a script: each call takes the next item (an answer or an
    exception to raise); the last item repeats."""

    def __init__(self, script: dict[str, list[Any]]) -> None:
        self.script = script
        self.calls: dict[str, int] = {}

    async def api_resources(self, group_version: str) -> list[dict[str, Any]] | None:
        n = self.calls.get(group_version, 0)
        self.calls[group_version] = n + 1
        steps = self.script.get(group_version, [None])
        step = steps[min(n, len(steps) - 1)]
        if isinstance(step, BaseException):
            raise step
        return step  # type: ignore[no-any-return]


class Sleeps:
    """An injected sleep that returns at once and records what it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.mark.parametrize(
    ("err", "transient"),
    [
        pytest.param(errors.TransportError("refused", sent=False), True, id="connection-refused"),
        pytest.param(errors.TransportError("reset", sent=True), True, id="connection-reset"),
        pytest.param(TimeoutError(), True, id="timeout"),
        pytest.param(errors.ServerError(503, "ServiceUnavailable"), True, id="503"),
        pytest.param(errors.TooManyRequests(429, "TooManyRequests"), True, id="429"),
        pytest.param(errors.NotFound(404, "NotFound"), False, id="404"),
        pytest.param(errors.Forbidden(403, "Forbidden"), False, id="403"),
        pytest.param(errors.Unauthorized(401, "Unauthorized"), False, id="401"),
        pytest.param(ValueError("bug"), False, id="a-bug"),
    ],
)
def test_retry_classification(err: BaseException, transient: bool) -> None:
    assert is_transient(err) is transient


async def test_a_served_group_version_listing_the_resource_is_served() -> None:
    stub = StubDiscovery({LWS.group_version: [served(LWS)]})
    assert await ask(stub, LWS, retry=RETRY, sleep=Sleeps()) is True


async def test_404_for_the_group_version_is_absent_at_once() -> None:
    """The client turns a 404 into None: one question, no retry."""
    stub = StubDiscovery({LWS.group_version: [None]})
    sleeps = Sleeps()
    assert await ask(stub, LWS, retry=RETRY, sleep=sleeps) is False
    assert stub.calls[LWS.group_version] == 1
    assert sleeps.waits == []


async def test_a_group_version_without_the_resource_is_absent() -> None:
    stub = StubDiscovery({LWS.group_version: [[{"name": "somethingelse"}]]})
    assert await ask(stub, LWS, retry=RETRY, sleep=Sleeps()) is False


async def test_transient_errors_are_retried_with_growing_waits_until_discovery_answers() -> None:
    stub = StubDiscovery(
        {
            LWS.group_version: [
                errors.TransportError("connection refused", sent=False),
                errors.ServerError(503, "ServiceUnavailable"),
                TimeoutError(),
                served(LWS),
            ]
        }
    )
    sleeps = Sleeps()
    assert await ask(stub, LWS, retry=RETRY, sleep=sleeps) is True
    assert stub.calls[LWS.group_version] == 4
    assert len(sleeps.waits) == 3
    # Jitter draws each wait from the upper half of a ceiling that doubles: 1, 2, 4 (the cap).
    for wait, ceiling in zip(sleeps.waits, (1.0, 2.0, 4.0), strict=True):
        assert ceiling / 2 <= wait <= ceiling


async def test_a_transient_error_that_persists_leaves_the_api_unknown_not_absent() -> None:
    stub = StubDiscovery({LWS.group_version: [errors.ServerError(503, "ServiceUnavailable")]})
    sleeps = Sleeps()
    assert await ask(stub, LWS, retry=RETRY, sleep=sleeps) is None
    assert stub.calls[LWS.group_version] == RETRY.attempts  # bounded
    assert len(sleeps.waits) == RETRY.attempts - 1


async def test_a_permanent_error_is_not_retried_and_leaves_the_api_unknown() -> None:
    stub = StubDiscovery({LWS.group_version: [errors.Forbidden(403, "Forbidden")]})
    sleeps = Sleeps()
    assert await ask(stub, LWS, retry=RETRY, sleep=sleeps) is None
    assert stub.calls[LWS.group_version] == 1
    assert sleeps.waits == []


async def test_every_optional_api_is_asked_and_answered_separately() -> None:
    """One API's broken discovery does not change another's answer."""
    by_name = {api.name: api for api in OPTIONAL_APIS}
    stub = StubDiscovery(
        {
            by_name["lws"].group_version: [served(by_name["lws"])],
            by_name["istio"].group_version: [served(by_name["istio"])],
            by_name["grove"].group_version: [errors.ServerError(500, "InternalError")],
        }
    )
    answers = await detect_answers(stub, retry=RETRY, sleep=Sleeps())
    broken = by_name["grove"].group_version  # every API of that group/version stays unknown
    assert answers == {
        api.name: True if api.name in ("lws", "istio") else None if api.group_version == broken else False
        for api in OPTIONAL_APIS
    }
    assert answers["grove"] is None and answers["volcano"] is False
    assert set(stub.calls) == {api.group_version for api in OPTIONAL_APIS}


async def test_each_group_version_is_asked_once_even_when_apis_share_it() -> None:
    """Grove's PodCliqueSet and ClusterTopologyBinding both live in grove.io/v1alpha1: one request
    answers both."""
    grove = [api for api in OPTIONAL_APIS if api.group_version == "grove.io/v1alpha1"]
    assert len(grove) >= 2  # the case this test is about
    stub = StubDiscovery({"grove.io/v1alpha1": [[entry for api in grove for entry in served(api)]]})
    answers = await detect_answers(stub, retry=RETRY, sleep=Sleeps())
    assert all(answers[api.name] is True for api in grove)
    assert stub.calls == {gv: 1 for gv in {api.group_version for api in OPTIONAL_APIS}}


def test_unknown_starts_as_not_served() -> None:
    """Nothing is generated for an API that may be missing; the CRD watch settles it later."""
    assert capabilities_from_answers({"lws": None, "istio": True}) == Capabilities(istio=True)


async def test_detect_capabilities_retries_a_discovery_that_fails_at_first() -> None:
    """The operator's start-up path: a flaky API server does not make LWS "absent"."""
    stub = StubDiscovery(
        {LWS.group_version: [errors.TransportError("connection refused", sent=False), served(LWS)]}
    )
    assert await detect_capabilities(stub, retry=RETRY, sleep=Sleeps()) == Capabilities(lws=True)
