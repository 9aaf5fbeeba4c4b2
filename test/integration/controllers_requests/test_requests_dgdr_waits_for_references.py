"""A DGDR that names objects that do not exist yet waits for them, says so once, and starts profiling
by itself when they appear (the ConfigMap and PVC watches map them back to the request)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, EVENT, JOB
from integration.controllers_requests.requests_testlib import apply, condition
from testsupport.api import eventually
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

TIMEOUT = 120.0
WAITING = "ReferenceNotFound"


def request(name: str, namespace: str, **profiling: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "profilingConfig": {
                "profilerImage": "registry.example/ai-dynamo/profiler:1",
                "config": {"sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20}},
                **profiling,
            },
        },
    }


def config_map(name: str, namespace: str, data: dict[str, str]) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


async def waiting(api: Client, namespace: str, name: str) -> dict[str, Any]:
    return await eventually(
        lambda: api.get(kinds.DGDR, name, namespace=namespace),
        until=lambda d: condition(d, "Validation").get("reason") == WAITING,
        timeout=TIMEOUT,
    )


async def warnings(api: Client, namespace: str, name: str, reason: str) -> list[dict[str, Any]]:
    events = await api.list(EVENT, namespace=namespace, field_selector=f"involvedObject.name={name}")
    return [e for e in events if e.get("reason") == reason and e.get("type") == "Warning"]


async def test_request_whose_config_map_is_created_later_starts_profiling_by_itself(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Missing ConfigMap: not Failed but waiting (one Warning Event, no Job); creating the ConfigMap,
    with no edit of the request, is enough for the profiling Job to be created."""
    await apply(api, request("req", ns, configMapRef={"name": "base-config"}))
    dgdr = await waiting(api, ns, "req")
    assert (dgdr.get("status") or {}).get("state", "") == ""
    assert condition(dgdr, "Validation")["status"] == "False"
    assert "ConfigMap base-config not found" in condition(dgdr, "Validation")["message"]
    assert await api.list(JOB, namespace=ns) == []
    await eventually(lambda: warnings(api, ns, "req", WAITING), until=lambda es: len(es) == 1)

    await api.create(CONFIG_MAP, config_map("base-config", ns, {"disagg.yaml": "engine: {}\n"}))

    profiling = await eventually(
        lambda: api.get(kinds.DGDR, "req", namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "Profiling",
        timeout=TIMEOUT,
    )
    assert condition(profiling, "Validation")["reason"] == "ValidationPassed"
    assert await api.get(JOB, "profile-req", namespace=ns)
    assert len(await warnings(api, ns, "req", WAITING)) == 1  # said once, not per re-check


async def test_request_waits_for_a_missing_key_until_the_config_map_gets_it(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A ConfigMap without the named key is waited for too; adding the key moves the request on."""
    await api.create(CONFIG_MAP, config_map("base-config", ns, {"other.yaml": "x: 1\n"}))
    await apply(api, request("req", ns, configMapRef={"name": "base-config", "key": "disagg.yaml"}))
    dgdr = await waiting(api, ns, "req")
    assert "key disagg.yaml not found in ConfigMap base-config" in condition(dgdr, "Validation")["message"]

    await api.patch(
        CONFIG_MAP,
        "base-config",
        {"data": {"disagg.yaml": "engine: {}\n"}},
        namespace=ns,
        field_manager=TEST_FIELD_MANAGER,
    )

    await eventually(
        lambda: api.get(kinds.DGDR, "req", namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "Profiling",
        timeout=TIMEOUT,
    )


async def test_request_waiting_for_its_model_cache_pvc_proceeds_when_the_pvc_appears(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The model-cache PVC is an object the request names as well: it is waited for the same way."""
    config = {
        "sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20},
        "deployment": {"modelCache": {"pvcName": "models"}},
    }
    await apply(api, request("req", ns, config=config))
    dgdr = await waiting(api, ns, "req")
    assert "model cache PVC models not found" in condition(dgdr, "Validation")["message"]

    pvc = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "models", "namespace": ns},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    await api.create(kinds.PVC, pvc)

    await eventually(
        lambda: api.get(kinds.DGDR, "req", namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "Profiling",
        timeout=TIMEOUT,
    )
