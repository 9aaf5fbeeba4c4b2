"""Scaling adapters against the real API server: the scale subresource drives the graph, pods follow,
direct edits are reverted, HPA can target an adapter, and disabling the adapter removes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import HORIZONTAL_POD_AUTOSCALER, POD
from dynamo_operator.internal.dynamo.scalingadapter.adapter import FIELD_MANAGER
from integration.controllers_requests.requests_testlib import apply, get_or_none, graph
from testsupport.admission import namespace_binding
from testsupport.api import eventually
from testsupport.cluster import Kubectl, KubectlError
from testsupport.components import deployment_of
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
    assert adapter["spec"] == {"replicas": 1, "dgdRef": {"name": "g", "componentName": "Worker"}}

    kubectl("scale", "dgdsa/g-worker", "--replicas=3", "-n", ns)

    dgd = await eventually(
        lambda: api.get(kinds.DGD, "g", namespace=ns),
        until=lambda d: worker_replicas(d) == 3,
        timeout=TIMEOUT,
    )
    # The operator applies the stored version, v1beta1: the field is spec.components[name=Worker].replicas.
    worker_key = 'k:{"name":"Worker"}'
    owners = [
        m["manager"]
        for m in dgd["metadata"]["managedFields"]
        if "f:replicas"
        in json.dumps(
            ((m.get("fieldsV1") or {}).get("f:spec") or {}).get("f:components", {}).get(worker_key, {})
        )
    ]
    assert owners == [FIELD_MANAGER]
    # Replicas are not part of the worker hash: the worker keeps its Deployment.
    deployment = await eventually(
        lambda: deployment_of(api, ns, "g", "Worker"),
        until=lambda d: (
            d is not None and d["spec"]["replicas"] == 3 and d.get("status", {}).get("readyReplicas") == 3
        ),
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
    worker = deployment["metadata"]["name"]
    deployment = await api.get(kinds.DEPLOYMENT, worker, namespace=ns)
    assert deployment["spec"]["replicas"] in (1, 3)  # it may have seen 1 for an instant, never stays there
    await eventually(
        lambda: api.get(kinds.DEPLOYMENT, worker, namespace=ns),
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


POLICY_FILE = Path(__file__).resolve().parents[3] / "config" / "admission" / "adapter_replicas_policy.yaml"
OPERATOR_NAMESPACE, OPERATOR_NAME = "dynamo-system", "dynamo-operator-controller-manager"
OPERATOR_SA = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_NAME}"


async def test_admission_policy_refuses_replica_edits_by_ordinary_users(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """With the shipped ValidatingAdmissionPolicy bound to this namespace only, a user editing an
    adapter-managed service's replicas is refused with a pointer to the adapter; the operator's
    service account may; edits of services without an adapter stay free."""
    await apply(api, graph("p", ns))
    await eventually(lambda: get_or_none(api, kinds.DGDSA, "p-worker", ns), timeout=TIMEOUT)
    policy = yaml.safe_load(POLICY_FILE.read_text())
    name = f"{ns}-adapter-replicas"[:63]
    policy["metadata"]["name"] = name
    # The operator's identity, as config/default writes it into the policy.
    identity = {"operatorNs": f"'{OPERATOR_NAMESPACE}'", "operatorSa": f"'{OPERATOR_NAME}'"}
    for variable in policy["spec"]["variables"]:
        variable["expression"] = identity.get(variable["name"], variable["expression"])
    binding = namespace_binding(name, ns)
    if not kubectl("get", "namespace", OPERATOR_NAMESPACE, "--ignore-not-found"):
        kubectl("create", "namespace", OPERATOR_NAMESPACE)
    kubectl("apply", "-f", "-", stdin=json.dumps(policy))
    kubectl("apply", "-f", "-", stdin=json.dumps(binding))
    edit = '{"spec":{"services":{"Worker":{"replicas":5}}}}'
    try:

        def as_user(user: str, patch: str = edit) -> str:
            # The version named: kubectl would pick v1beta1, through the conversion webhook.
            graph = "dynamographdeployments.v1alpha1.nvidia.com/p"
            args = ["patch", graph, "-n", ns, "--type=merge", "-p", patch, "--dry-run=server"]
            try:
                return kubectl(*args, "--as", user, "--as-group", "system:masters")
            except KubectlError as err:
                return err.stderr

        refused = await eventually(
            lambda: as_user("jane"), until=lambda out: "DynamoGraphDeploymentScalingAdapter" in out
        )
        assert "spec.components[Worker].replicas" in refused and "kubectl scale dgdsa" in refused
        assert "patched" in as_user(OPERATOR_SA)
        assert "patched" in as_user("jane", '{"spec":{"services":{"Frontend":{"replicas":2}}}}')
    finally:
        kubectl("delete", "validatingadmissionpolicybinding", name, "--ignore-not-found", check=False)
        kubectl("delete", "validatingadmissionpolicy", name, "--ignore-not-found", check=False)
