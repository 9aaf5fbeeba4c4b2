"""Who may read `/metrics`: every request is authenticated and authorized by the API server.

The bearer token goes to a TokenReview (who is asking), the user it names to a SubjectAccessReview
(may they `get` the non-resource URL of the request, e.g. `/metrics`); the verb is the lowercase
HTTP method, as for any non-resource URL in Kubernetes RBAC. Scrapers get that right from a
ClusterRole with `nonResourceURLs: [/metrics], verbs: [get]`; the operator needs `create` on
`tokenreviews` and `subjectaccessreviews`.

Answers are cached so a Prometheus scraping every 15 s costs at most one review of each kind per
lifetime below, however many scrapes and connections. Tokens are cached only under their SHA-256:
the cache (and a heap dump of it) never holds a credential. A refusal says only 401 or 403; the
reason goes to the debug log, never to the caller.

Anyone who can reach the port can send made-up tokens, each of which misses the cache. So (issue #34):
- at most `max_in_flight` reviews run at once, two of them kept for renewing grants that expired; a
  request that needs one more gets 503 with Retry-After at once (`review_limit.py`), nothing queues;
- a review is cancelled when the last request waiting for it goes away (the metrics server cancels a
  handler whose client hung up), and bounded in time (`REVIEW_TIMEOUT`);
- reviews go through their own client (`review_client`): its own connection pool, one short retry,
  and the LOW priority of the operator's request gate, so reconciles never wait behind them;
- refusals are cached apart from grants, so a flood only evicts other refusals.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, TransportError
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.client.retry import RetryPolicy
from dynamo_operator.internal.clock import Clock
from dynamo_operator.internal.manager.review_cache import ReviewCache
from dynamo_operator.internal.manager.review_limit import (
    PrometheusReviewEvents,
    ReviewBusy,
    ReviewEvents,
    ReviewLimiter,
)

log = structlog.get_logger(__name__)

TOKEN_REVIEW = Resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", namespaced=False)
SUBJECT_ACCESS_REVIEW = Resource(
    "authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False
)

# Lifetimes (seconds). A token's identity does not change, but a deleted ServiceAccount must stop
# working within a minute; a new RoleBinding is honoured within half a minute, a removed one within
# a minute (controller-runtime: 1 min for tokens, 5 min allow, 30 s deny; shorter here, and still
# about two reviews per minute per scraper).
TOKEN_TTL = 60.0
ALLOW_TTL = 60.0
DENY_TTL = 30.0
# Entries per cache and kind of answer (grants and refusals are stored apart, each this many): far
# above the number of scrapers, small enough that a flood of made-up tokens only evicts other refusals.
MAX_ENTRIES = 1024
# Reviews in flight at once. A scraper needs one at a time (two per minute); a few Prometheus replicas
# and a person with curl fit far below this. Past it a request is answered 503 at once. Of these,
# RESERVED_FOR_RENEWALS only renew an answer that was a grant (a scraper whose minute is up), so a
# flood of new tokens cannot keep a real scraper out.
MAX_REVIEWS_IN_FLIGHT = 8
RESERVED_FOR_RENEWALS = 2
# One review's whole budget: a TokenReview is answered in milliseconds; a request that waits longer
# (an overloaded API server, a full request gate) holds a slot of the bound above, so not for long.
REVIEW_TIMEOUT = 10.0
# One retry, soon, for a request the API server surely never processed (connection refused, 429):
# never the minute of Retry-After the reconcilers' client honours.
REVIEW_RETRY = RetryPolicy(attempts=2, base_delay=0.1, max_delay=0.25, max_retry_after=0.5)
# Seconds a 503 asks the scraper to wait (Retry-After).
BUSY_RETRY_AFTER = 1


@dataclass(frozen=True, slots=True)
class UserInfo:
    """The identity a TokenReview returned; hashable, so it can key the access cache."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_review(cls, user: Mapping[str, Any]) -> UserInfo:
        extra = user.get("extra") or {}
        return cls(
            username=str(user.get("username", "")),
            uid=str(user.get("uid", "")),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            extra=tuple(sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in extra.items())),
        )


class ReviewUnavailable(Exception):
    """The API server gave no usable answer to a review (unreachable, throttled, RBAC missing)."""


class Reviewer(Protocol):
    """The two questions asked of the API server."""

    async def review_token(self, token: str) -> UserInfo | None:
        """The token's user, or None when the token is not valid. Raises ReviewUnavailable."""
        ...

    async def review_access(self, user: UserInfo, verb: str, path: str) -> bool:
        """Whether `user` may `verb` the non-resource URL `path`. Raises ReviewUnavailable."""
        ...


def review_client(client: Client, *, max_connections: int = MAX_REVIEWS_IN_FLIGHT) -> Client:
    """A client for the reviews: the operator's cluster and credentials, a pool of its own (a flood
    never takes a connection a reconcile needs) and `REVIEW_RETRY`; it shares `client`'s request
    gate, where `ApiServerReviewer` asks at LOW priority. The caller closes it."""
    reviews = Client(client.config, retry=REVIEW_RETRY, max_connections=max_connections)
    reviews.gate = client.gate  # one bound on requests in flight per process, handed out by priority
    return reviews


