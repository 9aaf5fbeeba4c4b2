"""frontendSidecar, gpuMemoryService and failover against upstream's goldens: for upstream's own
example graphs, what this operator generates is what upstream's operator made, field by field.

The goldens (`../shared/upstream-examples/golden*/`) are the facts; `compat.generate` runs this
operator's admission defaults and generation path the way the controllers do.
"""

from __future__ import annotations

from typing import Any

import pytest
from compat.generate import SHAPES, Generated, generate
from compat.goldens import SET_2A6DA14C, Example, GoldensMissing, discover, load_golden
from dynamo_operator.internal.dynamo.graph.generate import dcd_names

Obj = dict[str, Any]
SHAPE = {s.name: s for s in SHAPES}
SIDECAR = "sidecar-frontend"
# Fields the API server fills in on a stored Deployment (never part of what an operator sends).
SERVER_DEFAULTS = ("terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "resources")


def example(name: str) -> Example:
    try:
        [found] = [e for e in discover(tuple(SHAPE)) if e.name == name]
    except GoldensMissing as err:
        pytest.fail(str(err), pytrace=False)
    return found


def both(name: str, shape: str) -> tuple[dict[str, Obj], Generated]:
    ex = example(name)
    return load_golden(ex, shape), generate(ex, SHAPE[shape])


def containers(deployment: Obj) -> dict[str, Obj]:
    return {c["name"]: c for c in deployment["spec"]["template"]["spec"]["containers"]}


def env_map(container: Obj) -> dict[str, str]:
    """Env by name: literal values, or the field a fieldRef reads."""
    out: dict[str, str] = {}
    for var in container.get("env") or []:
        ref = ((var.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        out[var["name"]] = f"fieldRef:{ref}" if ref else str(var.get("value", ""))
    return out


def _probe(probe: Obj) -> Obj:
    """A probe with what the API server fills in on write (successThreshold, HTTP scheme)."""
    out = {"successThreshold": 1, **probe}
    if "httpGet" in out:
        out["httpGet"] = {"scheme": "HTTP", **out["httpGet"]}
    return out


def comparable(container: Obj) -> Obj:
    out = {k: v for k, v in container.items() if k not in (*SERVER_DEFAULTS, "env")}
    out["env"] = env_map(container)
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        if name in out:
            out[name] = _probe(out[name])
    return out


SIDECAR_DEPLOYMENTS = [
    pytest.param("backends_vllm_gaie_agg", "VllmDecodeWorker", id="gaie-agg-decode"),
    pytest.param("backends_vllm_gaie_disagg", "VllmDecodeWorker", id="gaie-disagg-decode"),
    pytest.param("backends_vllm_gaie_disagg", "VllmPrefillWorker", id="gaie-disagg-prefill"),
]


def _deployment_of(objects: dict[str, Obj], service: str) -> Obj:
    [dep] = [
        o
        for k, o in objects.items()
        if k.startswith("Deployment/")
        and o["spec"]["template"]["metadata"]["labels"].get("nvidia.com/dynamo-component") == service
    ]
    return dep


@pytest.mark.parametrize(("name", "service"), SIDECAR_DEPLOYMENTS)
def test_frontend_sidecar_container_is_upstreams_field_by_field(name: str, service: str) -> None:
    """The sidecar's name, image, command, args, ports, envFrom and every env var are upstream's."""
    golden, ours = both(name, "golden-lws-gaie")
    theirs = containers(_deployment_of(golden, service))[SIDECAR]
    mine = containers(_deployment_of(ours.objects, service))[SIDECAR]
    assert comparable(mine) == comparable(theirs)


@pytest.mark.parametrize(("name", "service"), SIDECAR_DEPLOYMENTS)
def test_frontend_sidecar_follows_the_main_container(name: str, service: str) -> None:
    """Container order is upstream's: main first, the sidecar after it."""
    golden, ours = both(name, "golden-lws-gaie")
    assert list(containers(_deployment_of(ours.objects, service))) == list(
        containers(_deployment_of(golden, service))
    )


GMS_EXAMPLES = ["backends_vllm_agg_gms", "backends_vllm_agg_failover"]


def _worker_dcd(objects: dict[str, Obj]) -> tuple[str, Obj]:
    [(key, dcd)] = [
        (k, o)
        for k, o in objects.items()
        if k.startswith("DynamoComponentDeployment/") and "-vllmworker-" in k
    ]
    return key, dcd


@pytest.mark.parametrize("name", GMS_EXAMPLES)
@pytest.mark.parametrize("field", ["gpuMemoryService", "failover"])
def test_stored_spec_carries_upstreams_admission_defaults(name: str, field: str) -> None:
    """`gpuMemoryService: {enabled: true}` is stored with mode intraPod and deviceClassName
    gpu.nvidia.com, `failover: {enabled: true}` with mode intraPod and numShadows 1, as upstream's."""
    golden, ours = both(name, "golden")
    graph = next(v for k, v in golden.items() if k.startswith("DynamoGraphDeployment/"))
    mine = next(v for k, v in ours.objects.items() if k.startswith("DynamoGraphDeployment/"))
    assert mine["spec"]["services"]["VllmWorker"].get(field) == graph["spec"]["services"]["VllmWorker"].get(
        field
    )


@pytest.mark.parametrize("name", GMS_EXAMPLES)
def test_worker_hash_and_names_are_upstreams(name: str) -> None:
    """With the same stored spec the worker hash, and so the worker DCD's name, is upstream's
    (df888f68 made the DCD; this operator, as 2a6da14c, makes none without DRA, so the name is
    computed from the stored graph)."""
    golden, ours = both(name, "golden")
    mine = next(v for k, v in ours.objects.items() if k.startswith("DynamoGraphDeployment/"))
    assert dcd_names(mine)["VllmWorker"] == _worker_dcd(golden)[0].split("/", 1)[1]


def _example_2a6da14c(name: str) -> Example:
    try:
        [found] = [e for e in discover(tuple(SHAPE), SET_2A6DA14C) if e.name == name]
    except GoldensMissing as err:
        pytest.fail(str(err), pytrace=False)
    return found


@pytest.mark.parametrize("shape", list(SHAPE))
@pytest.mark.parametrize("name", GMS_EXAMPLES)
def test_without_dra_the_graph_fails_and_gets_no_workload(name: str, shape: str) -> None:
    """No DRA API: like upstream 2a6da14c, on either pathway the whole graph fails and no DCD,
    Deployment, Service or PodCliqueSet is made (df888f68 ran the frontend and let the worker's DCD
    wait)."""
    ex = _example_2a6da14c(name)
    golden, ours = load_golden(ex, shape), generate(ex, SHAPE[shape])
    workloads = ("DynamoComponentDeployment/", "Deployment/", "Service/", "PodCliqueSet/")
    assert not any(k.startswith(workloads) for k in golden)
    assert not any(k.startswith(workloads) for k in ours.objects)
    graph = next(v for k, v in ours.objects.items() if k.startswith("DynamoGraphDeployment/"))
    assert graph["status"] == {"state": "failed"}
    [note] = [n for n in ours.notes if "DynamoGraphDeployment/" in n]
    assert "gpuMemoryService needs Dynamic Resource Allocation" in note
