"""Offline rendering: a DGD YAML in, every object the operator would create out (multi-document YAML).

Used by `dynamo-operator render -f dgd.yaml` so users can review what a change does before applying.
"""

from __future__ import annotations

from typing import Any

import pydantic
import yaml
from dynamo_operator.api.v1alpha1 import API_VERSION, DYNAMO_GRAPH_DEPLOYMENT_KIND, DynamoGraphDeployment
from dynamo_operator.internal.dynamo.component import desired_component_objects
from dynamo_operator.internal.dynamo.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.errors import GenerationError
from dynamo_operator.internal.dynamo.graph import desired_graph_objects, desired_shared_objects
from dynamo_operator.internal.dynamo.graphmeta import origin_version, with_origin_version
from dynamo_operator.internal.dynamo.mpisecret import PLACEHOLDER_KEY_PAIR, desired_mpi_ssh_secrets

Obj = dict[str, Any]


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_graph(yaml_text: str) -> Obj:
    """Parse and validate one DGD document; errors are ValueErrors that name the field."""
    try:
        docs = [d for d in yaml.safe_load_all(yaml_text) if d is not None]
    except yaml.YAMLError as err:
        raise ValueError(f"not valid YAML: {err}") from err
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise ValueError(f"expected exactly one {DYNAMO_GRAPH_DEPLOYMENT_KIND} document, found {len(docs)}")
    raw = docs[0]
    if raw.get("kind") != DYNAMO_GRAPH_DEPLOYMENT_KIND:
        raise ValueError(f"kind: expected {DYNAMO_GRAPH_DEPLOYMENT_KIND}, got {raw.get('kind')!r}")
    if raw.get("apiVersion") != API_VERSION:
        raise ValueError(f"apiVersion: expected {API_VERSION}, got {raw.get('apiVersion')!r}")
    try:
        model = DynamoGraphDeployment.model_validate(raw)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        raise ValueError(f"{_field_path(tuple(first['loc']))}: {first['msg']}") from err
    obj = model.to_dict()
    # Keep metadata exactly as written (the model keeps it as a dict already).
    obj["metadata"] = dict(raw.get("metadata") or {})
    obj.pop("status", None)
    return obj


def render_objects(
    yaml_text: str, *, namespace: str, with_lws: bool, operator_version: str = ""
) -> list[Obj]:
    """Every object the operator would create for the DGD in `yaml_text`, in a deterministic order:
    the namespace's shared ServiceAccounts and MPI key Secret (if any), graph-level objects (PVCs,
    RBAC, side objects, model Services, DCDs, adapters), then each DCD's children. A new graph is
    seen as the operator sees it at its first look: stamped with `operator_version` as its origin
    version (graphmeta.py)."""
    parsed = parse_graph(yaml_text)
    ns = parsed["metadata"].get("namespace") or namespace
    parsed["metadata"]["namespace"] = ns
    dgd = with_origin_version(parsed, origin_version(parsed, [], operator_version))
    # DRA assumed served: a gpuMemoryService graph renders its ResourceClaimTemplate and pod claims.
    ctx = GenContext(namespace=ns, capabilities=Capabilities(lws=with_lws, istio=True, dra=True))
    try:
        # The MPI key Secret with a placeholder key: the operator draws the real one when it creates it.
        secrets = desired_mpi_ssh_secrets(dgd, ns, ctx.mpi_ssh_secret_name, lambda: PLACEHOLDER_KEY_PAIR)
        graph = desired_shared_objects(dgd, ctx) + secrets + desired_graph_objects(dgd, ctx)
        children: list[Obj] = []
        for obj in graph:
            if obj["kind"] == "DynamoComponentDeployment":
                children += desired_component_objects(obj, ctx)
    except GenerationError as err:
        raise ValueError(str(err)) from err
    return graph + children


def render_documents(yaml_text: str, *, namespace: str, with_lws: bool, operator_version: str = "") -> str:
    """`render_objects` as multi-document YAML."""
    objects = render_objects(
        yaml_text, namespace=namespace, with_lws=with_lws, operator_version=operator_version
    )
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=1000)
