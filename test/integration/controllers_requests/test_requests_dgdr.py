"""DynamoGraphDeploymentRequests against the real API server, the test playing the profiler: it
finishes (or fails) the Job's pod through kwok and writes the output ConfigMap the sidecar would."""

from __future__ import annotations

import asyncio

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, JOB, SERVICE_ACCOUNT
from integration.controllers_requests.dgdr_testlib import (
    TIMEOUT,
    WORKERS_IMAGE,
    event_reasons,
    finish_pod,
    request,
    state_of,
    wait_state,
    write_output,
)
from integration.controllers_requests.requests_testlib import apply, condition, get_or_none
from testsupport.api import as_stored, eventually
from testsupport.cluster import Kubectl, KubectlError
from testsupport.graphs import IMAGE
from testsupport.operator import RunningOperator, wait_quiet

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

# kubectl names the version: v1beta1 is served too and would be kubectl's choice, through the
# conversion webhook, which these tests are not about.
DGDR_V1ALPHA1 = "dynamographdeploymentrequests.v1alpha1.nvidia.com"


@pytest.mark.parametrize(
    ("use_mocker", "expected"),
    [pytest.param(False, "gen-real", id="real-key"), pytest.param(True, "gen-mocker", id="mocker-key")],
)
async def test_profiling_result_becomes_generated_deployment(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl, *, use_mocker: bool, expected: str
) -> None:
    """Pending → Profiling with an owned Job; a completed Job plus the output ConfigMap → Ready with
    status.generatedDeployment (the mocker DGD with useMocker) and the extra ConfigMap created."""
    created = await apply(api, request("req", ns, useMocker=use_mocker))
    dgdr = await wait_state(api, ns, "req", "Profiling")
    assert dgdr["status"]["observedGeneration"] == created["metadata"]["generation"]
    assert dgdr["status"]["backend"] == "vllm"
    assert condition(dgdr, "Profiling")["reason"] == "ProfilingRunning"
    job = await api.get(JOB, "profile-req", namespace=ns)
    [owner] = job["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "DynamoGraphDeploymentRequest",
        created["metadata"]["uid"],
        True,
    )
    assert job["metadata"]["labels"] == {
        "app": "dynamo-profiler",
        "dgdr": "req",
        "nvidia.com/managed-by": "dynamo-operator",
    }
    pod_spec = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod_spec["containers"]] == ["profiler", "output-copier"]
    profile_config = yaml.safe_load(pod_spec["containers"][0]["args"][1])
    assert profile_config["deployment"]["model"] == "Qwen/Qwen3-0.6B"
    assert profile_config["engine"]["backend"] == "vllm"
    assert await get_or_none(api, SERVICE_ACCOUNT, "dgdr-profiling-job", ns) is not None

    await write_output(api, "req", ns, real="gen-real", mocker="gen-mocker")
    await finish_pod(api, kubectl, ns, "profile-req", phase="Succeeded")

    ready = await wait_state(api, ns, "req", "Ready")
    generated = ready["status"]["generatedDeployment"]
    assert (generated["kind"], generated["metadata"]["name"]) == ("DynamoGraphDeployment", expected)
    output_cm = await api.get(CONFIG_MAP, "dgdr-output-req", namespace=ns)
    assert [r["uid"] for r in output_cm["metadata"]["ownerReferences"]] == [created["metadata"]["uid"]]
    assert (condition(ready, "Profiling")["status"], condition(ready, "Profiling")["reason"]) == (
        "True",
        "ProfilingCompleted",
    )
    assert (condition(ready, "SpecGenerated")["status"], condition(ready, "SpecGenerated")["reason"]) == (
        "True",
        "SpecGenerated",
    )
    assert await get_or_none(api, kinds.DGD, expected, ns) is None  # no autoApply: nothing deployed
    extra = await api.get(CONFIG_MAP, "planner-profile-data", namespace=ns)
    assert extra["metadata"]["labels"] == {
        "dgdr.nvidia.com/name": "req",
        "dgdr.nvidia.com/namespace": ns,
        "nvidia.com/managed-by": "dynamo-operator",
    }
    reasons = await eventually(
        lambda: event_reasons(api, ns, "req"),
        until=lambda rs: {"Initialized", "ProfilingJobCreated", "SpecGenerated"} <= set(rs),
    )
    assert "ValidationFailed" not in reasons


