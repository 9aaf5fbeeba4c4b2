"""The DGD a DGDR creates with autoApply: the generated DGD plus the user's deploymentOverrides and
the tracking labels. Never an ownerReference: the DGD must survive deletion of its request.

Everything a request creates lands in the request's own namespace. Whoever may create a request in
one namespace must not get the operator to write into another: the generated DGD's images, pod spec
and ServiceAccount come from the profiler output the requester controls, so a DGD elsewhere is pods
as any ServiceAccount of any namespace. `foreign_namespaces` finds every other namespace a request or
its profiler output names; the reconciler fails such a request and creates nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal.dynamo.common.inputs import Request, StoredGraph
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject, json_fields
from dynamo_operator.internal.dynamo.dgdr.machine import DeploymentInfo
from dynamo_operator.internal.dynamo.dgdr.output import is_config_map, tracking_labels

# Component types that run the inference engine, i.e. what `workersImage` replaces.
WORKER_COMPONENT_TYPES = frozenset({"worker", "prefill", "decode"})
MAIN_CONTAINER = "main"


OVERRIDE_NAMESPACE_FIELD = "spec.deploymentOverrides.namespace"


def foreign_namespaces(
    dgdr: Request,
    generated: JsonObject | None = None,
    extra: Iterable[JsonObject] = (),
) -> list[str]:
    """What would place an object outside the request's own namespace, one sentence each: the
    override, the generated DGD's `metadata.namespace`, each extra ConfigMap's. Empty or equal to
    the request's namespace is fine; empty list when all are."""
    own = str(dgdr["metadata"]["namespace"])
    problems: list[str] = []
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    if (wanted := overrides.get("namespace")) and wanted != own:
        problems.append(
            f"{OVERRIDE_NAMESPACE_FIELD} is {wanted!r}: a request deploys only into its own namespace "
            f"{own!r}; leave the field empty or set it to {own!r}"
        )
    if generated is not None and (wanted := _namespace_of(generated)) and wanted != own:
        problems.append(
            f"the profiler output's DynamoGraphDeployment names namespace {wanted!r} "
            f"(metadata.namespace); only the request's own namespace {own!r} is allowed"
        )
    for obj in extra:
        if is_config_map(obj) and (wanted := _namespace_of(obj)) and wanted != own:
            problems.append(
                f"the profiler output's ConfigMap {json_fields(obj.get('metadata')).get('name')} names "
                f"namespace {wanted!r} "
                f"(metadata.namespace); only the request's own namespace {own!r} is allowed"
            )
    return problems


def _namespace_of(obj: Mapping[str, object]) -> str | None:
    meta = obj.get("metadata")
    return str(meta["namespace"]) if isinstance(meta, Mapping) and meta.get("namespace") else None


def target(dgdr: Request, generated: JsonObject | None = None) -> tuple[str, str]:
    """(namespace, name) of the DGD the request deploys: always the request's own namespace (the
    caller has refused any other, `foreign_namespaces`); the override's name first, then the
    generated name, then the DGDR's own name."""
    meta = dgdr["metadata"]
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    generated_name = json_fields(json_fields(generated).get("metadata")).get("name")
    name = overrides.get("name") or generated_name or meta["name"]
    return str(meta["namespace"]), str(name)


def deployment_from_profile(dgdr: Request, generated: JsonObject) -> GeneratedObject:
    """The DGD to create: generated spec, overridden metadata, tracking labels, workers image."""
    meta = dgdr["metadata"]
    overrides = (dgdr.get("spec") or {}).get("deploymentOverrides") or {}
    gen_meta = json_fields(generated.get("metadata"))
    namespace, name = target(dgdr, generated)
    labels: JsonObject = {
        **json_fields(gen_meta.get("labels")),
        **tracking_labels(dgdr_name=meta["name"], dgdr_namespace=meta["namespace"]),
        **(overrides.get("labels") or {}),
    }
    annotations: JsonObject = {
        **json_fields(gen_meta.get("annotations")),
        **(overrides.get("annotations") or {}),
    }
    spec = copy.deepcopy(json_fields(generated.get("spec")))
    if image := overrides.get("workersImage"):
        for service in json_fields(spec.get("services")).values():
            if isinstance(service, dict) and service.get("componentType") in WORKER_COMPONENT_TYPES:
                pod_spec = service.setdefault("extraPodSpec", {})
                main = pod_spec.setdefault("mainContainer", {}) if isinstance(pod_spec, dict) else None
                if isinstance(main, dict):
                    main.setdefault("name", MAIN_CONTAINER)
                    main["image"] = image
    if version := (dgdr.get("spec") or {}).get("runtimeVersionOverride"):
        # The request's runtime version is every component's default; one the profile set stays.
        services = spec.get("services")
        listed = services.values() if isinstance(services, dict) else ()
        components = spec.get("components")
        for component in [*listed, *(components if isinstance(components, list) else ())]:
            if isinstance(component, dict) and not component.get("runtimeVersionOverride"):
                component["runtimeVersionOverride"] = version
    out_meta: JsonObject = {"name": name, "namespace": namespace, "labels": labels}
    if annotations:
        out_meta["annotations"] = annotations
    return {
        "apiVersion": generated.get("apiVersion") or "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": out_meta,
        "spec": spec,
    }


def deployment_info(dgd: StoredGraph) -> DeploymentInfo:
    """The graph's replicas as `status.deploymentInfo` sums them: wanted and available over every
    component of its status (read as stored, v1beta1); a count the status does not give counts as
    none."""
    services = (dgd.get("status") or {}).get("components")
    replicas = available = 0
    if isinstance(services, Mapping):
        for service in services.values():
            if not isinstance(service, Mapping):
                continue
            replicas += _count(service.get("replicas"))
            available += _count(service.get("availableReplicas"))
    # The fields are int32: a sum past it (never a real graph's) is written as the largest one.
    return DeploymentInfo(replicas=min(replicas, _INT32_MAX), available_replicas=min(available, _INT32_MAX))


_INT32_MAX = 2**31 - 1


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
