"""Why a component's pods are not ready, in one short line (pure: pods in, sentence out).

The readiness conditions of a DCD (and through them the DGD's `Ready` message) say *why* a
workload is not available: unschedulable pods with the scheduler's words, image pulls failing,
crash loops with their last exit, or pods simply not ready yet. Identical problems are grouped
with a count, the most severe group comes first, and the result is bounded in length so a
status write stays small. Text that flips on every back-off cycle (ErrImagePull ↔ ImagePullBackOff,
probe times) is normalised away: each change of this text costs a status write.

The DCD controller lists a component's pods when it reports the component not ready (no Pod watch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TypedDict, cast

from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, ObjectMeta

MAX_MESSAGE = 300  # the whole diagnosis
MAX_DETAIL = 200  # one group's detail (a scheduler message can run to kilobytes)
ELLIPSIS = "…"

_IMAGE_PULL = frozenset({"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"})
_CREATE_ERRORS = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})


class Problem(IntEnum):
    """What is wrong with a pod; lower values are more severe and are reported first."""

    UNSCHEDULABLE = 1
    IMAGE_PULL = 2
    CREATE_ERROR = 3
    CRASH_LOOP = 4
    NOT_READY = 5

    @property
    def reason(self) -> str:
        """The condition reason a DCD reports when this is its most severe problem."""
        return _REASONS[self]


_REASONS: Mapping[Problem, str] = {
    Problem.UNSCHEDULABLE: "PodsUnschedulable",
    Problem.IMAGE_PULL: "ImagePullBackOff",
    Problem.CREATE_ERROR: "ContainerCreateError",
    Problem.CRASH_LOOP: "CrashLoopBackOff",
    Problem.NOT_READY: "PodsNotReady",
}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The verdict: the most severe problem (for a condition reason) and the sentence for humans."""

    problem: Problem
    message: str

    @property
    def reason(self) -> str:
        return self.problem.reason


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    problem: Problem
    label: str  # e.g. "unschedulable", "CrashLoopBackOff (last exit: Error, 5 restarts)"
    detail: str  # after the colon; "" for none


def clip(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def scheduler_reason(message: str) -> str:
    """The scheduler's message without its preemption post-mortem ("preemption: 0/4 nodes are
    available: 4 Preemption is not helpful..."), which only repeats that nothing fits."""
    head, sep, _ = message.partition(" preemption:")
    return head.rstrip(" .") + "." if sep and head.strip() else message


class PodCondition(TypedDict, total=False):
    type: str
    status: str
    reason: str
    message: str


class ContainerStateWaiting(TypedDict, total=False):
    reason: str
    message: str


class ContainerStateTerminated(TypedDict, total=False):
    reason: str
    exitCode: int


class ContainerState(TypedDict, total=False):
    waiting: ContainerStateWaiting
    terminated: ContainerStateTerminated


class ContainerStatus(TypedDict, total=False):
    image: str
    restartCount: int
    state: ContainerState
    lastState: ContainerState


class PodStatus(TypedDict, total=False):
    phase: str
    podIP: str
    conditions: list[PodCondition]
    initContainerStatuses: list[ContainerStatus]
    containerStatuses: list[ContainerStatus]


class Pod(TypedDict, total=False):
    """What generation reads of a Pod (core/v1): a diagnosis, a model's endpoints, an LWS group."""

    metadata: ObjectMeta
    status: PodStatus


def pod_view(obj: ForeignObject) -> Pod:
    """A pod as listed, as its view (no copy, no check: the API server validated it)."""
    return cast(Pod, obj)


def _statuses(pod: Pod) -> list[ContainerStatus]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or ()), *(status.get("containerStatuses") or ())]


def _condition(pod: Pod, ctype: str) -> PodCondition:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == ctype:
            return PodCondition(**cond)
    return {}


def _crash_label(cs: ContainerStatus) -> str:
    last = ((cs.get("lastState") or {}).get("terminated")) or {}
    exit_reason = last.get("reason") or (f"exit code {last['exitCode']}" if "exitCode" in last else "")
    restarts = cs.get("restartCount") or 0
    parts = [f"last exit: {exit_reason}"] if exit_reason else []
    parts.append(f"{restarts} restart{'' if restarts == 1 else 's'}")
    return f"CrashLoopBackOff ({', '.join(parts)})"


def finding(pod: Pod) -> Finding | None:
    """The one problem that keeps this pod from being ready (the most severe of its containers),
    None when it is ready or on its way out (finished or being deleted: its replacement counts)."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    if meta.get("deletionTimestamp") or status.get("phase") in ("Succeeded", "Failed"):
        return None
    scheduled = _condition(pod, "PodScheduled")
    if scheduled.get("status") == "False" and scheduled.get("reason") == "Unschedulable":
        detail = clip(scheduler_reason(str(scheduled.get("message") or "")), MAX_DETAIL)
        return Finding(Problem.UNSCHEDULABLE, "unschedulable", detail)
    found: list[Finding] = []
    for cs in _statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = str(waiting.get("reason") or "")
        if reason in _IMAGE_PULL:
            # One label for both phases of the pull back-off, so the text does not flip-flop.
            label = "InvalidImageName" if reason == "InvalidImageName" else "ImagePullBackOff"
            image = cs.get("image")
            detail = (
                f'cannot pull image "{image}"' if image else clip(waiting.get("message") or "", MAX_DETAIL)
            )
            found.append(Finding(Problem.IMAGE_PULL, label, clip(detail, MAX_DETAIL)))
        elif reason in _CREATE_ERRORS:
            found.append(
                Finding(Problem.CREATE_ERROR, reason, clip(waiting.get("message") or "", MAX_DETAIL))
            )
        elif reason == "CrashLoopBackOff":
            found.append(Finding(Problem.CRASH_LOOP, _crash_label(cs), ""))
    if found:
        return min(found)
    if _condition(pod, "Ready").get("status") == "True":
        return None
    return Finding(Problem.NOT_READY, "not ready yet", "")


def diagnose(pods: Iterable[ForeignObject]) -> Diagnosis | None:
    """Why these pods are not all ready: groups of identical problems with counts, most severe
    first, at most `MAX_MESSAGE` characters; None when no pod has a problem."""
    counts: dict[Finding, int] = {}
    for pod in pods:
        f = finding(pod_view(pod))
        if f is not None:
            counts[f] = counts.get(f, 0) + 1
    if not counts:
        return None
    # Severity, then the larger group, then text: deterministic whatever order the cache lists in.
    groups = sorted(counts.items(), key=lambda kv: (kv[0].problem, -kv[1], kv[0].label, kv[0].detail))
    return Diagnosis(groups[0][0].problem, _render(groups))


def _render(groups: Sequence[tuple[Finding, int]]) -> str:
    parts: list[str] = []
    for f, n in groups:
        text = f"{n} {'pod' if n == 1 else 'pods'} {f.label}"
        parts.append(f"{text}: {f.detail}" if f.detail else text)
    message = parts[0]
    for i, part in enumerate(parts[1:], start=1):
        more = f"; {len(parts) - i} more"
        candidate = f"{message}; {part}"
        # Keep room to say that groups were left out, rather than cut one mid-word silently.
        if len(candidate) + (len(more) if i < len(parts) - 1 else 0) > MAX_MESSAGE:
            return clip(message, MAX_MESSAGE - len(more)) + more
        message = candidate
    return clip(message, MAX_MESSAGE)
