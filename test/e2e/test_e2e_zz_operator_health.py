"""Checked after the rest of the suite (files run in name order): the operator never hit an RBAC
denial and never crashed while the suite drove it."""

from __future__ import annotations

import os

import pytest
from e2e.conftest import Deployed
from prometheus_client.parser import text_string_to_metric_families

pytestmark = [pytest.mark.cluster]


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [
        (s.name, dict(s.labels), float(s.value))
        for f in text_string_to_metric_families(text)
        for s in f.samples
    ]


def test_operator_got_no_rbac_denial(deployed: Deployed) -> None:
    """No request of the operator was answered 403, by its metrics and by its log: the ServiceAccount's
    RBAC in config/rbac covers everything it does."""
    denied = {
        f"{labels['method']} {labels['resource']}": value
        for name, labels, value in _samples(deployed.metrics())
        if name == "rest_client_requests_total" and labels.get("code") == "403" and value
    }
    assert not denied, f"403 Forbidden answers to the operator: {denied}"
    forbidden = [line[:400] for line in deployed.log_text().splitlines() if "403 Forbidden" in line]
    assert not forbidden, "\n".join(forbidden[:5])


def test_operator_never_crashed_or_panicked(deployed: Deployed) -> None:
    """Same process throughout, no reconcile panic."""
    if deployed.pid is not None:
        os.kill(deployed.pid, 0)  # raises if the process is gone
    panics = sum(
        v for n, _, v in _samples(deployed.metrics()) if n == "controller_runtime_reconcile_panics_total"
    )
    assert panics == 0