class ApiServerReviewer:
    """`Reviewer` through TokenReview and SubjectAccessReview objects created with `client` (best
    built by `review_client`), each at LOW priority and within `timeout` seconds."""

    def __init__(self, client: Client, *, timeout: float = REVIEW_TIMEOUT) -> None:
        self._client = client
        self._timeout = timeout

    async def review_token(self, token: str) -> UserInfo | None:
        body = {"spec": {"token": token}}
        status = (await self._create(TOKEN_REVIEW, body, token)).get("status") or {}
        if not status.get("authenticated"):
            return None
        return UserInfo.from_review(status.get("user") or {})

    async def review_access(self, user: UserInfo, verb: str, path: str) -> bool:
        spec: dict[str, Any] = {
            "user": user.username,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        status = (await self._create(SUBJECT_ACCESS_REVIEW, {"spec": spec}, None)).get("status") or {}
        return bool(status.get("allowed")) and not status.get("denied")

    async def _create(self, resource: Resource, body: dict[str, Any], secret: str | None) -> dict[str, Any]:
        # The answer to a TokenReview echoes the token in `spec`: it is read here and never logged.
        try:
            with request_priority(Priority.LOW):
                async with asyncio.timeout(self._timeout):
                    return await self._client.create(resource, body)
        except TimeoutError:
            raise ReviewUnavailable(f"{resource.plural}: no answer within {self._timeout:g}s") from None
        except (ApiError, TransportError) as err:
            message = str(err)
            if secret:
                message = message.replace(secret, "<redacted>")
            raise ReviewUnavailable(f"{resource.plural}: {type(err).__name__}: {message}") from None


class Verdict(enum.Enum):
    ALLOWED = enum.auto()
    UNAUTHENTICATED = enum.auto()  # no token, or one the API server does not accept → 401
    FORBIDDEN = enum.auto()  # a known user without the right → 403


def token_key(token: str) -> str:
    """What the cache stores in place of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), else None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


class RequestAuthorizer:
    """Decides one request from its Authorization header, with cached reviews (see module docstring)."""

    def __init__(
        self,
        reviewer: Reviewer,
        *,
        token_ttl: float = TOKEN_TTL,
        allow_ttl: float = ALLOW_TTL,
        deny_ttl: float = DENY_TTL,
        max_entries: int = MAX_ENTRIES,
        max_in_flight: int = MAX_REVIEWS_IN_FLIGHT,
        reserved_for_renewals: int = RESERVED_FOR_RENEWALS,
        events: ReviewEvents | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._reviewer = reviewer
        # One bound for both kinds: what a flood costs the API server is the sum.
        self.limiter = ReviewLimiter(max_in_flight, reserved=reserved_for_renewals, events=events)
        self.users: ReviewCache[str, UserInfo | None] = ReviewCache(
            lambda _: token_ttl,
            max_entries=max_entries,
            clock=clock,
            negative=lambda user: user is None,
            limiter=self.limiter,
        )
        self.access: ReviewCache[tuple[UserInfo, str, str], bool] = ReviewCache(
            lambda allowed: allow_ttl if allowed else deny_ttl,
            max_entries=max_entries,
            clock=clock,
            negative=lambda allowed: not allowed,
            limiter=self.limiter,
        )

    async def decide(self, authorization: str | None, *, verb: str, path: str) -> Verdict:
        """Raises ReviewBusy when a review is needed and the bound is reached, ReviewUnavailable when
        a review that is not cached cannot be made."""
        token = bearer_token(authorization)
        if token is None:
            return Verdict.UNAUTHENTICATED
        user = await self.users.get_or_review(token_key(token), lambda: self._reviewer.review_token(token))
        if user is None:
            return Verdict.UNAUTHENTICATED
        allowed = await self.access.get_or_review(
            (user, verb, path), lambda: self._reviewer.review_access(user, verb, path)
        )
        if not allowed:
            log.debug("Metrics request forbidden", user=user.username, verb=verb, path=path)
            return Verdict.FORBIDDEN
        return Verdict.ALLOWED


def _plain(status: int, text: str, **headers: str) -> web.Response:
    return web.Response(status=status, text=text, headers=headers)


def new_authorizer(client: Client, *, max_in_flight: int = MAX_REVIEWS_IN_FLIGHT) -> RequestAuthorizer:
    """The production authorizer: reviews through `client` (a `review_client`), metrics on the
    operator's registry."""
    return RequestAuthorizer(
        ApiServerReviewer(client),
        max_in_flight=max_in_flight,
        # A bound of one or two (a test, a tiny setting) keeps one slot for tokens never seen.
        reserved_for_renewals=min(RESERVED_FOR_RENEWALS, max_in_flight - 1),
        events=PrometheusReviewEvents(),
    )


def auth_middleware(authorizer: RequestAuthorizer) -> Middleware:
    """An aiohttp middleware that lets only ALLOWED requests reach the handler."""

    @web.middleware
    async def authenticate_and_authorize(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            verdict = await authorizer.decide(
                request.headers.get("Authorization"), verb=request.method.lower(), path=request.path
            )
        except ReviewBusy:
            # Counted by the limiter; a log line per refused request would let a flood fill the logs.
            return _plain(503, "Service Unavailable", **{"Retry-After": str(BUSY_RETRY_AFTER)})
        except ReviewUnavailable as err:
            log.warning("Cannot review a metrics request", error=str(err))
            return _plain(503, "Service Unavailable")
        match verdict:
            case Verdict.ALLOWED:
                return await handler(request)
            case Verdict.UNAUTHENTICATED:
                return _plain(401, "Unauthorized", **{"WWW-Authenticate": "Bearer"})
            case Verdict.FORBIDDEN:
                return _plain(403, "Forbidden")

    return authenticate_and_authorize
