"""The profiling Job of a DGDR, and how to read its outcome back (Job conditions + failed pod)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, Request, json_object
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject
from dynamo_operator.internal.dynamo.dgdr import names, profiler_config

# The sidecar relays the profiler's progress while it runs: each new `phase:` (with its `message:`)
# of the status file goes into the output ConfigMap's `phase` and `message` keys, which the operator
# turns into status.profilingPhase (progress.py), as upstream's sidecar does. Once the profiler
# container ended it publishes the result files into the same ConfigMap, the last step kept beside
# them. A profiler that exits without a "success" status file fails the pod, hence the Job.
# `--from-literal` carries the profiler's words as data, never as YAML the shell put together.
_COPIER_SCRIPT = r"""set -eu
out=/data
status_file="$out/profiler_status.yaml"
publish() {
  kubectl create configmap "$OUTPUT_CONFIG_MAP" -n "$DGDR_NAMESPACE" "$@" --dry-run=client -o yaml \
    | kubectl label --local -f - -o yaml \
        "dgdr.nvidia.com/name=$DGDR_NAME" "nvidia.com/managed-by=dynamo-operator" \
    | kubectl apply -f -
}
status_line() {
  sed -n "s/^$1:[[:space:]]*//p" "$status_file" 2>/dev/null | tr -d "\"'" | head -n1
}
last_phase=""
relay() {
  [ -f "$status_file" ] || return 0
  phase=$(status_line phase)
  if [ -z "$phase" ] || [ "$phase" = "$last_phase" ]; then return 0; fi
  echo "output-copier: profiler step $phase"
  if publish --from-literal=phase="$phase" --from-literal=message="$(status_line message)"; then
    last_phase=$phase
  else
    echo "output-copier: could not relay the step; will try again"
  fi
}
echo "output-copier: waiting for the profiler container to terminate"
waited=0
until kubectl get pod "$HOSTNAME" -n "$DGDR_NAMESPACE" \
    -o jsonpath='{.status.containerStatuses[?(@.name=="profiler")].state.terminated.exitCode}' \
    | grep -q '[0-9]'; do
  relay
  sleep 5; waited=$((waited + 5))
  if [ $((waited % 300)) -eq 0 ]; then echo "output-copier: still waiting after ${waited}s"; fi
done
i=0
while [ ! -f "$status_file" ] && [ "$i" -lt 120 ]; do sleep 1; i=$((i + 1)); done
relay
status=$(status_line status)
if [ "$status" != "success" ]; then
  echo "output-copier: profiler status is '${status:-missing}'"
  grep -E '^(error|message):' "$status_file" 2>/dev/null || true
  exit 1
fi
set -- --from-file=config_with_planner.yaml="$out/config_with_planner.yaml"
if [ -f "$out/mocker_config_with_planner.yaml" ]; then
  set -- "$@" --from-file=mocker_config_with_planner.yaml="$out/mocker_config_with_planner.yaml"
