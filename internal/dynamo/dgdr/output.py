"""Reading the profiler's result: a multi-document YAML holding one DGD plus extra resources.

The output is user data (the profiler image, its config and its output are the requester's), so it is
parsed with hard limits (`OutputLimits`). YAML aliases are the hazard: `yaml.safe_load` runs no code,
but an alias is a second reference to the anchored object, and nested anchors multiply (ten aliases
of ten aliases of ...) into a result that is small in memory and explodes when serialised (a 394-byte
document became 13 MB of JSON, eight levels pass 1 GiB). `_BoundedLoader` therefore measures, while
composing and before anything is constructed, the size each node will have once its aliases are
expanded, and refuses past a limit; nothing is ever expanded to find out.

Parsing is CPU-bound pure Python (10 to 30 µs a byte; the limits stop it within a few seconds):
callers on an event loop run it in a thread.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass

import yaml
from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, json_object
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject, json_fields
from dynamo_operator.internal.dynamo.dgdr import names

DGD_KIND = "DynamoGraphDeployment"


class ProfileOutputError(ValueError):
    """The profiler's output holds no usable DGD."""


class OutputLimitExceeded(ProfileOutputError):
    """The profiler's output is past one of the parser's limits; `limit` names it."""

    def __init__(self, limit: str, message: str) -> None:
        super().__init__(message)
        self.limit = limit


@dataclass(frozen=True, slots=True)
class OutputLimits:
    """Bounds on one output document (one key of the output ConfigMap). A real profiler writes one
    DGD and a planner ConfigMap or two: tens of KiB, a few thousand nodes, no aliases, depth < 20."""

    # UTF-8 bytes. The sidecar puts two such documents and the status in one ConfigMap (at most
    # 1 MiB in all), so a valid output is under half of that.
    max_bytes: int = 512 * 1024
    # Documents in the stream, empty ones included (`---` alone is a document).
    max_documents: int = 64
    # Nesting of mappings and sequences; a Kubernetes object rarely passes 15.
    max_depth: int = 64
    # Alias uses (`*name`). PyYAML's dumper writes one for each repeated Python object, so a few are
    # legitimate; expansion is bounded by `max_expanded` whatever their number.
    max_aliases: int = 256
    # Nodes composed (not counting what aliases repeat): bounds the loader's memory (about 0.7 KiB
    # a node, marks included: 35 MiB at most, measured) and its time (a few seconds).
    max_nodes: int = 50_000
    # Characters the parsed result would take with every alias written out (about its JSON size),
    # measured as it is composed, never by expanding: bounds what the result costs wherever it is
    # serialised (status.generatedDeployment, the DGD).
    max_expanded: int = 4 * 1024 * 1024


LIMITS = OutputLimits()


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that counts while it composes, refusing a stream past `OutputLimits`.

    `_sizes` holds the expanded size of each node of the current document once it is complete: a
    collection's is the sum of its children's, an alias's is its target's, so the total is known
    without expanding anything. An alias to a node not yet complete (one of its own ancestors) has
    no size: that is a recursive structure, refused as well.
    """

    def __init__(self, text: str, limits: OutputLimits) -> None:
        super().__init__(text)
        self._limits = limits
        self._depth = 0
        self._aliases = 0
        self._nodes = 0
        self._expanded = 0  # the whole stream's
        self._sizes: dict[int, int] = {}  # id(node) -> expanded size, current document only

    def compose_document(self) -> yaml.Node | None:
        self._sizes.clear()  # ids of an earlier document's nodes may be reused now
        node = super().compose_document()
        if node is not None:
            self._expanded += self._sizes[id(node)]
            self._check("expanded size", self._expanded, self._limits.max_expanded)
        return node

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            self._check("alias count", self._aliases, self._limits.max_aliases)
            target = super().compose_node(parent, index)
            if id(target) not in self._sizes:
                raise ProfileOutputError("profiler output is not valid: an alias refers to its own ancestor")
            return target
        self._depth += 1
        try:
            self._check("nesting depth", self._depth, self._limits.max_depth)
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:  # not produced by the safe composer; refused rather than guessed at
            raise ProfileOutputError("profiler output is not valid: an empty node")
        self._nodes += 1
        self._check("node count", self._nodes, self._limits.max_nodes)
        size = self._size_of(node)
        self._check("expanded size", size, self._limits.max_expanded)
        self._sizes[id(node)] = size
        return node

    def _size_of(self, node: yaml.Node) -> int:
        """Characters of `node` written out: a scalar's text, or brackets plus its children's."""
        if isinstance(node, yaml.ScalarNode):
            return len(node.value) + 2
        if isinstance(node, yaml.SequenceNode):
            return 2 + sum(self._sizes[id(child)] for child in node.value)
        if isinstance(node, yaml.MappingNode):
            return 2 + sum(self._sizes[id(k)] + self._sizes[id(v)] for k, v in node.value)
        raise ProfileOutputError(f"profiler output is not valid: unexpected node {type(node).__name__}")

    @staticmethod
    def _check(limit: str, value: int, bound: int) -> None:
        if value > bound:
            raise OutputLimitExceeded(limit, f"profiler output exceeds the {limit} limit ({bound})")


def load_documents(text: str, limits: OutputLimits = LIMITS) -> list[object]:
    """Every document of `text`, each within `limits` (`OutputLimitExceeded` names the first limit
    passed); `ProfileOutputError` for text that is not YAML the safe loader accepts."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > limits.max_bytes:
        raise OutputLimitExceeded(
            "document size",
            f"profiler output exceeds the document size limit ({limits.max_bytes} bytes): {size}",
        )
    loader = _BoundedLoader(text, limits)
    documents: list[object] = []
    try:
        while loader.check_node():
            if len(documents) == limits.max_documents:
                raise OutputLimitExceeded(
                    "document count",
                    f"profiler output exceeds the document count limit ({limits.max_documents})",
                )
            documents.append(loader.get_data())
    except yaml.YAMLError as exc:
        raise ProfileOutputError(f"profiler output is not valid YAML: {exc}") from exc
    except ProfileOutputError:
        raise
    except (ValueError, TypeError, OverflowError) as exc:  # a scalar the constructor cannot convert
        raise ProfileOutputError(f"profiler output is not valid: {exc}") from exc
    finally:
        loader.dispose()
    return documents


