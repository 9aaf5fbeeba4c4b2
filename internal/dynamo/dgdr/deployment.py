"""The DGD a DGDR creates with autoApply: the generated DGD plus the user's deploymentOverrides and
the tracking labels. Never an ownerReference: the DGD must survive deletion of its request."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal.dynamo.dgdr.output import tracking_labels

# Component types that run the inference engine, i.e. what `workersImage` replaces.
WORKER_COMPONENT_TYPES = frozenset({"worker", "prefill", "decode"})
MAIN_CONTAINER = "main"


def target(dgdr: Mapping[str, Any], generated: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """(namespace, name) of the DGD the request deploys: overrides first, then the generated name,
    then the DGDR's own name; namespace defaults to the DGDR's."""
    meta = dgdr["metadata"]
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    generated_name = ((generated or {}).get("metadata") or {}).get("name")
    name = overrides.get("name") or generated_name or meta["name"]
    return overrides.get("namespace") or meta["namespace"], name


def deployment_from_profile(dgdr: Mapping[str, Any], generated: Mapping[str, Any]) -> dict[str, Any]:
    """The DGD to create: generated spec, overridden metadata, tracking labels, workers image."""
    meta = dgdr["metadata"]
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    gen_meta = generated.get("metadata") or {}
    namespace, name = target(dgdr, generated)
    labels = {
        **(gen_meta.get("labels") or {}),
        **tracking_labels(dgdr_name=meta["name"], dgdr_namespace=meta["namespace"]),
        **(overrides.get("labels") or {}),
    }
    annotations = {**(gen_meta.get("annotations") or {}), **(overrides.get("annotations") or {})}
    spec = copy.deepcopy(dict(generated.get("spec") or {}))
    if image := overrides.get("workersImage"):
        for service in (spec.get("services") or {}).values():
            if isinstance(service, dict) and service.get("componentType") in WORKER_COMPONENT_TYPES:
                main = service.setdefault("extraPodSpec", {}).setdefault("mainContainer", {})
                main.setdefault("name", MAIN_CONTAINER)
                main["image"] = image
    out_meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if annotations:
        out_meta["annotations"] = annotations
    return {
        "apiVersion": generated.get("apiVersion") or "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": out_meta,
        "spec": spec,
    }
