"""Fixture of the CRD tests: the five CRDs installed once per session from config/crd."""

from __future__ import annotations

from pathlib import Path

import pytest
from testsupport.cluster import Kubectl

REPO = Path(__file__).resolve().parents[3]
CRD_NAMES = [
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
    "dynamomodels.nvidia.com",
]


def install_crds(kubectl: Kubectl) -> None:
    """`kubectl apply --server-side -k config/crd`, then wait until every CRD is Established."""
    kubectl("apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "crd"), timeout=120)
    kubectl(
        "wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in CRD_NAMES], timeout=70
    )


@pytest.fixture(scope="session")
def crds(kubectl: Kubectl) -> None:
    """The five CRDs, installed from config/crd (idempotent; other suites may install them too)."""
    install_crds(kubectl)