@dataclass(frozen=True, slots=True)
class ProfileOutput:
    deployment: JsonObject
    extra: tuple[JsonObject, ...]


def parse_output(text: str, limits: OutputLimits = LIMITS) -> ProfileOutput:
    """Split the documents: the last DGD is the deployment, every other object an extra resource.
    Empty, non-object or kind-less documents are skipped (the profiler writes leading `---` and notes)."""
    deployment: JsonObject | None = None
    extra: list[JsonObject] = []
    for doc in load_documents(text, limits):
        if not isinstance(doc, dict) or not doc.get("kind"):
            continue
        if doc["kind"] == DGD_KIND:
            deployment = doc  # the last one wins, as upstream
        else:
            extra.append(doc)
    if deployment is None:
        raise ProfileOutputError("no DynamoGraphDeployment found in the profiler output")
    return ProfileOutput(deployment=deployment, extra=tuple(extra))


def read_output(config_map: ForeignObject, *, use_mocker: bool) -> ProfileOutput:
    """Parse the output ConfigMap's DGD key (the mocker DGD with `useMocker`)."""
    key = names.output_key(use_mocker=use_mocker)
    data = json_object(config_map.get("data"))
    if key not in data:
        raise ProfileOutputError(
            f"key {key} not found in ConfigMap {json_object(config_map.get('metadata')).get('name', '')}"
        )
    return parse_output(str(data[key]))


def tracking_labels(*, dgdr_name: str, dgdr_namespace: str) -> dict[str, str]:
    """Labels tying an object to the DGDR that created it (no ownerReference: it may outlive it)."""
    return {
        names.LABEL_DGDR_NAME: dgdr_name,
        names.LABEL_DGDR_NAMESPACE: dgdr_namespace,
        names.LABEL_MANAGED_BY: names.MANAGED_BY_OPERATOR,
    }


def is_config_map(obj: ForeignObject) -> bool:
    """An extra resource the operator creates: a named ConfigMap (anything else is skipped)."""
    return obj.get("kind") == "ConfigMap" and bool(json_object(obj.get("metadata")).get("name"))


def extra_config_maps(
    extra: Iterable[JsonObject], *, dgdr_name: str, dgdr_namespace: str
) -> tuple[list[GeneratedObject], list[str]]:
    """The ConfigMaps among the extra resources, placed in the request's own namespace with tracking
    labels, and a description of every skipped (non-ConfigMap or nameless) object. Whether the output
    named another namespace is the caller's check (`deployment.foreign_namespaces`), made first."""
    config_maps: list[GeneratedObject] = []
    skipped: list[str] = []
    for obj in extra:
        obj_meta = json_fields(obj.get("metadata"))
        name = obj_meta.get("name")
        if not is_config_map(obj):
            skipped.append(f"{obj.get('kind')}/{name or '?'}")
            continue
        cm = copy.deepcopy(obj)
        cm["apiVersion"] = "v1"
        labels: JsonObject = {
            **json_fields(obj_meta.get("labels")),
            **tracking_labels(dgdr_name=dgdr_name, dgdr_namespace=dgdr_namespace),
        }
        meta: JsonObject = {"name": name, "namespace": dgdr_namespace, "labels": labels}
        if annotations := obj_meta.get("annotations"):
            meta["annotations"] = dict(json_fields(annotations))
        cm["metadata"] = meta
        cm.pop("status", None)
        config_maps.append(cm)
    return config_maps, skipped
