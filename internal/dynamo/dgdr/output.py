"""Reading the profiler's result: a multi-document YAML holding one DGD plus extra resources."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from dynamo_operator.internal.dynamo.dgdr import names

DGD_KIND = "DynamoGraphDeployment"


class ProfileOutputError(ValueError):
    """The profiler's output holds no usable DGD."""


@dataclass(frozen=True, slots=True)
class ProfileOutput:
    deployment: dict[str, Any]
    extra: tuple[dict[str, Any], ...]


def parse_output(text: str) -> ProfileOutput:
    """Split the documents: the last DGD is the deployment, every other object an extra resource.
    Empty, non-object or kind-less documents are skipped (the profiler writes leading `---` and notes)."""
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise ProfileOutputError(f"profiler output is not valid YAML: {exc}") from exc
    deployment: dict[str, Any] | None = None
    extra: list[dict[str, Any]] = []
    for doc in documents:
        if not isinstance(doc, dict) or not doc.get("kind"):
            continue
        if doc["kind"] == DGD_KIND:
            deployment = doc  # the last one wins, as upstream
        else:
            extra.append(doc)
    if deployment is None:
        raise ProfileOutputError("no DynamoGraphDeployment found in the profiler output")
    return ProfileOutput(deployment=deployment, extra=tuple(extra))


def read_output(config_map: Mapping[str, Any], *, use_mocker: bool) -> ProfileOutput:
    """Parse the output ConfigMap's DGD key (the mocker DGD with `useMocker`)."""
    key = names.output_key(use_mocker=use_mocker)
    data = config_map.get("data") or {}
    if key not in data:
        raise ProfileOutputError(
            f"key {key} not found in ConfigMap {config_map.get('metadata', {}).get('name', '')}"
        )
    return parse_output(str(data[key]))


def tracking_labels(*, dgdr_name: str, dgdr_namespace: str) -> dict[str, str]:
    """Labels tying an object to the DGDR that created it (no ownerReference: it may outlive it)."""
    return {
        names.LABEL_DGDR_NAME: dgdr_name,
        names.LABEL_DGDR_NAMESPACE: dgdr_namespace,
        names.LABEL_MANAGED_BY: names.MANAGED_BY_OPERATOR,
    }


def extra_config_maps(
    extra: Iterable[Mapping[str, Any]], *, dgdr_name: str, dgdr_namespace: str, target_namespace: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The ConfigMaps among the extra resources, placed in the target namespace with tracking labels,
    and a description of every skipped (non-ConfigMap or nameless) object."""
    config_maps: list[dict[str, Any]] = []
    skipped: list[str] = []
    for obj in extra:
        name = (obj.get("metadata") or {}).get("name")
        if obj.get("kind") != "ConfigMap" or not name:
            skipped.append(f"{obj.get('kind')}/{name or '?'}")
            continue
        cm = copy.deepcopy(dict(obj))
        cm["apiVersion"] = "v1"
        meta = cm["metadata"] = {
            "name": name,
            "namespace": target_namespace,
            "labels": {
                **(obj["metadata"].get("labels") or {}),
                **tracking_labels(dgdr_name=dgdr_name, dgdr_namespace=dgdr_namespace),
            },
        }
        if annotations := obj["metadata"].get("annotations"):
            meta["annotations"] = dict(annotations)
        cm.pop("status", None)
        config_maps.append(cm)
    return config_maps, skipped
