"""Request metrics of the REST client, with client-go's names (labelled by resource, not host)."""

from __future__ import annotations

from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method and resource.",
    ["code", "method", "resource"],
    registry=REGISTRY,
)

# client-go's latency buckets (seconds), so existing dashboards line up.
REQUEST_DURATION = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds, by verb and resource (watches: time to response headers).",
    ["verb", "resource"],
    buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
    registry=REGISTRY,
)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

# The `code` label when no HTTP answer came back, as client-go does.
NO_RESPONSE = "<error>"


def requests_count(*, methods: frozenset[str] | None = None, resource: str | None = None) -> float:
    """Sum of `rest_client_requests_total` over the given methods (and resource), for tests/benchmarks.

    `requests_count(methods=WRITE_METHODS)` is the number of write requests sent so far.
    """
    total = 0.0
    for metric in REQUESTS.collect():
        for sample in metric.samples:
            if not sample.name.endswith("_total"):
                continue
            if methods is not None and sample.labels["method"] not in methods:
                continue
            if resource is not None and sample.labels["resource"] != resource:
                continue
            total += sample.value
    return total
