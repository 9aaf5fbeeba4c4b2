"""Manager settings, with controller-runtime's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dynamo_operator.internal.leaderelection.config import LeaderElectionConfig


@dataclass(frozen=True, slots=True)
class ManagerOptions:
    """What the manager serves and how it starts and stops."""

    # Restricted mode: every namespaced informer watches only this namespace.
    namespace: str | None = None
    # "host:port"; an empty host binds every interface; "0" (or "") turns the server off.
    metrics_bind_address: str = ":8080"
    # HTTPS, and every request authenticated (TokenReview) and authorized (SubjectAccessReview) by
    # the API server. Off in this library default, as in controller-runtime; the dynamo-operator
    # binary turns it on unless told otherwise (operator/flags.py).
    metrics_secure: bool = False
    # With metrics_secure: reviews in flight at once (and connections of their client); a request
    # needing one more is answered 503 at once (metrics_auth.py).
    metrics_max_reviews_in_flight: int = 8
    # With metrics_secure: a directory holding tls.crt and tls.key (a mounted kubernetes.io/tls
    # Secret), reloaded when it rotates; None generates a self-signed pair in memory at start-up.
    metrics_cert_dir: str | None = None
    health_probe_bind_address: str = ":8081"
    # None: no election, this process always leads (fine for one replica or tests).
    leader_election: LeaderElectionConfig | None = None
    # Default worker count for controllers built by this manager (a builder may override it).
    max_concurrent_reconciles: int = 1
    # Per For kind ("Kind.group", "Kind" for the core API): workers of that kind's controller,
    # over `max_concurrent_reconciles` (controller-runtime's `GroupKindConcurrency`).
    group_kind_concurrency: Mapping[str, int] = field(default_factory=dict)
    # Controllers hand out newly seen objects of their kind before re-syncs (Builder.creates_first).
    creates_first: bool = False
    # Bound on the whole graceful stop: in-flight reconciles, Lease release, event flush.
    graceful_shutdown_timeout: float = 30.0
    # Start-up fails if the informers have not listed everything by then.
    cache_sync_timeout: float = 120.0
