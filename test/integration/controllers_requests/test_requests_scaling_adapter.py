"""Scaling adapters against the real API server: the scale subresource drives the graph, pods follow,
direct edits are reverted, HPA can target an adapter, and disabling the adapter removes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dynamo_operator.controllers import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import HORIZONTAL_POD_AUTOSCALER, POD
from dynamo_operator.internal.dynamo.scalingadapter.adapter import FIELD_MANAGER
from integration.controllers_requests.requests_testlib import apply, get_or_none, graph
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

TIMEOUT = 120.0


def worker_replicas(dgd: dict[str, Any]) -> Any:
    return dgd["spec"]["services"]["Worker"].get("replicas")


async def ready_pods(api: Client, namespace: str, selector: str) -> int:
    pods = await api.list(POD, namespace=namespace, label_selector=selector)
    return sum(
        1
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(
            c["type"] == "Ready" and c["status"] == "True" for c in p.get("status", {}).get("conditions", [])
        )
    )


async def test_kubectl_scale_adapter_reaches_pods_and_direct_edit_is_reverted(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """`kubectl scale dgdsa --replicas=3` → graph replicas 3 → Deployment 3 → 3 Ready pods; the adapter
    owns the field; a direct edit of the graph's replicas is put back to the adapter's value."""
    await apply(api, graph("g", ns))
    adapter = await eventually(lambda: get_or_none(api, kinds.DGDSA, "g-worker", ns), timeout=TIMEOUT)
    assert adapter["spec"] == {"replicas": 1, "dgdRef": {"name": "g", "serviceName": "Worker"}}

    kubectl("scale", "dgdsa/g-worker", "--replicas=3", "-n", ns)

    dgd = await eventually(
        lambda: api.get(kinds.DGD, "g", namespace=ns),
        until=lambda d: worker_replicas(d) == 3,
        timeout=TIMEOUT,
    )
    owners = [
        m["manager"]
        for m in dgd["metadata"]["managedFields"]
        if "f:replicas"
        in json.dumps(
            ((m.get("fieldsV1") or {}).get("f:spec") or {}).get("f:services", {}).get("f:Worker", {})
        )
    ]
    assert owners == [FIELD_MANAGER]
    deployment = await eventually(
        lambda: api.get(kinds.DEPLOYMENT, "g-worker", namespace=ns),
        until=lambda d: d["spec"]["replicas"] == 3 and d.get("status", {}).get("readyReplicas") == 3,
        timeout=TIMEOUT,
    )
    assert deployment["spec"]["replicas"] == 3
    adapter = await eventually(
        lambda: api.get(kinds.DGDSA, "g-worker", namespace=ns),
        until=lambda a: (a.get("status") or {}).get("replicas") == 3,
        timeout=TIMEOUT,
    )
    selector = adapter["status"]["selector"]
    assert selector == "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=Worker"
    assert adapter["status"]["lastScaleTime"]
    assert await ready_pods(api, ns, selector) == 3

    # A direct edit (a writer other than the adapter) is reverted to the adapter's value.
    kubectl(
        "patch", "dgd/g", "-n", ns, "--type=merge", "-p", '{"spec":{"services":{"Worker":{"replicas":1}}}}'
    )
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "g", namespace=ns),
        until=lambda d: worker_replicas(d) == 3,
        timeout=TIMEOUT,
    )
    deployment = await api.get(kinds.DEPLOYMENT, "g-worker", namespace=ns)
    assert deployment["spec"]["replicas"] in (1, 3)  # it may have seen 1 for an instant, never stays there
    await eventually(
        lambda: api.get(kinds.DEPLOYMENT, "g-worker", namespace=ns),
        until=lambda d: d["spec"]["replicas"] == 3,
        timeout=TIMEOUT,
    )
    assert (await api.get(kinds.DGDSA, "g-worker", namespace=ns))["spec"]["replicas"] == 3


async def test_hpa_can_target_adapter_through_scale_subresource(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """An autoscaling/v2 HPA targets the adapter; `/scale` shows replicas and the pod selector, and the
    HPA controller resolves the target (AbleToScale)."""
    await apply(api, graph("h", ns))
    await eventually(
        lambda: get_or_none(api, kinds.DGDSA, "h-worker", ns),
        until=lambda a: bool(a and (a.get("status") or {}).get("selector")),
        timeout=TIMEOUT,
    )
    scale = json.loads(
        kubectl(
            "get",
            "--raw",
            f"/apis/nvidia.com/v1alpha1/namespaces/{ns}/dynamographdeploymentscalingadapters/h-worker/scale",
        )
    )
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 1
    assert (
        scale["status"]["selector"]
        == "nvidia.com/dynamo-graph-deployment-name=h,nvidia.com/dynamo-component=Worker"
    )

    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h-worker", "namespace": ns},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "nvidia.com/v1alpha1",
                "kind": "DynamoGraphDeploymentScalingAdapter",
                "name": "h-worker",
            },
            "minReplicas": 1,
            "maxReplicas": 4,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                }
            ],
        },
    }
    await api.create(HORIZONTAL_POD_AUTOSCALER, hpa)

    def able_to_scale(h: dict[str, Any]) -> bool:
        conds = (h.get("status") or {}).get("conditions") or []
        return any(c["type"] == "AbleToScale" and c["status"] == "True" for c in conds)

    resolved = await eventually(
        lambda: api.get(HORIZONTAL_POD_AUTOSCALER, "h-worker", namespace=ns),
        until=able_to_scale,
        timeout=TIMEOUT,
    )
    [cond] = [c for c in resolved["status"]["conditions"] if c["type"] == "AbleToScale"]
    assert cond["reason"] in ("SucceededGetScale", "ReadyForNewScale", "SucceededRescale")


async def test_disabling_adapter_deletes_it(api: Client, operator: RunningOperator, ns: str) -> None:
    """Turning `scalingAdapter.enabled` off removes the adapter; the graph keeps its replicas."""
    await apply(api, graph("d", ns))
    await eventually(lambda: get_or_none(api, kinds.DGDSA, "d-worker", ns), timeout=TIMEOUT)
    await apply(api, graph("d", ns, adapter=False))
    await eventually(
        lambda: get_or_none(api, kinds.DGDSA, "d-worker", ns), until=lambda a: a is None, timeout=TIMEOUT
    )
    assert worker_replicas(await api.get(kinds.DGD, "d", namespace=ns)) == 1
