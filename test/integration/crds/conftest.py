"""Fixture of the CRD tests: the five CRDs installed once per session from config/crd."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from testsupport.cluster import Cluster, Kubectl

REPO = Path(__file__).resolve().parents[3]
CRD_NAMES = [
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
    "dynamomodels.nvidia.com",
]


# kubectl reads a resource at the group's highest served version, nvidia.com/v1beta1, the stored one.
# This suite is about the v1alpha1 schema, so its kubectl names v1alpha1 explicitly, by plural
# (kubectl does not expand a short name in `<resource>.<version>.<group>`).
_PLURALS = {
    "dgd": "dynamographdeployments",
    "dcd": "dynamocomponentdeployments",
    "dgdr": "dynamographdeploymentrequests",
    "dgdsa": "dynamographdeploymentscalingadapters",
}
_DYNAMO = re.compile(
    r"^(dgd|dcd|dgdr|dgdsa|dynamographdeployments?|dynamocomponentdeployments?"
    r"|dynamographdeploymentrequests?|dynamographdeploymentscalingadapters?)(/.*)?$"
)


def _v1alpha1(arg: str) -> str:
    parts = []
    for part in arg.split(","):
        match = _DYNAMO.match(part)
        plural = _PLURALS.get(match[1], match[1].rstrip("s") + "s") if match else ""
        parts.append(f"{plural}.v1alpha1.nvidia.com{match[2] or ''}" if match else part)
    return ",".join(parts)


class V1alpha1Kubectl(Kubectl):
    """kubectl that addresses the Dynamo kinds as nvidia.com/v1alpha1."""

    def __call__(self, *args: str, **kwargs: object) -> str:  # type: ignore[override]
        if args and args[0] == "explain":
            args = (*args, "--api-version=nvidia.com/v1alpha1")
        else:
            args = tuple(_v1alpha1(a) for a in args)
        return super().__call__(*args, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def kubectl(cluster: Cluster) -> Kubectl:
    """The session's kubectl, speaking v1alpha1 to the Dynamo kinds (see above)."""
    return V1alpha1Kubectl(cluster.kubeconfig)


def install_crds(kubectl: Kubectl) -> None:
    """`kubectl apply --server-side -k config/crd`, then wait until every CRD is Established."""
    kubectl("apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "crd"), timeout=120)
    kubectl(
        "wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in CRD_NAMES], timeout=70
    )


@pytest.fixture(scope="session")
def crds(kubectl: Kubectl, operator: object) -> None:
    """The five CRDs, installed from config/crd (idempotent; other suites may install them too). A
    v1alpha1 object is stored as v1beta1 through the conversion webhook, which the session operator
    serves: without it, this suite run on its own would fail every v1alpha1 write."""
    install_crds(kubectl)
