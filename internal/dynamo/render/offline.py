"""Offline rendering: DGD YAML in, every object the operator would create out (multi-document YAML).

Used by `dynamo-operator render -f dgd.yaml` so users can review what a change does before applying.
A file may hold several DGDs (each rendered in turn) and other kinds (skipped, each named in a note).
A DGD is refused as `kubectl apply` would refuse it: unknown fields by the generated CRD schema,
the rest by the API models. Optional APIs are off unless switched on (one `--with-*` flag each, from
the table of optional APIs), and image pull secrets are discovered from a file of Secrets as the
operator discovers them in the cluster (`docker_secret_index`).
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pydantic
import yaml
from dynamo_operator.api.v1alpha1 import API_VERSION, DYNAMO_GRAPH_DEPLOYMENT_KIND, DynamoGraphDeployment
from dynamo_operator.api.v1alpha1.crd import root_schema
from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects, desired_shared_objects
from dynamo_operator.internal.dynamo.graph.meta import origin_version, with_origin_version
from dynamo_operator.internal.dynamo.graph.mpisecret import PLACEHOLDER_KEY_PAIR, desired_mpi_ssh_secrets
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects, uses_grove
from dynamo_operator.internal.dynamo.render.unknownfields import unknown_fields
from dynamo_operator.internal.dynamo.render.yaml_text import dump_all as dump_yaml_documents
from dynamo_operator.internal.secrets.index import DockerSecretIndex, InvalidDockerConfigError, secret_hosts

Note = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """Everything `render` takes besides the DGD file."""

    namespace: str = "default"
    capabilities: Capabilities = field(default_factory=Capabilities)
    operator_version: str = ""
    secrets: Sequence[Obj] = ()  # dockerconfigjson Secrets, as read from a --secrets file


@functools.cache
def _dgd_schema() -> Obj:
    return root_schema(DynamoGraphDeployment)


def _field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_document(raw: Any, *, strict: bool = True) -> Obj:
    """Validate one parsed DGD document as the API server would; ValueErrors name the field.
    `strict` refuses unknown fields (kubectl's default, `fieldValidation=Strict`)."""
    if not isinstance(raw, dict):
        raise ValueError(f"expected a {DYNAMO_GRAPH_DEPLOYMENT_KIND} mapping, got {type(raw).__name__}")
    if raw.get("kind") != DYNAMO_GRAPH_DEPLOYMENT_KIND:
        raise ValueError(f"kind: expected {DYNAMO_GRAPH_DEPLOYMENT_KIND}, got {raw.get('kind')!r}")
    if raw.get("apiVersion") != API_VERSION:
        raise ValueError(f"apiVersion: expected {API_VERSION}, got {raw.get('apiVersion')!r}")
    unknown = unknown_fields(raw, _dgd_schema()) if strict else []
    if unknown:
        raise ValueError(", ".join(f'unknown field "{path}"' for path in unknown))
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


def _load_all(yaml_text: str) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(yaml_text) if d is not None]
    except yaml.YAMLError as err:
        raise ValueError(f"not valid YAML: {err}") from err


def parse_graph(yaml_text: str, *, strict: bool = False) -> Obj:
    """Parse and validate one DGD document; errors are ValueErrors that name the field. Lenient about
    unknown fields unless `strict` (test/compat reads upstream's examples through it, some of which
    name fields this CRD does not declare yet, issue #15)."""
    docs = _load_all(yaml_text)
    if len(docs) != 1:
        raise ValueError(f"expected exactly one {DYNAMO_GRAPH_DEPLOYMENT_KIND} document, found {len(docs)}")
    return parse_document(docs[0], strict=strict)


def _describe(doc: Mapping[str, Any]) -> str:
    name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), Mapping) else None
    return f"{doc.get('kind') or '(no kind)'}/{name or '(no name)'}"


def parse_graphs(yaml_text: str, *, note: Note) -> list[Obj]:
    """Every DGD document of a multi-document file, validated; documents of other kinds are skipped
    with a `note` each. A DGD that fails validation refuses the whole file (ValueError naming it)."""
    graphs: list[Obj] = []
    seen: set[tuple[Any, Any]] = set()
    for i, doc in enumerate(_load_all(yaml_text), start=1):
        if not isinstance(doc, dict):
            raise ValueError(f"document {i}: expected a mapping, got {type(doc).__name__}")
        if doc.get("kind") != DYNAMO_GRAPH_DEPLOYMENT_KIND:
            note(f"skipped document {i} ({_describe(doc)}): not a {DYNAMO_GRAPH_DEPLOYMENT_KIND}")
            continue
        try:
            graph = parse_document(doc)
        except ValueError as err:
            raise ValueError(f"document {i} ({_describe(doc)}): {err}") from err
        meta = graph["metadata"]
        key = (meta.get("namespace"), meta.get("name"))
        if key in seen:
            raise ValueError(f"document {i} ({_describe(doc)}): the same graph appears twice in the file")
        seen.add(key)
        graphs.append(graph)
    if not graphs:
        raise ValueError(f"no {DYNAMO_GRAPH_DEPLOYMENT_KIND} document found")
    return graphs


