"""`render` refuses exactly the unknown fields the real API server refuses (kubectl's default
`--validate=strict`), because both read the same generated CRD schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, render_objects
from testsupport.cluster import Kubectl, KubectlError
from testsupport.graphs import two_service_graph

pytestmark = [pytest.mark.cluster]


def with_field(path: list[str | int], value: Any) -> dict[str, Any]:
    doc = two_service_graph("g", "placeholder", worker_env="a")
    node: Any = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(["spec", "servcies"], id="spec"),
        pytest.param(["spec", "services", "Worker", "replica"], id="service"),
        pytest.param(
            ["spec", "services", "Worker", "extraPodSpec", "mainContainer", "imagee"], id="core-type"
        ),
        pytest.param(["spec", "services", "Worker", "envs", 0, "valu"], id="list-item"),
    ],
)
def test_render_and_the_api_server_refuse_the_same_unknown_field(
    crds: None, kubectl: Kubectl, ns: str, path: list[str | int]
) -> None:
    doc = with_field(path, "x")
    doc["metadata"]["namespace"] = ns
    with pytest.raises(KubectlError) as refused:
        kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(doc))
    server = re.search(r'unknown field "([^"]+)"', refused.value.stderr)
    assert server is not None, refused.value.stderr
    with pytest.raises(ValueError, match=re.escape(f'unknown field "{server.group(1)}"')):
        render_objects(json.dumps(doc), RenderOptions(namespace=ns))


def test_a_graph_the_api_server_accepts_renders(crds: None, kubectl: Kubectl, ns: str) -> None:
    doc = two_service_graph("g", ns, worker_env="a")
    kubectl("create", "-n", ns, "--dry-run=server", "-f", "-", stdin=json.dumps(doc))
    assert render_objects(json.dumps(doc), RenderOptions(namespace=ns))