fi
set -- "$@" --from-file=profiler_status.yaml="$status_file"
publish "$@" --from-literal=phase="$(status_line phase)" --from-literal=message="$(status_line message)"
"""


def _env(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value}


def profiling_job(dgdr: Request, *, owner_reference: JsonObject | None = None) -> GeneratedObject:
    """The Job that runs the profiler for `dgdr`, controlled by the owner `owner_reference` names
    (none: the Job as generated, for the reconciler to compare before it creates one)."""
    meta = dgdr["metadata"]
    name, namespace, uid = meta["name"], meta["namespace"], meta.get("uid", "")
    spec = dgdr.get("spec") or {}
    profiling = spec.get("profilingConfig") or {}
    config = profiler_config.profiler_config(spec, namespace=namespace)
    aic = profiler_config.uses_ai_configurator(config)
    labels = {
        names.LABEL_APP: names.APP_AIC_PROFILER if aic else names.APP_ONLINE_PROFILER,
        names.LABEL_DGDR: name,
        names.LABEL_MANAGED_BY: names.MANAGED_BY_OPERATOR,
    }

    args = ["--profile-config", profiler_config.render(config)]
    if spec.get("enableGpuDiscovery"):
        args.append("--enable-gpu-discovery")
    mounts: list[dict[str, Any]] = [{"name": names.OUTPUT_VOLUME, "mountPath": names.OUTPUT_DIR}]
    if profiling.get("outputPVC"):
        output_volume: dict[str, Any] = {
            "name": names.OUTPUT_VOLUME,
            "persistentVolumeClaim": {"claimName": profiling["outputPVC"]},
        }
    else:
        output_volume = {"name": names.OUTPUT_VOLUME, "emptyDir": {}}
    volumes = [output_volume]
    ref = profiling.get("configMapRef")
    if ref:
        mounts.append({"name": names.CONFIG_VOLUME, "mountPath": names.CONFIG_DIR, "readOnly": True})
        volumes.append(
            {
                "name": names.CONFIG_VOLUME,
                "configMap": {
                    "name": ref["name"],
                    "items": [
                        {"key": ref.get("key") or names.BASE_CONFIG_FILE, "path": names.BASE_CONFIG_FILE}
                    ],
                },
            }
        )
    cache = profiler_config.model_cache(config)
    if cache:
        pvc, mount_path = cache
        mounts.append({"name": names.MODEL_CACHE_VOLUME, "mountPath": mount_path, "readOnly": True})
        volumes.append(
            {"name": names.MODEL_CACHE_VOLUME, "persistentVolumeClaim": {"claimName": pvc, "readOnly": True}}
        )

    identity = [
        _env("DGDR_NAME", name),
        _env("DGDR_NAMESPACE", namespace),
        _env("DGDR_UID", uid),
    ]
    profiler: dict[str, Any] = {
        "name": names.PROFILER_CONTAINER,
        "image": profiling.get("profilerImage", ""),
        "command": ["python", "-m", "benchmarks.profiler.profile_sla"],
        "args": args,
        "env": [
            {
                "name": "HUGGING_FACE_HUB_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": names.HF_TOKEN_SECRET, "key": names.HF_TOKEN_KEY}},
            },
            _env("NATS_SERVER", f"nats://{namespace}-nats:4222"),
            _env("ETCD_ENDPOINTS", f"{namespace}-etcd:2379"),
            *identity,
        ],
        "volumeMounts": mounts,
    }
    if profiling.get("resources"):
        profiler["resources"] = profiling["resources"]
    copier = {
        "name": names.COPIER_CONTAINER,
        "image": names.COPIER_IMAGE,
        "command": ["/bin/sh", "-c", _COPIER_SCRIPT],
        "env": [*identity, _env("OUTPUT_CONFIG_MAP", names.output_config_map_name(name))],
        "volumeMounts": [{"name": names.OUTPUT_VOLUME, "mountPath": names.OUTPUT_DIR, "readOnly": True}],
    }
    pod_spec: dict[str, Any] = {
        "serviceAccountName": names.PROFILING_SERVICE_ACCOUNT,
        "restartPolicy": "Never",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": names.PROFILER_UID,
            "runAsGroup": names.PROFILER_UID,
            "fsGroup": names.PROFILER_UID,
        },
        "imagePullSecrets": [{"name": names.IMAGE_PULL_SECRET}],
        "containers": [profiler, copier],
        "volumes": volumes,
    }
    if profiling.get("tolerations"):
        pod_spec["tolerations"] = list(profiling["tolerations"])
    if profiling.get("nodeSelector"):
        pod_spec["nodeSelector"] = dict(profiling["nodeSelector"])
    job_meta: dict[str, Any] = {"name": names.job_name(name), "namespace": namespace, "labels": dict(labels)}
    if owner_reference is not None:
        job_meta["ownerReferences"] = [owner_reference]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": job_meta,
        "spec": {
            "backoffLimit": names.JOB_BACKOFF_LIMIT,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod_spec},
        },
    }


def runs_ai_configurator(job: ForeignObject) -> bool:
    """Whether a profiling Job (as `profiling_job` makes it) profiles by AI-Configurator's simulation
    rather than online: what its app label says."""
    labels = json_object(json_object(job.get("metadata")).get("labels"))
    return labels.get(names.LABEL_APP) == names.APP_AIC_PROFILER


class JobPhase(enum.Enum):
    RUNNING = enum.auto()
    SUCCEEDED = enum.auto()
    FAILED = enum.auto()


@dataclass(frozen=True, slots=True)
class JobOutcome:
    phase: JobPhase
    message: str = ""


def job_outcome(job: ForeignObject) -> JobOutcome:
    """Finished only on the terminal conditions (`Complete`/`Failed`); the interim `SuccessCriteriaMet`
    and `FailureTarget` still have pods terminating."""
    for cond in map(json_object, _items(json_object(job.get("status")).get("conditions"))):
        if cond.get("status") != "True":
            continue
        if cond.get("type") == "Complete":
            return JobOutcome(JobPhase.SUCCEEDED)
        if cond.get("type") == "Failed":
            return JobOutcome(JobPhase.FAILED, str(cond.get("message") or cond.get("reason") or ""))
    return JobOutcome(JobPhase.RUNNING)


def _items(value: object) -> list[object]:
    """`value` if it is a JSON list, else an empty one (a missing list reads as empty)."""
    return value if isinstance(value, list) else []


def pod_failure_detail(pods: Iterable[ForeignObject]) -> str:
    """Why the profiler failed, from the newest failed pod: its container's termination state, else the
    pod's own reason/message. Empty when no pod failed visibly."""
    failed = [p for p in pods if json_object(p.get("status")).get("phase") == "Failed"]
    failed.sort(
        key=lambda p: str(json_object(p.get("metadata")).get("creationTimestamp") or ""), reverse=True
    )
    for pod in failed:
        pod_name = json_object(pod.get("metadata")).get("name")
        status = json_object(pod.get("status"))
        for cs in map(json_object, _items(status.get("containerStatuses"))):
            if cs.get("name") != names.PROFILER_CONTAINER:
                continue
            state = json_object(cs.get("state"))
            if term := json_object(state.get("terminated")):
                detail = (
                    f"Pod: {pod_name}, Container: {names.PROFILER_CONTAINER}, "
                    f"ExitCode: {term.get('exitCode', '')}, Reason: {term.get('reason', '')}"
                )
                return detail + (f", Message: {term['message']}" if term.get("message") else "")
            if wait := json_object(state.get("waiting")):
                return (
                    f"Pod: {pod_name}, Container: {names.PROFILER_CONTAINER}, "
                    f"Waiting - Reason: {wait.get('reason', '')}, Message: {wait.get('message', '')}"
                )
        if status.get("message") or status.get("reason"):
            reason, message = status.get("reason", ""), status.get("message", "")
            return f"Pod: {pod_name}, Reason: {reason}, Message: {message}"
    return ""


def failure_message(outcome: JobOutcome, detail: str) -> str:
    """The condition message of a failed profiling Job."""
    message = f"profiling job failed: {outcome.message or 'unknown reason'}"
    return f"{message}. Details: {detail}" if detail else message