async def test_autoapply_overrides_no_recreate(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """autoApply: the DGD is created with the overrides and tracking labels, no ownerReference, and
    the request turns Ready with it (v1beta1: Deployed); after the user deletes the DGD the request
    fails with reason DeploymentDeleted, as upstream's v1beta1 has it, and the DGD stays gone. The
    output ConfigMap arriving after the Job completed is still read."""
    overrides = {
        "name": "served",
        "labels": {"team": "a"},
        "annotations": {"note": "x"},
        "workersImage": WORKERS_IMAGE,
    }
    created = await apply(api, request("auto", ns, autoApply=True, deploymentOverrides=overrides))
    await wait_state(api, ns, "auto", "Profiling")
    await finish_pod(api, kubectl, ns, "profile-auto", phase="Succeeded")
    await eventually(
        lambda: api.get(JOB, "profile-auto", namespace=ns),
        until=lambda j: any(
            c["type"] == "Complete" and c["status"] == "True"
            for c in (j.get("status") or {}).get("conditions", [])
        ),
        timeout=TIMEOUT,
    )
    await asyncio.sleep(1.0)  # the output lands after the Job completed: within the grace period
    assert (await state_of(api, ns, "auto"))["status"]["state"] == "Profiling"
    await write_output(api, "auto", ns, real="gen-real", mocker="gen-mocker")

    dgd = await eventually(lambda: get_or_none(api, kinds.DGD, "served", ns), timeout=TIMEOUT)
    labels = dgd["metadata"]["labels"]
    assert labels["team"] == "a" and labels["from"] == "profiler"
    assert (labels["dgdr.nvidia.com/name"], labels["dgdr.nvidia.com/namespace"]) == ("auto", ns)
    assert labels["nvidia.com/managed-by"] == "dynamo-operator"
    assert dgd["metadata"]["annotations"]["note"] == "x"
    assert "ownerReferences" not in dgd["metadata"]
    worker = dgd["spec"]["services"]["VllmWorker"]
    assert worker["extraPodSpec"]["mainContainer"]["image"] == WORKERS_IMAGE
    assert dgd["spec"]["services"]["Frontend"]["extraPodSpec"]["mainContainer"]["image"] == IMAGE

    ready = await wait_state(api, ns, "auto", "Ready", timeout=180.0)
    assert ready["status"]["deployment"] == {"name": "served"}
    beta = await as_stored(api, kinds.DGDR, "auto", ns)
    assert (beta["status"]["phase"], beta["status"]["dgdName"]) == ("Deployed", "served")
    assert (condition(ready, "DeploymentReady")["status"], condition(ready, "DeploymentReady")["reason"]) == (
        "True",
        "DeploymentReady",
    )

    await api.delete(kinds.DGD, "served", namespace=ns)
    deleted = await wait_state(api, ns, "auto", "Failed")
    assert condition(deleted, "DeploymentReady")["reason"] == "DeploymentDeleted"
    # Poke the request (a metadata edit triggers a reconcile) and let the operator settle: no DGD.
    kubectl("annotate", f"{DGDR_V1ALPHA1}/auto", "-n", ns, "test/poke=1")
    await wait_quiet(settle=2.0, timeout=30.0)
    assert await get_or_none(api, kinds.DGD, "served", ns) is None
    assert (await state_of(api, ns, "auto"))["status"]["state"] == "Failed"
    assert created["metadata"]["uid"] == (await state_of(api, ns, "auto"))["metadata"]["uid"]


async def test_failed_job_fails_with_pod_message(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """A failed profiler pod with retries left keeps the request Profiling; once the Job has used its
    retries and failed, the request turns Failed with the pod's termination message in the
    Profiling condition and a Warning Event."""
    await apply(api, request("bad", ns))
    await wait_state(api, ns, "bad", "Profiling")
    job = await api.get(JOB, "profile-bad", namespace=ns)
    assert job["spec"]["backoffLimit"] == 3  # upstream's: four pods in all
    # The Job controller waits 10 s, 20 s, 40 s before the second, third and fourth pod; one retry
    # shows the same thing as three (the operator reads the Job's verdict, not its pod count).
    await api.patch(JOB, "profile-bad", {"spec": {"backoffLimit": 1}}, namespace=ns, field_manager="test")

    first = await finish_pod(api, kubectl, ns, "profile-bad", phase="Failed", message="CUDA out of memory")
    second = await finish_pod(
        api, kubectl, ns, "profile-bad", phase="Failed", message="CUDA out of memory", skip={first}
    )
    assert second != first
    # The second pod exists only because the Job still had a retry: meanwhile the request waited.
    assert (await state_of(api, ns, "bad"))["status"]["state"] == "Profiling"

    failed = await wait_state(api, ns, "bad", "Failed")
    cond = condition(failed, "Profiling")
    # The reason names the step the run died in (upstream's v1beta1): here the first, Initializing,
    # as the profiler reported none.
    assert (cond["status"], cond["reason"]) == ("False", "InitializingFailed")
    assert cond["message"].startswith("profiling job failed: ")
    assert "Container: profiler, ExitCode: 1, Reason: Error, Message: CUDA out of memory" in cond["message"]
    assert "ProfilingCheckFailed" in await eventually(
        lambda: event_reasons(api, ns, "bad"), until=lambda rs: "ProfilingCheckFailed" in rs
    )


async def test_spec_edit_while_profiling_refused(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """Once profiling started the spec is frozen: the API server refuses the edit (CEL transition
    rule); where it cannot, the controller reports SpecChangeRejected and applies nothing."""
    await apply(api, request("frozen", ns))
    before = await wait_state(api, ns, "frozen", "Profiling")
    job_before = await api.get(JOB, "profile-frozen", namespace=ns)
    try:
        kubectl(
            "patch",
            f"{DGDR_V1ALPHA1}/frozen",
            "-n",
            ns,
            "--type=merge",
            "-p",
            '{"spec":{"model":"other/model"}}',
        )
    except KubectlError as err:
        assert "immutable" in err.stderr
        after = await state_of(api, ns, "frozen")
        assert after["metadata"]["generation"] == before["metadata"]["generation"]
    else:
        after = await eventually(
            lambda: state_of(api, ns, "frozen"),
            until=lambda d: condition(d, "Validation").get("reason") == "SpecChangeRejected",
            timeout=TIMEOUT,
        )
        assert after["status"]["observedGeneration"] == before["metadata"]["generation"]
        assert "SpecChangeRejected" in await eventually(
            lambda: event_reasons(api, ns, "frozen"), until=lambda rs: "SpecChangeRejected" in rs
        )
    assert after["status"]["state"] == "Profiling"
    job_after = await api.get(JOB, "profile-frozen", namespace=ns)
    assert job_after["metadata"]["uid"] == job_before["metadata"]["uid"]
    assert (
        job_after["spec"]["template"]["spec"]["containers"][0]["args"]
        == job_before["spec"]["template"]["spec"]["containers"][0]["args"]
    )
