"""The comparison instrument itself: paths, pairing, normalisation and the two lists' rules."""

from __future__ import annotations

from typing import Any

import pytest
from compat.diff import Difference, compare, compare_object, pair_objects
from compat.expectations import Judge, ListError, Verdict, parse_entries
from compat.paths import flatten, glob_regex

SHAPES = ("golden", "golden-lws-gaie", "golden-grove")
Obj = dict[str, Any]


def deployment(env: list[Obj], **spec: Any) -> Obj:
    """A Deployment as a read-back shows it (server defaults present)."""
    container = {
        "name": "main",
        "image": "img:1",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "env": env,
    }
    pod = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "g-frontend"},
        "spec": {
            "replicas": 1,
            "progressDeadlineSeconds": 600,
            "revisionHistoryLimit": 10,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {"metadata": {"creationTimestamp": None}, "spec": pod},
            **spec,
        },
    }


def bare(obj: Obj) -> Obj:
    """`obj` as this operator sends it: no server-filled field."""
    container = obj["spec"]["template"]["spec"]["containers"][0]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": obj["metadata"]["name"]},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "main", "image": "img:1", "env": container["env"]}]}
            }
        },
    }


# -- paths ----------------------------------------------------------------------------------------


def test_paths_key_named_list_items_and_bracket_non_identifier_keys() -> None:
    obj = {
        "metadata": {"labels": {"nvidia.com/x": "1"}},
        "env": [{"name": "A", "value": "1"}],
        "volumeMounts": [{"name": "v", "mountPath": "/m"}],
        "args": ["--a", "b"],
    }
    assert flatten(obj) == {
        "metadata.labels[nvidia.com/x]": "1",
        "env[A].name": "A",
        "env[A].value": "1",
        "volumeMounts[/m].mountPath": "/m",
        "volumeMounts[/m].name": "v",
        "args": ["--a", "b"],
    }


