"""The v1beta1-only status of a DynamoGraphDeploymentRequest, read as v1beta1 from the API server:
`profilingPhase` follows the steps the profiler's sidecar relays into the output ConfigMap and is
cleared once profiling ended (kept, and named in the Profiling condition's reason, when the Job
failed); `deploymentInfo` holds the created graph's replicas, and a steady request writes nothing.
The test plays the profiler and its sidecar (dgdr_testlib)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import JOB
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from integration.controllers_requests.dgdr_testlib import (
    TIMEOUT,
    finish_pod,
    report_step,
    request,
    write_output,
)
from integration.controllers_requests.requests_testlib import apply, condition, get_or_none
from testsupport.api import as_stored, eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator, wait_quiet
from testsupport.webhook import session_bundle_in_crds

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]


async def as_beta(api: Client, ns: str, name: str) -> dict[str, Any]:
    """The request as v1beta1 (the stored version: no conversion webhook in the way)."""
    return await as_stored(api, kinds.DGDR, name, ns)


async def beta_until(api: Client, ns: str, name: str, until: Any, timeout: float = TIMEOUT) -> dict[str, Any]:  # noqa: ASYNC109
    return await eventually(
        lambda: as_beta(api, ns, name), until=lambda o: until(o.get("status") or {}), timeout=timeout
    )


async def test_profiling_phase_follows_the_profilers_steps_and_clears_when_profiling_ends(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("steps", ns))
    started = await beta_until(api, ns, "steps", lambda s: s.get("phase") == "Profiling")
    assert started["status"]["profilingPhase"] == "Initializing"

    await report_step(api, "steps", ns, "SweepingPrefill", "sweeping prefill: tp=1")
    prefill = await beta_until(api, ns, "steps", lambda s: s.get("profilingPhase") == "SweepingPrefill")
    cond = condition(prefill, "Profiling")
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False",
        "SweepingPrefill",
        "sweeping prefill: tp=1",
    )

    await report_step(api, "steps", ns, "SweepingDecode", "sweeping decode")
    decode = await beta_until(api, ns, "steps", lambda s: s.get("profilingPhase") == "SweepingDecode")
    assert decode["status"]["phase"] == "Profiling"
    assert condition(decode, "Profiling")["reason"] == "SweepingDecode"

    await write_output(api, "steps", ns, real="gen-real", mocker="gen-mocker", step="Done", message="done")
    await finish_pod(api, kubectl, ns, "profile-steps", phase="Succeeded")
    ready = await beta_until(api, ns, "steps", lambda s: s.get("phase") == "Ready")
    assert "profilingPhase" not in ready["status"]
    assert condition(ready, "Profiling")["reason"] == "ProfilingCompleted"


async def test_a_failed_job_keeps_the_step_it_died_in(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("dies", ns))
    await beta_until(api, ns, "dies", lambda s: s.get("phase") == "Profiling")
    # No retry: the first failed pod fails the Job.
    await api.patch(JOB, "profile-dies", {"spec": {"backoffLimit": 0}}, namespace=ns, field_manager="test")
    await report_step(api, "dies", ns, "SweepingDecode", "sweeping decode")
    await beta_until(api, ns, "dies", lambda s: s.get("profilingPhase") == "SweepingDecode")

    await finish_pod(api, kubectl, ns, "profile-dies", phase="Failed", message="CUDA out of memory")
    failed = await beta_until(api, ns, "dies", lambda s: s.get("phase") == "Failed")
    assert failed["status"]["profilingPhase"] == "SweepingDecode"
    cond = condition(failed, "Profiling")
    assert (cond["status"], cond["reason"]) == ("False", "SweepingDecodeFailed")
    assert "CUDA out of memory" in cond["message"]


async def test_deployment_info_holds_the_deployed_graphs_replicas_and_stays_without_writes(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("info", ns, autoApply=True, deploymentOverrides={"name": "served"}))
    await beta_until(api, ns, "info", lambda s: s.get("phase") == "Profiling")
    await write_output(api, "info", ns, real="gen-real", mocker="gen-mocker")
    await finish_pod(api, kubectl, ns, "profile-info", phase="Succeeded")

    # A frontend and a worker, one replica each, both available once the graph is successful.
    deployed = await beta_until(
        api,
        ns,
        "info",
        lambda s: (
            s.get("phase") == "Deployed"
            and s.get("deploymentInfo") == {"replicas": 2, "availableReplicas": 2}
        ),
        timeout=180.0,
    )
    assert deployed["status"]["dgdName"] == "served"
    assert "profilingPhase" not in deployed["status"]

    # Steady: a change of the graph that moves no replica brings the request back and writes nothing.
    await wait_quiet(settle=2.0, timeout=60.0)
    before = await as_beta(api, ns, "info")
    kubectl("annotate", "dynamographdeployments.v1beta1.nvidia.com/served", "-n", ns, "test/poke=1")
    await wait_quiet(settle=2.0, timeout=60.0)
    after = await as_beta(api, ns, "info")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert await get_or_none(api, kinds.DGD, "served", ns) is not None


async def apply_beta_request(
    api: Client, kubectl: Kubectl, ns: str, tmp_path: Path, name: str, **spec: str
) -> None:
    """`kubectl apply` of a v1beta1 request for Qwen3-0.6B on vLLM plus `spec`, as a user would."""
    manifest = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name},
        "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", **spec},
    }
    path = tmp_path / f"{name}.yaml"
    await asyncio.to_thread(path.write_text, json.dumps(manifest))
    # The admission policies read the v1alpha1 form: the webhook must be reachable for the write.
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    # In a thread: the webhook answering the API server runs on this event loop.
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(path))


async def test_a_v1beta1_request_naming_only_model_and_image_starts_profiling(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    """Upstream's v1beta1 accepts it: the SLA and workload are the profiler's defaults."""
    await apply_beta_request(
        api, kubectl, ns, tmp_path, "minimal", image="registry.example/dynamo-planner:1.5.0"
    )
    profiling = await beta_until(api, ns, "minimal", lambda s: s.get("phase") == "Profiling")
    assert profiling["status"]["profilingJobName"] == "profile-minimal"
    assert await get_or_none(api, JOB, "profile-minimal", ns) is not None


async def test_a_v1beta1_request_without_an_image_fails_validation_naming_spec_image(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl, tmp_path: Path
) -> None:
    """Checked in the request's v1alpha1 view (`profilingConfig.profilerImage`), told in the terms of
    the version it is stored and was written in. Applied with kubectl, as a user would."""
    await apply_beta_request(api, kubectl, ns, tmp_path, "no-image")
    failed = await beta_until(api, ns, "no-image", lambda s: s.get("phase") == "Failed")
    cond = condition(failed, "Validation")
    assert (cond["status"], cond["reason"]) == ("False", "ValidationFailed")
    assert "spec.image is required" in cond["message"], cond["message"]
    assert "profilingConfig" not in cond["message"]
