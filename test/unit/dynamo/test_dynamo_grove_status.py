"""Readiness of a Grove-pathway graph from the PodCliques and scaling groups Grove reports on
(internal/dynamo/grove/readiness.py), with objects shaped as Grove writes them (reference §3.5)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.grove.readiness import (
    ServiceObject,
    grove_graph_status,
    grove_readiness,
    member_clique_names,
    restart_rolled,
    restart_values,
)

PCLQ = consts.KIND_POD_CLIQUE
PCSG = consts.KIND_POD_CLIQUE_SCALING_GROUP


def grove_object(
    *,
    desired: int = 2,
    generation: int = 1,
    observed: int | None = 1,
    ready: int = 2,
    available: int = 2,
    updated: int = 2,
    replicas: int = 2,
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
    }
    if observed is not None:
        status["observedGeneration"] = observed
    return {
        "metadata": {"name": "g-0-x", "generation": generation},
        "spec": {"replicas": desired},
        "status": status,
    }


@pytest.mark.parametrize("kind", [PCLQ, PCSG])
@pytest.mark.parametrize(
    ("obj", "ready", "why"),
    [
        pytest.param(None, False, "resource not found", id="missing"),
        pytest.param(grove_object(observed=None), False, "observedGeneration is nil", id="never-observed"),
        pytest.param(
            grove_object(generation=3, observed=2),
            False,
            "spec not yet processed: generation=3, observedGeneration=2",
            id="spec-not-processed",
        ),
        pytest.param(
            grove_object(desired=0, ready=0, available=0, updated=0, replicas=1), True, "", id="zero"
        ),
        pytest.param(grove_object(), True, "", id="all-ready"),
        pytest.param(grove_object(updated=1), False, "desired=2, updated=1", id="not-updated"),
        pytest.param(
            grove_object(replicas=3),
            False,
            "performing rolling update: desired=2, replicas=3",
            id="surplus-from-rollout",
        ),
    ],
)
def test_grove_readiness_shared_rules(kind: str, obj: dict[str, Any] | None, ready: bool, why: str) -> None:
    verdict = grove_readiness(kind, "g-0-x", obj)
    assert (verdict.ready, verdict.why) == (ready, why)
    assert verdict.service["componentKind"] == kind
    assert verdict.service["componentNames"] == ["g-0-x"]


def test_pod_clique_counts_ready_pods() -> None:
    verdict = grove_readiness(PCLQ, "g-0-x", grove_object(ready=1, available=2))
    assert (verdict.ready, verdict.why) == (False, "scheduled but ready=1/2")
    assert verdict.service["readyReplicas"] == 1
    assert "availableReplicas" not in verdict.service


def test_scaling_group_counts_available_replicas() -> None:
    verdict = grove_readiness(PCSG, "g-0-x", grove_object(ready=2, available=1))
    assert (verdict.ready, verdict.why) == (False, "scheduled but available=1/2")
    assert verdict.service["availableReplicas"] == 1
    assert "readyReplicas" not in verdict.service


TARGETS = [
    ServiceObject("Frontend", PCLQ, "g-0-frontend"),
    ServiceObject("Decode", PCSG, "g-0-decode"),
]


def test_graph_is_ready_when_every_service_is() -> None:
    status = grove_graph_status(TARGETS, {"g-0-frontend": grove_object(), "g-0-decode": grove_object()})
    assert status.ready
    assert status.message == "All resources are ready"
    assert set(status.services) == {"Frontend", "Decode"}


def test_graph_message_names_each_waiting_object_sorted_by_name() -> None:
    status = grove_graph_status(TARGETS, {"g-0-frontend": grove_object(ready=0)})
    assert not status.ready
    assert status.message == (
        "pcsg/g-0-decode: resource not found; podclique/g-0-frontend: scheduled but ready=0/2"
    )


def test_restart_waits_for_the_set_to_observe_its_generation() -> None:
    live = {"g-0-frontend": grove_object(), "g-0-decode": grove_object()}
    behind = {"metadata": {"generation": 4}, "status": {"observedGeneration": 3}}
    caught_up = {"metadata": {"generation": 4}, "status": {"observedGeneration": 4}}
    assert restart_rolled(behind, TARGETS, live) == {"Frontend": False, "Decode": False}
    assert restart_rolled(caught_up, TARGETS, live) == {"Frontend": True, "Decode": True}
    assert restart_rolled(None, TARGETS, live) == {"Frontend": False, "Decode": False}


def test_restart_values_are_read_from_the_live_cliques() -> None:
    pcs = {
        "spec": {
            "template": {
                "cliques": [
                    {
                        "labels": {consts.LABEL_COMPONENT: "Frontend"},
                        "annotations": {consts.ANNOTATION_RESTART_AT: "r1"},
                    },
                    {"labels": {consts.LABEL_COMPONENT: "Decode"}},
                ]
            }
        }
    }
    assert restart_values(pcs) == {"Frontend": "r1", "Decode": None}


# --- a short scaling group is explained by its member cliques -------------------------------------------


def group(
    *, desired: int = 1, available: int = 0, cliques: tuple[str, ...] = ("w-ldr", "w-wkr")
) -> dict[str, Any]:
    obj = grove_object(
        desired=desired, available=available, ready=available, replicas=desired, updated=desired
    )
    obj["metadata"]["name"] = "g-0-w"
    obj["spec"]["cliqueNames"] = list(cliques)
    return obj


def clique(*, want: int, ready: int) -> dict[str, Any]:
    return {"spec": {"replicas": want}, "status": {"readyReplicas": ready}}


def test_member_cliques_are_named_per_replica_of_the_group() -> None:
    assert member_clique_names(group(desired=2)) == [
        "g-0-w-0-w-ldr",
        "g-0-w-0-w-wkr",
        "g-0-w-1-w-ldr",
        "g-0-w-1-w-wkr",
    ]
    assert member_clique_names(group(desired=0)) == []


@pytest.mark.parametrize(
    ("members", "detail"),
    [
        pytest.param(
            {"g-0-w-0-w-ldr": clique(want=1, ready=0), "g-0-w-0-w-wkr": clique(want=3, ready=3)},
            " (podclique/g-0-w-0-w-ldr: ready=0/1)",
            id="leader-not-ready",
        ),
        pytest.param(
            {"g-0-w-0-w-ldr": clique(want=1, ready=1), "g-0-w-0-w-wkr": clique(want=3, ready=1)},
            " (podclique/g-0-w-0-w-wkr: ready=1/3)",
            id="workers-short",
        ),
        pytest.param(
            {"g-0-w-0-w-ldr": None, "g-0-w-0-w-wkr": clique(want=3, ready=0)},
            " (podclique/g-0-w-0-w-ldr: not found, podclique/g-0-w-0-w-wkr: ready=0/3)",
            id="missing-and-short-sorted",
        ),
        pytest.param(
            {"g-0-w-0-w-ldr": clique(want=1, ready=1), "g-0-w-0-w-wkr": clique(want=3, ready=3)},
            "",
            id="members-ready-group-not-yet-counted",
        ),
    ],
)
def test_a_short_scaling_group_names_its_short_member_cliques(
    members: dict[str, dict[str, Any] | None], detail: str
) -> None:
    status = grove_graph_status([ServiceObject("W", PCSG, "g-0-w")], {"g-0-w": group()}, members)
    assert not status.ready
    assert status.message == f"pcsg/g-0-w: scheduled but available=0/1{detail}"


def test_member_cliques_missing_from_the_read_are_reported_not_found() -> None:
    status = grove_graph_status([ServiceObject("W", PCSG, "g-0-w")], {"g-0-w": group(cliques=("w-ldr",))}, {})
    assert status.message == "pcsg/g-0-w: scheduled but available=0/1 (podclique/g-0-w-0-w-ldr: not found)"


def test_a_podclique_message_carries_no_member_detail() -> None:
    status = grove_graph_status(
        [ServiceObject("F", PCLQ, "g-0-x")], {"g-0-x": grove_object(ready=0)}, {"g-0-x-0-a": None}
    )
    assert status.message == "podclique/g-0-x: scheduled but ready=0/2"
