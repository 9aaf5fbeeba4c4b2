"""The metrics filter under a flood of made-up tokens (issue #34), with fake reviewers: a hard bound on
reviews in flight answered with 503 past it, reviews cancelled when nobody waits for them, refusals
that never evict grants, and reviews sent through their own client at LOW priority. The flood against
the real API server is test/integration/runtime_controller/test_runtime_secure_metrics.py."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import aiohttp
import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.config import ClusterConfig, StaticCredentials
from dynamo_operator.internal.client.gate import Priority, current_priority
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.manager import http
from dynamo_operator.internal.manager.metrics_auth import (
    REVIEW_RETRY,
    ApiServerReviewer,
    RequestAuthorizer,
    ReviewUnavailable,
    UserInfo,
    Verdict,
    auth_middleware,
    review_client,
    token_key,
)
from dynamo_operator.internal.manager.review_cache import ReviewCache
from dynamo_operator.internal.manager.review_limit import ReviewBusy, ReviewLimiter
from testsupport.api import eventually

READER = UserInfo("system:serviceaccount:monitoring:prometheus")


class HeldReviewer:
    """Every review waits until `release()`; records starts and cancellations. Only `reader` is valid,
    and READER may get /metrics."""

    def __init__(self, *, free: frozenset[str] = frozenset()) -> None:
        self.free = free  # reviews of these answer at once
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self._gate = asyncio.Event()

    def release(self) -> None:
        self._gate.set()

    async def _hold(self, what: str) -> None:
        self.started.append(what)
        if what in self.free:
            return
        try:
            await self._gate.wait()
        except asyncio.CancelledError:
            self.cancelled.append(what)
            raise

    async def review_token(self, token: str) -> UserInfo | None:
        await self._hold(token)
        return READER if token == "reader" else None

    async def review_access(self, user: UserInfo, verb: str, path: str) -> bool:
        await self._hold(f"access:{user.username}")
        return user == READER


def authorizer(reviewer: Any, *, clock: FakeClock | None = None, **kw: Any) -> RequestAuthorizer:
    """No slots reserved for renewals unless a test asks: the bound is then the whole story."""
    kw.setdefault("reserved_for_renewals", 0)
    return RequestAuthorizer(reviewer, clock=clock or FakeClock(), **kw)


async def settle() -> None:
    """Let every ready task run until none is ready (bounded: a few hundred loop turns)."""
    for _ in range(200):
        await asyncio.sleep(0)


# -- the limiter ------------------------------------------------------------------------------------


def test_the_limiter_refuses_past_its_bound_and_counts_the_peak() -> None:
    """Three slots: the fourth ask is refused and counted; a release makes room again."""
    limiter = ReviewLimiter(3)
    assert [limiter.try_acquire() for _ in range(4)] == [True, True, True, False]
    limiter.release()
    assert limiter.try_acquire() is True
    assert (limiter.in_flight, limiter.peak, limiter.started, limiter.refused) == (3, 3, 4, 1)


def test_reserved_slots_are_only_for_renewals() -> None:
    """Four slots, one reserved: new keys get three, a renewal the fourth, nobody a fifth."""
    limiter = ReviewLimiter(4, reserved=1)
    assert [limiter.try_acquire() for _ in range(4)] == [True, True, True, False]
    assert limiter.try_acquire(known=True) is True
    assert limiter.try_acquire(known=True) is False
    assert (limiter.in_flight, limiter.peak, limiter.refused) == (4, 4, 2)


def test_the_limiter_rejects_a_release_without_an_acquire() -> None:
    """A release that was never acquired is a bug, not a silent negative count."""
    with pytest.raises(AssertionError):
        ReviewLimiter(1).release()


# -- the bound --------------------------------------------------------------------------------------


async def test_requests_past_the_bound_are_refused_at_once_without_a_review() -> None:
    """Bound 2, five distinct tokens at once: two reviews start, three callers get ReviewBusy at once."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=2)
    calls = [
        asyncio.ensure_future(auth.decide(f"Bearer t{i}", verb="get", path="/metrics")) for i in range(5)
    ]
    await settle()
    busy = [c for c in calls if c.done()]
    assert len(busy) == 3
    assert all(isinstance(c.exception(), ReviewBusy) for c in busy)
    assert (len(reviewer.started), auth.limiter.in_flight, auth.limiter.refused) == (2, 2, 3)
    reviewer.release()
    await asyncio.gather(*(c for c in calls if not c.done()))
    assert (auth.limiter.in_flight, auth.limiter.peak) == (0, 2)


