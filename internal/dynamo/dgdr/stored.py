"""A request's lifecycle as nvidia.com/v1beta1 stores it. Pure.

The DGDR is read and written as stored, in v1beta1; the machine decides by its v1alpha1 form, which
view.py lowers it to. Part of the v1alpha1 status has no v1beta1 field (`backend`,
`profilingResults`, the created graph's namespace, state and `created` flag, the state
DeploymentDeleted): the conversion keeps it in the
`nvidia.com/dgdr-status` annotation, and a write of the status subresource cannot set annotations,
so none of it outlives a status write. The machine therefore decides only by what v1beta1 holds:

- the state: `status.phase` (Deployed reads as Ready; "" is no phase yet);
- the created graph: its name is `status.dgdName`, its namespace the request's own (no other is
  ever accepted), and whether it was created is said by the DeploymentReady condition, which only
  a step after the create writes (`deployment_created`);
- the profiling Job: its name is a function of the request's (`names.job_name`); it is also written
  to `status.profilingJobName` when the Job is created, where upstream keeps it.

`profilingPhase` and `deploymentInfo` exist in v1beta1 only: the machine decides them by transition
(`hub_fields`), never from the v1alpha1 status, and a step that says nothing of them leaves them.

On a cluster whose CRD still stores v1alpha1 (an older release's, until the storage migration), the
client's codec writes the same v1beta1 status in v1alpha1: the v1beta1-only fields and the v1alpha1-only
ones are then both absent from it, and the machine, deciding by the fields both versions hold, goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.api.views.v1alpha1 import DeploymentStatus
from dynamo_operator.internal.dynamo.common.inputs import (
    ForeignObject,
    RequestStatus,
    StoredRequestStatus,
    json_object,
    stored_request_status_of,
)
from dynamo_operator.internal.dynamo.dgdr.machine import KEEP, Transition
from dynamo_operator.internal.dynamo.dgdr.vocabulary import ConditionType, Reason

KIND: Final = "DynamoGraphDeploymentRequest"
PROFILING_JOB_NAME: Final = "profilingJobName"
PROFILING_PHASE: Final = "profilingPhase"
DEPLOYMENT_INFO: Final = "deploymentInfo"

# DeploymentReady reasons the machine writes only once the graph was created (the create's own
# step, then what it saw of the graph); NamespaceNotAllowed, the other one, means nothing was.
CREATED_REASONS: Final = frozenset(
    {
        Reason.DEPLOYMENT_CREATED,
        Reason.DEPLOYMENT_READY,
        Reason.DEPLOYMENT_DEGRADED,
        Reason.DEPLOYMENT_DELETED,
    }
)
# The v1beta1 status fields the machine writes from its v1alpha1 status; the v1beta1-only ones it
# decides come from `hub_fields`; any other one (a pareto list, written by upstream's operator or a
# user) is left as it is.
MANAGED: Final = frozenset({"phase", "observedGeneration", "conditions", "dgdName"})


def deployment_created(status: RequestStatus) -> bool:
    """Whether the request created its graph: an explicit `deployment.created` (a status stored as
    v1alpha1) or a DeploymentReady condition only a step after the create writes."""
    deployment = status.get("deployment")
    if isinstance(deployment, Mapping) and deployment.get("created") is True:
        return True
    conditions = status.get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, Mapping)
        and c.get("type") == ConditionType.DEPLOYMENT_READY
        and c.get("reason") in CREATED_REASONS
        for c in conditions
    )


def tracked_deployment(status: RequestStatus, namespace: str) -> DeploymentStatus:
    """`status.deployment` with what v1beta1 does not hold filled in: the namespace (the request's
    own) and `created`; empty when no graph is named."""
    deployment = status.get("deployment")
    if not isinstance(deployment, Mapping) or not deployment.get("name"):
        return {}
    out = deployment.copy()
    if not out.get("namespace"):
        out["namespace"] = namespace
    if deployment_created(status):
        out["created"] = True
    return out


def beta_status(
    old: StoredRequestStatus, new: RequestStatus, beta_fields: ForeignObject
) -> StoredRequestStatus:
    """The v1beta1 status to write: `old` (the v1beta1 status stored now) with the fields the machine
    writes taken from `new` (its v1alpha1 status, converted as the webhook converts it) and the
    v1beta1-only `beta_fields` of this step (the profiling Job's name, `hub_fields`) on top, a None
    among them removing its field.

    `profilingResults.selectedConfig` follows `new`; the rest of `profilingResults` and every field
    outside `MANAGED` stay as `old` has them."""
    envelope = {"apiVersion": V1ALPHA1, "kind": KIND, "metadata": {}, "status": new}
    wanted = json_object(convert(envelope, V1BETA1).get("status"))
    # Merged field by field, whatever the field: what `old` holds beyond the machine's own fields is
    # kept as found, so the result is a status of the same schema as `old` and `wanted`.
    out: dict[str, object] = {
        key: value for key, value in old.items() if key not in MANAGED and key != "profilingResults"
    }
    out.update({key: value for key, value in wanted.items() if key in MANAGED})
    results: dict[str, object] = {
        k: v for k, v in (old.get("profilingResults") or {}).items() if k != "selectedConfig"
    }
    selected = json_object(wanted.get("profilingResults")).get("selectedConfig")
    if selected is not None:
        results["selectedConfig"] = selected
    if results:
        out["profilingResults"] = results
    for key, value in beta_fields.items():
        if value is None:
            out.pop(key, None)  # cleared by this step
        else:
            out[key] = value
    return stored_request_status_of(out)


def hub_fields(transition: Transition) -> JsonObject:
    """The v1beta1-only fields `transition` decides, for `beta_status`'s `beta_fields`: a value to
    write, or None to clear it (the status writer drops a None, so the patch removes the field);
    a field the transition keeps is absent."""
    out: JsonObject = {}
    if transition.profiling_phase is not KEEP:
        phase = transition.profiling_phase
        out[PROFILING_PHASE] = None if phase is None else phase.value
    if transition.deployment_info is not KEEP:
        info = transition.deployment_info
        out[DEPLOYMENT_INFO] = None if info is None else dict(info.as_status())
    return out
