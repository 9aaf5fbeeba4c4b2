"""The metrics filter's decisions and its review cache, with a fake reviewer and a fake clock (the
API-server side is tested in test/integration/runtime_controller/test_runtime_secure_metrics.py)."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.manager import http
from dynamo_operator.internal.manager.metrics_auth import (
    RequestAuthorizer,
    ReviewUnavailable,
    UserInfo,
    Verdict,
    auth_middleware,
    bearer_token,
    token_key,
)

READER = UserInfo("system:serviceaccount:monitoring:prometheus", groups=("system:serviceaccounts",))
STRANGER = UserInfo("system:serviceaccount:team:app")
TOKENS = {"reader-token": READER, "stranger-token": STRANGER}


class FakeReviewer:
    """Knows two tokens; only READER may get /metrics. Counts every review; can be made to fail."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.token_reviews: list[str] = []
        self.access_reviews: list[tuple[str, str, str]] = []
        self.delay = delay
        self.failing = False

    async def review_token(self, token: str) -> UserInfo | None:
        self.token_reviews.append(token)
        await asyncio.sleep(self.delay)
        if self.failing:
            raise ReviewUnavailable("tokenreviews: TransportError: connection refused")
        return TOKENS.get(token)

    async def review_access(self, user: UserInfo, verb: str, path: str) -> bool:
        self.access_reviews.append((user.username, verb, path))
        await asyncio.sleep(self.delay)
        return user == READER and verb == "get" and path == "/metrics"


def authorizer(reviewer: FakeReviewer, clock: FakeClock | None = None, **kw: float) -> RequestAuthorizer:
    return RequestAuthorizer(reviewer, clock=clock or FakeClock(), **kw)  # type: ignore[arg-type]


async def decide(auth: RequestAuthorizer, header: str | None, path: str = "/metrics") -> Verdict:
    return await auth.decide(header, verb="get", path=path)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        pytest.param("Bearer abc", "abc", id="bearer"),
        pytest.param("bearer abc", "abc", id="scheme-case-insensitive"),
        pytest.param("Bearer   abc  ", "abc", id="extra-spaces"),
        pytest.param(None, None, id="no-header"),
        pytest.param("", None, id="empty"),
        pytest.param("Bearer", None, id="no-token"),
        pytest.param("Bearer ", None, id="blank-token"),
        pytest.param("Basic dXNlcjpwdw==", None, id="basic-auth"),
    ],
)
def test_bearer_token_is_read_only_from_a_bearer_header(header: str | None, token: str | None) -> None:
    """Only `Authorization: Bearer <token>` carries a token; anything else is no credential at all."""
    assert bearer_token(header) == token


async def test_a_request_without_a_token_is_unauthenticated_without_asking_the_api_server() -> None:
    """No token: 401 at once, no review sent."""
    reviewer = FakeReviewer()
    assert await decide(authorizer(reviewer), None) is Verdict.UNAUTHENTICATED
    assert (reviewer.token_reviews, reviewer.access_reviews) == ([], [])


async def test_a_token_the_api_server_rejects_is_unauthenticated_and_not_authorized() -> None:
    """An invalid token is reviewed once, then refused from the cache; no access review."""
    reviewer = FakeReviewer()
    auth = authorizer(reviewer)
    for _ in range(5):
        assert await decide(auth, "Bearer made-up") is Verdict.UNAUTHENTICATED
    assert reviewer.token_reviews == ["made-up"]
    assert reviewer.access_reviews == []


async def test_a_user_without_the_right_is_forbidden() -> None:
    """A valid token whose user may not get /metrics: 403."""
    assert await decide(authorizer(FakeReviewer()), "Bearer stranger-token") is Verdict.FORBIDDEN


async def test_a_user_with_the_right_is_allowed_for_that_path_only() -> None:
    """The access review names the request's verb and path; another path is asked about separately."""
    reviewer = FakeReviewer()
    auth = authorizer(reviewer)
    assert await decide(auth, "Bearer reader-token") is Verdict.ALLOWED
    assert await decide(auth, "Bearer reader-token", path="/debug") is Verdict.FORBIDDEN
    assert reviewer.access_reviews == [
        (READER.username, "get", "/metrics"),
        (READER.username, "get", "/debug"),
    ]


async def test_repeated_scrapes_cost_one_review_of_each_kind_while_cached() -> None:
    """A hundred scrapes within the lifetimes: one TokenReview, one SubjectAccessReview."""
    reviewer = FakeReviewer()
    auth = authorizer(reviewer)
    for _ in range(100):
        assert await decide(auth, "Bearer reader-token") is Verdict.ALLOWED
    assert (len(reviewer.token_reviews), len(reviewer.access_reviews)) == (1, 1)