async def test_callers_with_the_same_token_share_one_review_and_one_slot() -> None:
    """Bound 1, twenty callers with one token: one review, nobody refused, everybody answered."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=1)
    calls = [
        asyncio.ensure_future(auth.decide("Bearer nobody", verb="get", path="/metrics")) for _ in range(20)
    ]
    await settle()
    reviewer.release()
    assert set(await asyncio.gather(*calls)) == {Verdict.UNAUTHENTICATED}
    assert (reviewer.started, auth.limiter.refused, auth.limiter.peak) == (["nobody"], 0, 1)


async def test_a_cached_answer_needs_no_slot() -> None:
    """With the only slot taken by a hung review, a token already answered is still decided."""
    reviewer = HeldReviewer(free=frozenset({"reader", f"access:{READER.username}"}))
    auth = authorizer(reviewer, max_in_flight=1)
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    pending = asyncio.ensure_future(auth.decide("Bearer other", verb="get", path="/metrics"))
    await settle()
    assert auth.limiter.in_flight == 1
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    pending.cancel()
    await settle()
    assert auth.limiter.in_flight == 0


async def test_a_scraper_whose_answers_expired_renews_them_while_new_tokens_hold_every_other_slot() -> None:
    """Bound 3, one reserved: two made-up tokens hang in review and a third is refused, but the reader,
    whose answers expired, gets both renewals through the reserved slot."""
    clock = FakeClock()
    reviewer = HeldReviewer(free=frozenset({"reader", f"access:{READER.username}"}))
    auth = authorizer(reviewer, clock=clock, max_in_flight=3, reserved_for_renewals=1)
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    clock.advance(3600.0)
    flood = [
        asyncio.ensure_future(auth.decide(f"Bearer junk-{i}", verb="get", path="/metrics")) for i in range(3)
    ]
    await settle()
    assert (auth.limiter.in_flight, auth.limiter.refused) == (2, 1)
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    assert reviewer.started.count("reader") == 2
    assert reviewer.started.count(f"access:{READER.username}") == 2
    for call in flood:
        call.cancel()
    await asyncio.gather(*flood, return_exceptions=True)


# -- cancellation -----------------------------------------------------------------------------------


async def test_a_review_is_cancelled_when_its_only_caller_goes_away() -> None:
    """The caller is cancelled (its client hung up): the review is cancelled and its slot freed."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=4)
    call = asyncio.ensure_future(auth.decide("Bearer junk", verb="get", path="/metrics"))
    await settle()
    call.cancel()
    await settle()
    assert reviewer.cancelled == ["junk"]
    assert (auth.limiter.in_flight, auth.users.in_flight, len(auth.users), auth.users.cancelled) == (
        0,
        0,
        0,
        1,
    )


async def test_a_review_goes_on_while_another_caller_still_waits_for_it() -> None:
    """Two callers of one token, one hangs up: the review finishes for the other, once."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=4)
    first = asyncio.ensure_future(auth.decide("Bearer reader", verb="get", path="/metrics"))
    second = asyncio.ensure_future(auth.decide("Bearer reader", verb="get", path="/metrics"))
    await settle()
    first.cancel()
    await settle()
    reviewer.release()
    assert await second is Verdict.ALLOWED
    assert (reviewer.cancelled, reviewer.started.count("reader")) == ([], 1)


async def test_a_caller_after_a_cancelled_review_starts_a_new_one() -> None:
    """The cancelled review is forgotten at once: the next caller is not handed its cancellation."""
    reviewer = HeldReviewer()
    cache: ReviewCache[str, str] = ReviewCache(lambda _: 60.0, clock=FakeClock(), limiter=ReviewLimiter(4))

    async def review() -> str:
        await reviewer.review_token("x")
        return "answer"

    gone = asyncio.ensure_future(cache.get_or_review("k", review))
    await settle()
    gone.cancel()
    fresh = asyncio.ensure_future(cache.get_or_review("k", review))  # before the old task unwinds
    await settle()
    reviewer.release()
    assert await fresh == "answer"
    assert (reviewer.started, reviewer.cancelled) == (["x", "x"], ["x"])


async def test_a_client_hanging_up_cancels_its_review_through_the_server() -> None:
    """Over a real connection: the metrics server cancels the handler of a client that closed its
    socket, and with it the review."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=4)
    server = http.Server(
        http.metrics_app(middlewares=[auth_middleware(auth)]),
        host="127.0.0.1",
        port=0,
        cancel_on_disconnect=True,
    )
    await server.start()
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer junk\r\n\r\n")
        await writer.drain()
        await eventually(lambda: reviewer.started == ["junk"], timeout=10, interval=0.01)
        writer.close()
        await writer.wait_closed()
        await eventually(lambda: reviewer.cancelled == ["junk"], timeout=10, interval=0.01)
        await eventually(lambda: auth.limiter.in_flight == 0, timeout=10, interval=0.01)
    finally:
        await server.stop()