def _with_data(secret: Mapping[str, Any]) -> Obj:
    """A Secret as the API server stores it: `stringData` folded into base64 `data`."""
    out = dict(secret)
    string_data = out.pop("stringData", None) or {}
    if string_data:
        data = dict(out.get("data") or {})
        data.update({k: base64.b64encode(str(v).encode()).decode() for k, v in string_data.items()})
        out["data"] = data
    return out


def parse_secrets(yaml_text: str, *, namespace: str, note: Note) -> list[JsonObject]:
    """The dockerconfigjson Secrets of a multi-document file (a `kind: List` is unwrapped), each in
    `namespace` unless it names its own; other documents are skipped with a `note`, and a docker
    Secret the operator could not read refuses the file."""
    docs: list[object] = []
    for doc in _load_all(yaml_text):
        docs += (doc.get("items") or []) if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
    out: list[JsonObject] = []
    for i, doc in enumerate(docs, start=1):
        if not isinstance(doc, dict) or doc.get("kind") != "Secret":
            what = _describe(doc) if isinstance(doc, dict) else type(doc).__name__
            note(f"secrets: skipped document {i} ({what}): not a Secret")
            continue
        if doc.get("type") != consts.DOCKER_CONFIG_JSON_TYPE:
            note(f"secrets: skipped {_describe(doc)}: type is not {consts.DOCKER_CONFIG_JSON_TYPE}")
            continue
        secret = _with_data(doc)
        meta = dict(secret.get("metadata") or {})
        meta.setdefault("namespace", namespace)
        secret["metadata"] = meta
        try:
            secret_hosts(secret)
        except InvalidDockerConfigError as err:
            raise ValueError(f"secrets: {_describe(doc)}: {err}") from err
        out.append(secret)
    return out


def docker_secret_index(secrets: Sequence[Obj]) -> DockerSecretIndex:
    """The same registry-host index the operator builds from the cluster's docker Secrets."""
    index = DockerSecretIndex()
    index.replace_all(list(secrets))
    return index


def render_graph(graph: Obj, options: RenderOptions, index: DockerSecretIndex) -> list[Obj]:
    """Every object the operator would create for one validated DGD, in a deterministic order: the
    namespace's shared ServiceAccounts and MPI key Secret (if any), graph-level objects (PVCs, RBAC,
    side objects, model Services, DCDs, adapters), then each DCD's children. A new graph is seen as
    the operator sees it at its first look: stamped with the operator version as its origin version
    (graph/meta.py)."""
    parsed = dict(graph)
    parsed["metadata"] = dict(graph.get("metadata") or {})
    ns = parsed["metadata"].get("namespace") or options.namespace
    parsed["metadata"]["namespace"] = ns
    dgd = with_origin_version(parsed, origin_version(parsed, [], options.operator_version))
    # Always assumed served, with no flag: DRA is a built-in API (resource.k8s.io, GA in Kubernetes
    # 1.34), so a gpuMemoryService graph renders its ResourceClaimTemplate and claims.
    capabilities = replace(options.capabilities, dra=True)
    ctx = GenContext(namespace=ns, capabilities=capabilities, docker_secrets=index.snapshot(ns))
    try:
        # The MPI key Secret with a placeholder key: the operator draws the real one when it creates it.
        secrets = desired_mpi_ssh_secrets(dgd, ns, ctx.mpi_ssh_secret_name, lambda: PLACEHOLDER_KEY_PAIR)
        shared = desired_shared_objects(dgd, ctx) + secrets
        if uses_grove(dgd, ctx):  # one PodCliqueSet and its Services instead of DCDs
            return shared + desired_grove_objects(dgd, ctx)
        objects = shared + desired_graph_objects(dgd, ctx)
        children: list[Obj] = []
        for obj in objects:
            if obj["kind"] == "DynamoComponentDeployment":
                children += desired_component_objects(component_view(obj), ctx)
    except GenerationError as err:
        name = parsed["metadata"].get("name")
        raise ValueError(f"{DYNAMO_GRAPH_DEPLOYMENT_KIND}/{name}: {err}") from err
    return objects + children


def _ignore(_: str) -> None:
    return None


def render_objects(yaml_text: str, options: RenderOptions, *, note: Note = _ignore) -> list[Obj]:
    """Every object the operator would create for the DGDs in `yaml_text`, graph after graph."""
    index = docker_secret_index(options.secrets)
    out: list[Obj] = []
    for graph in parse_graphs(yaml_text, note=note):
        out += render_graph(graph, options, index)
    return out


def render_documents(yaml_text: str, options: RenderOptions, *, note: Note = _ignore) -> str:
    """`render_objects` as multi-document YAML."""
    objects = render_objects(yaml_text, options, note=note)
    return dump_yaml_documents(objects)
