"""The project's own multi-version CRDs through the session operator's webhook (testsupport/operator.py
points them at its loopback port): an upstream v1beta1 example is accepted as written, stored as
v1beta1, and reads back as either version."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from testsupport.api import as_stored, eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator
from testsupport.webhook import session_bundle_in_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]

EXAMPLES = Path(__file__).resolve().parents[3] / ".." / "shared" / "upstream-examples-2a6da14c" / "examples"


def dgd(version: str) -> Resource:
    return Resource("nvidia.com", version, "dynamographdeployments", "DynamoGraphDeployment")


async def test_an_upstream_v1beta1_example_is_accepted_and_reads_as_both_versions(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str
) -> None:
    example = EXAMPLES / "backends_mocker_agg.yaml"
    assert example.is_file(), f"{example} is missing (the shared reference data)"
    # The session operator put its CA into the CRDs (until then the API server cannot call it).
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    # In a thread: the webhook answering the API server runs on this event loop.
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(example))
    as_beta: dict[str, Any] = await as_stored(api, dgd("v1beta1"), "mocker-agg", ns)
    assert as_beta["apiVersion"] == "nvidia.com/v1beta1"
    assert [c["name"] for c in as_beta["spec"]["components"]] == ["Frontend", "decode"]
    as_alpha: dict[str, Any] = await api.get(dgd("v1alpha1"), "mocker-agg", namespace=ns)
    assert as_alpha["apiVersion"] == "nvidia.com/v1alpha1"
    assert sorted(as_alpha["spec"]["services"]) == ["Frontend", "decode"]
    # A LIST of the converted version goes through one review per page.
    listed = await api.list(dgd("v1beta1"), namespace=ns)
    assert [i["metadata"]["name"] for i in listed] == ["mocker-agg"]
