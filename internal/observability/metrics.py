"""The one Prometheus registry every runtime module registers its metrics on.

A private registry (not the global default) keeps tests and several managers in one process from
colliding, and lets the manager's `/metrics` endpoint expose exactly the operator's own series.
"""

from __future__ import annotations

import prometheus_client

REGISTRY = prometheus_client.CollectorRegistry()
