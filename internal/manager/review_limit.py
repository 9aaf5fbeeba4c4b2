"""A hard bound on API-server reviews in flight for the metrics filter, refused past it, never queued.

Why refuse rather than wait: every bearer token not seen before costs a TokenReview, and anyone who
can open a connection to the metrics port can send made-up tokens as fast as they like. A queue in
front of the reviews would grow with that rate (memory, and work the API server is asked to do long
after the caller left); a refusal costs a few bytes and a 503 the scraper retries at its next scrape.

Counting is all this does (no asyncio): `ReviewCache` asks `try_acquire` before it starts a review
and calls `release` when the review ends, however it ends. Metrics sit behind the `ReviewEvents`
hook so the counting is testable without Prometheus.
"""

from __future__ import annotations

from typing import Protocol

from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Gauge


class ReviewBusy(Exception):
    """The bound on reviews in flight is reached: answer 503 now, do not wait for a slot."""


class ReviewEvents(Protocol):
    """What a limiter reports as it counts (Prometheus in production, nothing in unit tests)."""

    def started(self, in_flight: int) -> None: ...

    def ended(self, in_flight: int) -> None: ...

    def refused(self) -> None: ...


class _NoEvents:
    def started(self, in_flight: int) -> None:
        pass

    def ended(self, in_flight: int) -> None:
        pass

    def refused(self) -> None:
        pass


REVIEWS_IN_FLIGHT = Gauge(
    "dynamo_operator_metrics_auth_reviews_in_flight",
    "TokenReviews and SubjectAccessReviews the metrics filter is waiting for now.",
    registry=REGISTRY,
)
REVIEWS_STARTED = Counter(
    "dynamo_operator_metrics_auth_reviews",
    "TokenReviews and SubjectAccessReviews the metrics filter started (answers from its cache excluded).",
    registry=REGISTRY,
)
REVIEWS_REFUSED_BUSY = Counter(
    "dynamo_operator_metrics_auth_refused_busy",
    "Metrics requests answered 503 because the bound on reviews in flight was reached.",
    registry=REGISTRY,
)


class PrometheusReviewEvents:
    """`ReviewEvents` on the operator's registry (one set of series per process)."""

    def started(self, in_flight: int) -> None:
        REVIEWS_STARTED.inc()
        REVIEWS_IN_FLIGHT.set(in_flight)

    def ended(self, in_flight: int) -> None:
        REVIEWS_IN_FLIGHT.set(in_flight)

    def refused(self) -> None:
        REVIEWS_REFUSED_BUSY.inc()


class ReviewLimiter:
    """At most `limit` reviews in flight; `try_acquire` past it counts a refusal and says no.

    `reserved` of the slots are only for renewing answers that were granted before (a scraper whose
    cached answer expired): a flood of tokens never seen can take `limit - reserved` slots at most,
    so a real scraper keeps getting its renewal through while the flood lasts.

    Invariant: 0 <= in_flight <= limit, and in_flight == started - ended; `peak` is the largest
    in_flight seen (what a flood test asserts on).
    """

    def __init__(self, limit: int, *, reserved: int = 0, events: ReviewEvents | None = None) -> None:
        if not 0 <= reserved < limit:
            raise ValueError(f"need 0 <= reserved < limit for reviews in flight, got {reserved}, {limit}")
        self.limit = limit
        self.reserved = reserved
        self._events: ReviewEvents = events or _NoEvents()
        self.in_flight = 0
        self.peak = 0
        self.started = 0
        self.refused = 0

    def try_acquire(self, *, known: bool = False) -> bool:
        """A slot for a review; `known`: it renews an answer that was a grant."""
        if self.in_flight >= (self.limit if known else self.limit - self.reserved):
            self.refused += 1
            self._events.refused()
            return False
        self.in_flight += 1
        self.started += 1
        self.peak = max(self.peak, self.in_flight)
        self._events.started(self.in_flight)
        return True

    def release(self) -> None:
        if self.in_flight <= 0:
            raise AssertionError("ReviewLimiter.release without a matching try_acquire")
        self.in_flight -= 1
        self._events.ended(self.in_flight)