async def test_concurrent_scrapes_with_a_cold_cache_share_one_review() -> None:
    """Twenty connections at once with the same token wait for one review each, not twenty."""
    reviewer = FakeReviewer(delay=0.01)
    auth = authorizer(reviewer)
    verdicts = await asyncio.gather(*(decide(auth, "Bearer reader-token") for _ in range(20)))
    assert set(verdicts) == {Verdict.ALLOWED}
    assert (len(reviewer.token_reviews), len(reviewer.access_reviews)) == (1, 1)


async def test_cached_answers_expire_allow_after_its_ttl_and_deny_sooner() -> None:
    """Scraping every 15 s for two minutes: the token and an allow are asked again once a minute;
    a deny is asked again every 30 s."""
    clock = FakeClock()
    reviewer = FakeReviewer()
    auth = authorizer(reviewer, clock, token_ttl=60.0, allow_ttl=60.0, deny_ttl=30.0)
    for _ in range(8):  # t = 0, 15, ..., 105
        await decide(auth, "Bearer reader-token")
        await decide(auth, "Bearer stranger-token")
        clock.advance(15.0)
    assert reviewer.token_reviews.count("reader-token") == 2
    assert reviewer.access_reviews.count((READER.username, "get", "/metrics")) == 2
    assert reviewer.access_reviews.count((STRANGER.username, "get", "/metrics")) == 4


async def test_the_cache_holds_a_hash_of_the_token_never_the_token() -> None:
    """What the cache keeps is the SHA-256 of the token."""
    auth = authorizer(FakeReviewer())
    await decide(auth, "Bearer reader-token")
    assert auth.users.stored_keys() == [token_key("reader-token")]
    assert all("reader-token" not in key for key in auth.users.stored_keys())


async def test_a_failed_review_is_reported_and_not_cached() -> None:
    """The API server does not answer: ReviewUnavailable; once it answers again the token is reviewed."""
    reviewer = FakeReviewer()
    auth = authorizer(reviewer)
    reviewer.failing = True
    with pytest.raises(ReviewUnavailable):
        await decide(auth, "Bearer reader-token")
    reviewer.failing = False
    assert await decide(auth, "Bearer reader-token") is Verdict.ALLOWED
    assert len(reviewer.token_reviews) == 2


async def test_the_cache_stays_bounded_under_a_flood_of_tokens() -> None:
    """Distinct made-up tokens evict older entries instead of growing memory."""
    auth = authorizer(FakeReviewer(), max_entries=8)
    for i in range(50):
        await decide(auth, f"Bearer junk-{i}")
    assert len(auth.users) == 8


async def scrape(port: int, headers: dict[str, str]) -> tuple[int, str, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics", headers=headers) as resp,
    ):
        return resp.status, await resp.text(), resp.headers.get("WWW-Authenticate", "")


@pytest.mark.parametrize(
    ("headers", "status", "body"),
    [
        pytest.param({}, 401, "Unauthorized", id="no-token"),
        pytest.param({"Authorization": "Bearer made-up"}, 401, "Unauthorized", id="bad-token"),
        pytest.param({"Authorization": "Bearer stranger-token"}, 403, "Forbidden", id="no-right"),
    ],
)
async def test_refusals_say_nothing_more_than_their_status(
    headers: dict[str, str], status: int, body: str
) -> None:
    """401 and 403 carry one word; neither the user, nor the reason, nor the metrics."""
    server = http.Server(
        http.metrics_app(middlewares=[auth_middleware(authorizer(FakeReviewer()))]), host="127.0.0.1", port=0
    )
    await server.start()
    try:
        assert server.port is not None
        got_status, got_body, challenge = await scrape(server.port, headers)
    finally:
        await server.stop()
    assert (got_status, got_body) == (status, body)
    assert challenge == ("Bearer" if status == 401 else "")


async def test_an_allowed_scrape_gets_the_metrics_and_an_unavailable_api_server_a_503() -> None:
    """ALLOWED reaches the handler; a review that cannot be made answers 503 (the scraper retries)."""
    reviewer = FakeReviewer()
    server = http.Server(
        http.metrics_app(middlewares=[auth_middleware(authorizer(reviewer))]), host="127.0.0.1", port=0
    )
    await server.start()
    try:
        assert server.port is not None
        status, body, _ = await scrape(server.port, {"Authorization": "Bearer reader-token"})
        assert status == 200
        assert "# TYPE" in body
        reviewer.failing = True
        status, body, _ = await scrape(server.port, {"Authorization": "Bearer other-token"})
        assert (status, body) == (503, "Service Unavailable")
    finally:
        await server.stop()