def test_paths_index_a_list_whose_items_share_a_name() -> None:
    assert set(flatten({"env": [{"name": "A"}, {"name": "A"}]})) == {"env[0].name", "env[1].name"}


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        pytest.param("D/*:spec.x", "D/a-b:spec.x", True, id="star-within-name"),
        pytest.param("D/*:spec.*", "D/a:spec.x.y", False, id="star-stops-at-dot"),
        pytest.param("D/*:spec.**", "D/a:spec.x.y", True, id="double-star-crosses"),
        pytest.param("D/*:l[*]", "D/a:l[nvidia.com/x]", True, id="star-in-brackets-takes-dots"),
        pytest.param("D/*", "D/a:spec", False, id="object-pattern-is-not-a-field"),
    ],
)
def test_path_patterns(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


# -- comparing --------------------------------------------------------------------------------------


def test_a_missing_env_var_is_one_difference_at_its_own_path() -> None:
    golden = deployment([{"name": "NATS_SERVER", "value": "nats://x"}])
    _, diffs = compare_object("Deployment/g-frontend", golden, bare(deployment([])))
    assert diffs == [
        Difference(
            "Deployment/g-frontend:spec.template.spec.containers[main].env[NATS_SERVER]",
            "only-golden",
            golden={"name": "NATS_SERVER", "value": "nats://x"},
        )
    ]


def test_server_defaults_and_empty_values_are_no_difference() -> None:
    """The golden was read back (defaults filled, empties dropped); ours is what we send."""
    golden = deployment([{"name": "A", "value": "1"}])
    ours = bare(golden)
    ours["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    compared, diffs = compare_object("Deployment/g-frontend", golden, ours)
    assert diffs == []
    assert compared > 10


def test_a_changed_value_is_reported_with_both_sides() -> None:
    golden = deployment([{"name": "A", "value": "1"}])
    _, diffs = compare_object(
        "Deployment/g-frontend", golden, bare(deployment([{"name": "A", "value": "2"}]))
    )
    assert [(d.path, d.change, d.golden, d.ours) for d in diffs] == [
        ("Deployment/g-frontend:spec.template.spec.containers[main].env[A].value", "changed", "1", "2")
    ]


def test_quantities_compare_by_value() -> None:
    golden = deployment([])
    golden["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    ours = bare(golden)
    ours["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1000m"}}
    assert compare_object("Deployment/g", golden, ours)[1] == []


def test_each_operators_hash_stamp_is_ignored() -> None:
    golden = deployment([])
    golden["metadata"]["annotations"] = {"nvidia.com/last-applied-hash": "aaa"}
    ours = bare(golden)
    ours["metadata"]["annotations"] = {
        "nvidia.com/last-applied-hash": "bbb",
        "nvidia.com/pod-template-hash": "c",
    }
    assert compare_object("Deployment/g", golden, ours)[1] == []


def test_a_graph_status_compares_only_whether_it_failed() -> None:
    golden = {"kind": "DynamoGraphDeployment", "metadata": {"name": "g"}, "status": {"state": "successful"}}
    ours = {"kind": "DynamoGraphDeployment", "metadata": {"name": "g"}}
    assert compare_object("DynamoGraphDeployment/g", golden, ours)[1] == []
    ours["status"] = {"state": "failed"}
    [diff] = compare_object("DynamoGraphDeployment/g", golden, ours)[1]
    assert (diff.path, diff.golden, diff.ours) == ("DynamoGraphDeployment/g:status.failed", False, True)


def test_a_worker_named_with_a_hash_pairs_with_ours_and_reports_the_name() -> None:
    golden = {"Deployment/g-w-0123abcd": {"kind": "Deployment", "metadata": {"name": "g-w-0123abcd"}}}
    ours = {"Deployment/g-w": {"kind": "Deployment", "metadata": {"name": "g-w"}}}
    result = compare(golden, ours)
    assert result.objects == 1
    assert [(d.path, d.golden, d.ours) for d in result.differences] == [
        ("Deployment/g-w-0123abcd:metadata.name", "g-w-0123abcd", "g-w")
    ]


def test_ambiguous_hash_pairs_stay_apart() -> None:
    golden = {f"S/g-w-{h}": {} for h in ("0123abcd", "4567abcd")}
    assert pair_objects(golden, {"S/g-w": {}}) == [
        ("S/g-w-0123abcd", None),
        ("S/g-w-4567abcd", None),
        (None, "S/g-w"),
    ]


# -- the lists --------------------------------------------------------------------------------------


def judge(allowed: list[Obj], gaps: list[Obj] | None = None) -> Judge:
    return Judge(
        allowed=parse_entries(allowed, source="allowed", note_keys=("reason",), shapes=SHAPES),
        known_gaps=parse_entries(gaps or [], source="gaps", note_keys=("issue", "cause"), shapes=SHAPES),
    )


DIFF = Difference("Deployment/g-w:spec.x", "changed", golden="3", ours="60")


@pytest.mark.parametrize(
    ("entry", "verdict"),
    [
        pytest.param({"path": "Deployment/*:spec.x"}, Verdict.INTENDED, id="path"),
        pytest.param({"path": "Deployment/*:spec.x", "change": "only-ours"}, Verdict.UNEXPECTED, id="change"),
        pytest.param(
            {"path": "Deployment/*:spec.x", "shapes": "golden-grove"}, Verdict.UNEXPECTED, id="shape"
        ),
        pytest.param(
            {"path": "Deployment/*:spec.x", "examples": ["*", "!ex_*"]}, Verdict.UNEXPECTED, id="excluded"
        ),
        pytest.param(
            {"path": "Deployment/*:spec.x", "golden": "3", "ours": "60"}, Verdict.INTENDED, id="values"
        ),
        pytest.param({"path": "Deployment/*:spec.x", "ours": "6"}, Verdict.UNEXPECTED, id="value-fullmatch"),
    ],
)
def test_an_entry_narrows_by_every_field_it_names(entry: Obj, verdict: Verdict) -> None:
    assert judge([{**entry, "reason": "r"}]).verdict("ex_1", "golden", DIFF)[0] is verdict


def test_the_allow_list_wins_over_the_known_gaps() -> None:
    j = judge([{"path": "**", "reason": "r"}], [{"path": "**", "issue": 1, "cause": "c"}])
    assert j.verdict("ex", "golden", DIFF)[0] is Verdict.INTENDED
    assert j.stale() == []  # both matched, neither is stale


def test_an_entry_path_that_matches_nothing_is_stale() -> None:
    j = judge([{"path": ["Deployment/*:spec.x", "Service/*"], "reason": "r"}])
    j.verdict("ex", "golden", DIFF)
    assert j.stale() == ["allowed entry 1 (Deployment/*:spec.x): path 'Service/*' matches nothing"]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param({"path": "x"}, "missing ['reason']", id="no-reason"),
        pytest.param({"path": "x", "reason": "r", "colour": 1}, "unknown key", id="unknown-key"),
        pytest.param({"path": "x", "reason": "r", "shapes": "golden-lws"}, "unknown shape", id="bad-shape"),
        pytest.param({"path": "x", "reason": "r", "change": "gone"}, "change must be", id="bad-change"),
    ],
)
def test_a_malformed_entry_is_refused(entry: Obj, message: str) -> None:
    with pytest.raises(ListError, match=message.replace("[", r"\[").replace("]", r"\]")):
        judge([entry])
