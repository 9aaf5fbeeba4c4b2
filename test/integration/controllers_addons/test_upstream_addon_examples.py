"""Upstream's published examples for the newer service fields (issue #15), applied unchanged on the
local control plane: `frontendSidecar` (GAIE) reaches Ready with its sidecar running beside the
worker; `gpuMemoryService` and `failover` wait, as upstream's operator does, for the DRA API this
Kubernetes (1.33) does not serve, and say so on the component and the graph while the rest runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource
from testsupport.api import eventually
from testsupport.operator import (
    CRD_DIR,
    INFERENCE_POOL_CRD,
    LWS_CRD,
    TEST_FIELD_MANAGER,
    install_crds,
    running_operator,
)

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]

UPSTREAM = (
    Path(__file__).resolve().parents[3].parent / "shared" / "upstream-examples"
)  # ../shared beside the repo
TIMEOUT = 120.0
EVENT = Resource("", "v1", "events", "Event")
Obj = dict[str, Any]


def example(name: str, ns: str) -> Obj:
    [dgd] = [d for d in yaml.safe_load_all((UPSTREAM / name).read_text()) if d]
    dgd["metadata"]["namespace"] = ns
    return dgd


def condition(obj: Obj | None, ctype: str) -> Obj:
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return dict(c)
    return {}


async def graph(api: Client, ns: str, name: str) -> Obj:
    return await api.get(kinds.DGD, name, namespace=ns)


async def test_frontend_sidecar_example_becomes_ready_with_its_sidecar(
    cluster: Any, api: Client, ns: str
) -> None:
    await install_crds(api, [*sorted(CRD_DIR.glob("*.yaml")), LWS_CRD, INFERENCE_POOL_CRD])
    dgd = example("backends_vllm_gaie_agg.yaml", ns)
    async with running_operator(cluster, ns):
        await api.apply(kinds.DGD, dgd, field_manager=TEST_FIELD_MANAGER)
        ready = await eventually(
            lambda: graph(api, ns, dgd["metadata"]["name"]),
            until=lambda d: condition(d, "Ready").get("status") == "True",
            timeout=TIMEOUT,
        )
        assert ready["status"]["state"] == "successful"
        deployments = await api.list(kinds.DEPLOYMENT, namespace=ns)
        with_sidecar = [
            d
            for d in deployments
            if any(c["name"] == "sidecar-frontend" for c in d["spec"]["template"]["spec"]["containers"])
        ]
        assert with_sidecar, [d["metadata"]["name"] for d in deployments]


@pytest.mark.parametrize("name", ["backends_vllm_agg_gms.yaml", "backends_vllm_agg_failover.yaml"])
async def test_gpu_memory_service_examples_wait_for_dra_and_say_so(
    cluster: Any, api: Client, ns: str, name: str
) -> None:
    """As upstream 2a6da14c: without the DRA API the whole graph waits and says why; nothing of it
    runs half-written (df888f68 ran its other services)."""
    await install_crds(api)
    dgd = example(name, ns)
    async with running_operator(cluster, ns):
        await api.apply(kinds.DGD, dgd, field_manager=TEST_FIELD_MANAGER)
        waiting = await eventually(
            lambda: graph(api, ns, dgd["metadata"]["name"]),
            until=lambda d: "resource.k8s.io" in condition(d, "Ready").get("message", ""),
            timeout=TIMEOUT,
        )
        assert condition(waiting, "Ready")["status"] == "False"
        assert await api.list(kinds.DCD, namespace=ns) == []
        assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []

        async def dra_warnings() -> list[dict[str, Any]]:
            events = await api.list(EVENT, namespace=ns)
            return [
                e for e in events if e.get("type") == "Warning" and "resource.k8s.io" in e.get("message", "")
            ]

        # Events are sent in the background, a moment after the status that the condition shows.
        warnings = await eventually(dra_warnings, until=bool, timeout=30)
        assert len(warnings) == 1
