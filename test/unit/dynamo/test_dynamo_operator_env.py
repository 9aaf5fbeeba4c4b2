"""Operator-wide runtime settings (--nats-address, --etcd-address, --prometheus-endpoint,
--model-express-url, --discovery-backend) reach every component's env; a user's value wins, wherever
the user sets it (graph spec.envs, service envs, the main container's env)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.context import settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal.dynamo import Capabilities, GenContext, desired_component_objects, desired_dcds
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
FLAGS = {
    "NATS_SERVER": ("--nats-address", "nats://op:4222"),
    "ETCD_ENDPOINTS": ("--etcd-address", "etcd-op:2379"),
    "PROMETHEUS_ENDPOINT": ("--prometheus-endpoint", "http://prom-op:9090"),
    "MODEL_EXPRESS_URL": ("--model-express-url", "http://mx-op:8001"),
    "DYN_DISCOVERY_BACKEND": ("--discovery-backend", "etcd"),
}
COMPONENT_TYPES = ["frontend", "worker", "prefill", "decode", "planner", "main"]


def context(*argv: str) -> GenContext:
    options = options_from_args(build_parser().parse_args(list(argv)), environ={})
    return settings_from(options, Capabilities(lws=True)).gen_context(NS)


ALL = context(*(f"{flag}={value}" for flag, value in FLAGS.values()))


def main_env(graph: Obj, ctx: GenContext = ALL) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dcd in desired_dcds(graph, ctx):
        for obj in desired_component_objects(dcd, ctx):
            if obj["kind"] == "Deployment":
                [main] = [c for c in obj["spec"]["template"]["spec"]["containers"] if c["name"] == "main"]
                out = {e["name"]: e.get("value") for e in main["env"]}
    return out


@pytest.mark.parametrize("ctype", COMPONENT_TYPES)
@pytest.mark.parametrize("name", sorted(FLAGS))
def test_every_component_gets_the_operator_value(name: str, ctype: str) -> None:
    assert main_env(dgd({"S": service(ctype)}))[name] == FLAGS[name][1]


@pytest.mark.parametrize("name", sorted(FLAGS))
@pytest.mark.parametrize("where", ["graph-envs", "service-envs", "main-container-env"])
def test_a_user_value_wins(name: str, where: str) -> None:
    mine = {"name": name, "value": "mine"}
    if where == "graph-envs":
        graph = dgd({"S": service("worker")}, envs=[mine])
    elif where == "service-envs":
        graph = dgd({"S": service("worker", envs=[mine])})
    else:
        graph = dgd({"S": service("worker", extraPodSpec={"mainContainer": {"env": [mine]}})})
    assert main_env(graph)[name] == "mine"


@pytest.mark.parametrize("name", sorted(set(FLAGS) - {"DYN_DISCOVERY_BACKEND"}))
def test_unset_flags_inject_nothing(name: str) -> None:
    assert name not in main_env(dgd({"S": service("worker")}), context())


def test_discovery_backend_defaults_to_kubernetes() -> None:
    assert main_env(dgd({"S": service("worker")}), context())["DYN_DISCOVERY_BACKEND"] == "kubernetes"


def test_graph_annotation_wins_over_the_discovery_flag() -> None:
    graph = dgd({"S": service("worker")})
    graph["metadata"]["annotations"] = {"nvidia.com/dynamo-discovery-backend": "kubernetes"}
    assert main_env(graph)["DYN_DISCOVERY_BACKEND"] == "kubernetes"
