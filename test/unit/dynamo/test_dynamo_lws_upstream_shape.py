"""The LeaderWorkerSet of a multinode DCD against upstream 2a6da14c's own golden for it
(../shared/upstream-examples-2a6da14c/testdata/dcd/lws: a v1beta1 DCD of two replicas and its
output, written by upstream's controller test with LWS's defaulting webhook on).

The golden's values are LWS's defaults where upstream leaves a field to that webhook; this operator
writes them itself (test_dynamo_lws_without_its_webhook.py), so the two agree field for field, bar
`rollingUpdateConfiguration.partition`, which only LWS's webhook adds (0, LWS's meaning of unset).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.conversion import convert
from dynamo_operator.internal.dynamo import Capabilities, GenContext, desired_component_objects

Obj = dict[str, Any]
GOLDEN = Path(__file__).resolve().parents[3].parent / "shared" / "upstream-examples-2a6da14c" / "testdata"
CASE = GOLDEN / "dcd" / "lws"
NS = "default"
PATTERN = "$pattern:"  # the golden's way of saying "a value matching this regex"


def _golden_lws() -> Obj:
    [lws] = [
        d
        for d in yaml.safe_load_all((CASE / "output.yaml").read_text())
        if d and d["kind"] == "LeaderWorkerSet"
    ]
    return dict(lws)


def _ours() -> list[Obj]:
    dcd = yaml.safe_load((CASE / "input.yaml").read_text())
    dcd["metadata"].update(namespace=NS, uid="dcd-uid", generation=1)
    ctx = GenContext(namespace=NS, capabilities=Capabilities(lws=True, volcano=True))
    return desired_component_objects(convert(dcd, "nvidia.com/v1alpha1"), ctx)


def _our_lws() -> Obj:
    [lws] = [o for o in _ours() if o["kind"] == "LeaderWorkerSet"]
    return lws


@pytest.fixture(autouse=True)
def _golden_present() -> None:
    if not CASE.is_dir():
        pytest.skip(f"upstream's testdata is not here ({CASE})")


def test_one_leaderworkerset_named_like_upstreams_and_no_pod_group() -> None:
    """Two replicas: upstream's one set `<dcd>-0`, and no PodGroup even with Volcano served."""
    assert [
        (o["kind"], o["metadata"]["name"]) for o in _ours() if o["kind"] in ("LeaderWorkerSet", "PodGroup")
    ] == [("LeaderWorkerSet", _golden_lws()["metadata"]["name"])]


def test_the_set_spec_is_upstreams_bar_the_partition_lws_defaults() -> None:
    """replicas, startup and rollout policy, network config, group size and restart policy."""
    golden, ours = _golden_lws()["spec"], _our_lws()["spec"]
    golden["rolloutStrategy"]["rollingUpdateConfiguration"].pop("partition")

    def skeleton(spec: Obj) -> Obj:
        lwt = spec["leaderWorkerTemplate"]
        return {
            **{k: v for k, v in spec.items() if k != "leaderWorkerTemplate"},
            "leaderWorkerTemplate": {k: v for k, v in lwt.items() if not k.endswith("Template")},
        }

    assert skeleton(ours) == skeleton(golden)
    assert ours["replicas"] == 2


@pytest.mark.parametrize("role", ["leaderTemplate", "workerTemplate"])
def test_the_pod_template_labels_are_upstreams(role: str) -> None:
    """The same label keys on each role's pods (role, component, discovery...), no `instance-id`, and
    the same values where the golden gives one."""
    golden = _golden_lws()["spec"]["leaderWorkerTemplate"][role]["metadata"]["labels"]
    ours = _our_lws()["spec"]["leaderWorkerTemplate"][role]["metadata"]["labels"]
    assert sorted(ours) == sorted(golden)
    fixed = {k: v for k, v in golden.items() if not str(v).startswith(PATTERN)}
    assert {k: ours[k] for k in fixed} == fixed