# -- what is kept -----------------------------------------------------------------------------------


async def test_a_flood_of_refused_tokens_never_evicts_a_granted_one() -> None:
    """Eight entries per store, fifty made-up tokens after the reader: the reader's answers are still
    cached (no second review), the refusals hold at most eight entries."""
    reviewer = HeldReviewer()
    reviewer.release()
    auth = authorizer(reviewer, max_entries=8)
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    for i in range(50):
        assert await auth.decide(f"Bearer junk-{i}", verb="get", path="/metrics") is Verdict.UNAUTHENTICATED
    assert await auth.decide("Bearer reader", verb="get", path="/metrics") is Verdict.ALLOWED
    assert reviewer.started.count("reader") == 1
    assert len(auth.users) == 1 + 8
    assert auth.users.stored_keys()[0] == token_key("reader")


# -- the 503 --------------------------------------------------------------------------------------


async def test_a_request_past_the_bound_gets_503_with_retry_after() -> None:
    """The scraper is told to come back; nothing more."""
    reviewer = HeldReviewer()
    auth = authorizer(reviewer, max_in_flight=1)
    server = http.Server(http.metrics_app(middlewares=[auth_middleware(auth)]), host="127.0.0.1", port=0)
    await server.start()
    try:
        async with aiohttp.ClientSession() as session:
            held = asyncio.ensure_future(
                session.get(f"http://127.0.0.1:{server.port}/metrics", headers={"Authorization": "Bearer a"})
            )
            await eventually(lambda: reviewer.started == ["a"], timeout=10, interval=0.01)
            async with session.get(
                f"http://127.0.0.1:{server.port}/metrics", headers={"Authorization": "Bearer b"}
            ) as resp:
                answer = (resp.status, await resp.text(), resp.headers.get("Retry-After"))
            reviewer.release()
            (await held).release()
    finally:
        await server.stop()
    assert answer == (503, "Service Unavailable", "1")


# -- the client the reviews go through --------------------------------------------------------------


class RecordingClient:
    """Records the priority of each create; answers like an API server that knows no token."""

    def __init__(self, *, hang: bool = False) -> None:
        self.priorities: list[Priority] = []
        self.hang = hang

    async def create(self, resource: Any, body: dict[str, Any]) -> dict[str, Any]:
        self.priorities.append(current_priority())
        if self.hang:
            await asyncio.Event().wait()
        return {"status": {"authenticated": False, "allowed": False}}


async def test_reviews_are_sent_at_low_priority() -> None:
    """Both kinds of review wait behind reconciles in the request gate."""
    client = RecordingClient()
    reviewer = ApiServerReviewer(cast(Client, client))
    assert await reviewer.review_token("t") is None
    assert await reviewer.review_access(READER, "get", "/metrics") is False
    assert client.priorities == [Priority.LOW, Priority.LOW]


async def test_a_review_without_an_answer_in_time_is_unavailable() -> None:
    """An API server (or gate) that never answers costs a slot for the timeout, then a 503."""
    reviewer = ApiServerReviewer(cast(Client, RecordingClient(hang=True)), timeout=0.01)
    with pytest.raises(ReviewUnavailable, match="no answer within"):
        await reviewer.review_token("t")


async def test_the_review_client_has_its_own_pool_and_a_short_retry_but_the_same_gate() -> None:
    """Same cluster and credentials, another connection pool, the reconcilers' request gate."""
    config = ClusterConfig(
        server="https://127.0.0.1:6443", ssl_context=False, credentials=StaticCredentials(None)
    )
    async with Client(config, max_in_flight=4) as main:
        reviews = review_client(main, max_connections=3)
        try:
            assert reviews is not main
            assert reviews.config is main.config
            assert reviews.gate is main.gate
            assert reviews._retry == REVIEW_RETRY
            assert reviews._http() is not main._http()
            assert reviews._http().connector is not None
            assert reviews._http().connector.limit == 3
        finally:
            await reviews.close()


def test_the_review_retry_is_one_short_retry() -> None:
    """No minute-long 429 loops: two attempts at most, never sleeping more than half a second."""
    assert (REVIEW_RETRY.attempts, REVIEW_RETRY.max_retry_after, REVIEW_RETRY.max_delay) == (2, 0.5, 0.25)
