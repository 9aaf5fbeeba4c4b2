"""A v1beta1 graph using a field this operator does not implement is refused whole, naming the field.

Real chain: upstream's snapshot-restore example is applied as written (v1beta1, server-side); the graph
reconciler finds `experimental.checkpoint` on the stored graph and reports `Ready=False` /
`FieldNotImplemented` with one Warning Event, naming the field as v1beta1 spells it, and writes no
child. A DCD applied directly as v1beta1 with an inter-pod GPU memory service is refused the same way
by its own reconciler.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator
from testsupport.webhook import session_bundle_in_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

EXAMPLE = (
    Path(__file__).resolve().parents[3]
    / ".."
    / "shared"
    / "upstream-examples-2a6da14c"
    / "examples-applied"
    / "backends_trtllm_snapshot-restore.yaml"
)
NAME = "qwen3-0-6b-trtllm-snapshot-restore"
FIELD = "spec.components[name=TRTLLMWorker].experimental.checkpoint.enabled"
TIMEOUT = 120.0


def ready(obj: dict[str, Any]) -> dict[str, Any]:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return dict(cond)
    return {}


async def test_snapshot_restore_graph_is_refused_naming_checkpoint_and_writes_nothing(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str
) -> None:
    """Ready=False with reason FieldNotImplemented and the checkpoint field in the message, one Warning
    Event with that reason, and no DCD and no Deployment in the namespace."""
    assert EXAMPLE.is_file(), f"{EXAMPLE} is missing (the shared reference data)"
    # The API server can call the webhook only once the session operator's CA is in the CRDs.
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    # In a thread: the webhook answering the API server runs on this event loop.
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(EXAMPLE))

    refused = await eventually(
        lambda: api.get(kinds.DGD, NAME, namespace=ns),
        until=lambda d: ready(d).get("reason") == "FieldNotImplemented",
        timeout=TIMEOUT,
        interval=0.25,
    )
    cond = ready(refused)
    assert cond["status"] == "False"
    assert cond["message"].startswith(f"{FIELD}: checkpoint/restore is not implemented"), cond["message"]

    selector = f"involvedObject.name={NAME},type=Warning"
    events = await eventually(
        lambda: api.list(EVENT, namespace=ns, field_selector=selector),
        until=lambda xs: any(e.get("reason") == "FieldNotImplemented" for e in xs),
        timeout=30,
    )
    assert [e.get("reason") for e in events] == ["FieldNotImplemented"]
    assert events[0].get("count", 1) == 1
    assert FIELD in events[0]["message"]

    assert await api.list(kinds.DCD, namespace=ns) == []
    assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []


INTER_POD_DCD = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoComponentDeployment
metadata:
  name: gms-inter-pod
spec:
  backendFramework: vllm
  type: worker
  replicas: 1
  experimental:
    gpuMemoryService:
      mode: InterPod
  podTemplate:
    spec:
      containers:
        - name: main
          image: registry.example/ai-dynamo/vllm-runtime:0.6.1
"""


async def test_dcd_applied_as_v1beta1_with_inter_pod_gms_is_refused_and_writes_nothing(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """A DCD written directly (no graph) with `gpuMemoryService.mode: InterPod`: Available=False with
    reason FieldNotImplemented naming the field, one Warning Event, no Deployment."""
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    manifest = tmp_path / "dcd.yaml"
    manifest.write_text(INTER_POD_DCD)
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(manifest))

    def condition(obj: dict[str, Any]) -> dict[str, Any]:
        for cond in (obj.get("status") or {}).get("conditions") or ():
            if cond.get("type") == "Available":
                return dict(cond)
        return {}

    refused = await eventually(
        lambda: api.get(kinds.DCD, "gms-inter-pod", namespace=ns),
        until=lambda d: condition(d).get("reason") == "FieldNotImplemented",
        timeout=TIMEOUT,
        interval=0.25,
    )
    cond = condition(refused)
    assert cond["status"] == "False"
    expected = "spec.experimental.gpuMemoryService.mode: the inter-pod GPU memory service"
    assert cond["message"].startswith(expected), cond["message"]
    selector = "involvedObject.name=gms-inter-pod,type=Warning"
    events = await eventually(
        lambda: api.list(EVENT, namespace=ns, field_selector=selector),
        until=lambda xs: any(e.get("reason") == "FieldNotImplemented" for e in xs),
        timeout=30,
    )
    assert [e.get("reason") for e in events] == ["FieldNotImplemented"]
    assert events[0].get("count", 1) == 1
    assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []


PRIORITY_GRAPH = """\
apiVersion: nvidia.com/v1beta1
kind: DynamoGraphDeployment
metadata:
  name: wants-grove
spec:
  backendFramework: vllm
  priorityClassName: high-priority
  components:
    - name: Frontend
      type: frontend
      replicas: 1
      podTemplate:
        spec:
          containers:
            - name: main
              image: registry.example/ai-dynamo/vllm-runtime:0.6.1
"""


async def test_a_grove_only_field_on_the_component_pathway_is_refused_and_writes_nothing(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """`priorityClassName` has a place only in a Grove PodCliqueSet: without Grove the graph reports
    Ready=False / GrovePathwayRequired naming the field and why, one Warning Event, no DCD, and no
    recorded workload provider."""
    assert not operator.capabilities.grove
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    manifest = tmp_path / "dgd.yaml"
    manifest.write_text(PRIORITY_GRAPH)
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(manifest))
    refused = await eventually(
        lambda: api.get(kinds.DGD, "wants-grove", namespace=ns),
        until=lambda d: ready(d).get("reason") == "GrovePathwayRequired",
        timeout=TIMEOUT,
        interval=0.25,
    )
    cond = ready(refused)
    assert cond["status"] == "False"
    assert cond["message"].startswith("spec.priorityClassName: requires the Grove pathway"), cond["message"]
    assert "Grove is not available" in cond["message"]
    selector = "involvedObject.name=wants-grove,type=Warning"
    events = await eventually(
        lambda: api.list(EVENT, namespace=ns, field_selector=selector),
        until=lambda xs: any(e.get("reason") == "GrovePathwayRequired" for e in xs),
        timeout=30,
    )
    assert [e.get("reason") for e in events] == ["GrovePathwayRequired"]
    assert await api.list(kinds.DCD, namespace=ns) == []
    # Not pinned to the component pathway: once Grove is there, the graph takes it.
    annotations = refused["metadata"].get("annotations") or {}
    assert "nvidia.com/workload-provider" not in annotations
