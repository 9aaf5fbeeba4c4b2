"""Work queues with client-go semantics: dedup, in-flight tracking, delays, rate-limited retries.

One layer per module: `queue` → `delaying` → `rate_limiting`; limiters in `rate_limiter`, metrics
hooks in `metrics`; time is `internal.clock`.
"""

from dynamo_operator.internal.workqueue.delaying import DelayingQueue
from dynamo_operator.internal.workqueue.interface import WorkQueue
from dynamo_operator.internal.workqueue.queue import Queue
from dynamo_operator.internal.workqueue.rate_limiter import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from dynamo_operator.internal.workqueue.rate_limiting import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "WorkQueue",
    "default_controller_rate_limiter",
]
