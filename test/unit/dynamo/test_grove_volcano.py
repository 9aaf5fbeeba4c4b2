"""Volcano as Grove's scheduler (`--volcano-scheduler`, internal/dynamo/grove/podcliqueset.py), as upstream
2a6da14c does it: every clique's pods get schedulerName volcano unless the user chose a scheduler, the
graph's `nvidia.com/volcano-queue` becomes the set's `scheduling.grove.io/volcano-queue`, and Volcano
and KAI-Scheduler never both schedule Grove's pods."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.context import settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set

QUEUE = "scheduling.grove.io/volcano-queue"


def _ctx(*flags: str, **served: bool) -> GenContext:
    options = options_from_args(build_parser().parse_args(list(flags)), environ={})
    return settings_from(options, Capabilities(grove=True, **served)).gen_context("ns")


def _graph(queue: str | None = None, scheduler: str | None = None) -> dict[str, Any]:
    worker: dict[str, Any] = {
        "componentType": "worker",
        "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.vllm"]}},
    }
    if scheduler:
        worker["extraPodSpec"]["schedulerName"] = scheduler
    meta: dict[str, Any] = {"name": "g", "namespace": "ns", "uid": "u"}
    if queue is not None:
        meta["annotations"] = {"nvidia.com/volcano-queue": queue}
    frontend = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": "img"}}}
    return {"metadata": meta, "spec": {"services": {"Frontend": frontend, "Worker": worker}}}


def _schedulers(pcs: dict[str, Any]) -> dict[str, str | None]:
    return {k["name"]: k["spec"]["podSpec"].get("schedulerName") for k in pcs["spec"]["template"]["cliques"]}


def test_with_the_flag_and_volcano_served_every_clique_is_scheduled_by_volcano() -> None:
    pcs = desired_pod_clique_set(_graph(queue=" team-a "), _ctx("--volcano-scheduler", volcano=True))
    assert _schedulers(pcs) == {"frontend": "volcano", "worker": "volcano"}
    assert pcs["metadata"]["annotations"][QUEUE] == "team-a"


def test_a_scheduler_the_user_chose_is_kept() -> None:
    pcs = desired_pod_clique_set(_graph(scheduler="my-sched"), _ctx("--volcano-scheduler", volcano=True))
    assert _schedulers(pcs) == {"frontend": "volcano", "worker": "my-sched"}


def test_a_graph_without_a_queue_leaves_the_set_unannotated() -> None:
    pcs = desired_pod_clique_set(_graph(), _ctx("--volcano-scheduler", volcano=True))
    assert QUEUE not in (pcs["metadata"].get("annotations") or {})


@pytest.mark.parametrize(
    ("flags", "served"),
    [
        pytest.param((), {"volcano": True}, id="flag-off"),
        pytest.param(("--volcano-scheduler",), {}, id="volcano-not-served"),
    ],
)
def test_otherwise_grove_picks_the_scheduler(flags: tuple[str, ...], served: dict[str, bool]) -> None:
    pcs = desired_pod_clique_set(_graph(queue="team-a"), _ctx(*flags, **served))
    assert _schedulers(pcs) == {"frontend": None, "worker": None}
    assert QUEUE not in (pcs["metadata"].get("annotations") or {})


def test_volcano_and_kai_together_refuse_the_graph() -> None:
    ctx = _ctx("--volcano-scheduler", volcano=True, kai_scheduler=True)
    with pytest.raises(GenerationError, match="cannot both schedule Grove's pods"):
        desired_pod_clique_set(_graph(), ctx)
