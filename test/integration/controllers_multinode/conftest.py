"""Multinode graphs through the real LeaderWorkerSet controller and Grove's operator.

These tests are marked `@pytest.mark.addons(...)`: run on their own (`make multinode`, or pytest on this
directory) the session's local cluster starts those add-ons (see testsupport/cluster.py); in a session
whose cluster runs without them they skip and say why. The shared fixtures come from
test/integration/conftest.py.
"""

from __future__ import annotations

import pytest
from testsupport.cluster import ADDONS_MARK, needs_addons


@pytest.fixture(autouse=True)
def _addons_present(request: pytest.FixtureRequest) -> None:
    """Skip a test marked with an add-on the session's cluster does not run (before any other
    fixture of it touches the cluster)."""
    if any(request.node.iter_markers(ADDONS_MARK)):
        needs_addons(request.getfixturevalue("cluster"), request)
