"""DCD → the objects that run it: Deployment or LeaderWorkerSet, Service, Ingress/VirtualService."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, cast

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming, remainder
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.common.hashing import pod_template_hash, stamp_hash
from dynamo_operator.internal.dynamo.common.inputs import (
    AlphaComponentDeployment,
    ComponentDeployment,
    DcdSpec,
)
from dynamo_operator.internal.dynamo.common.not_implemented import (
    check_component as check_not_implemented_component,
)
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject, Obj, envelope
from dynamo_operator.internal.dynamo.component.backends import Role
from dynamo_operator.internal.dynamo.component.default_ingress import default_ingress
from dynamo_operator.internal.dynamo.component.failover import check_failover
from dynamo_operator.internal.dynamo.component.frontend_sidecar import check_container_names
from dynamo_operator.internal.dynamo.component.gpu_memory_service import (
    check_gpu_memory_service,
    desired_claim_template,
    gms_enabled,
    missing_dra,
)
from dynamo_operator.internal.dynamo.component.lowering import lowered
from dynamo_operator.internal.dynamo.component.route_annotations import route_annotations
from dynamo_operator.internal.dynamo.graph.sideobjects import (
    wait_leader_config_map,
    wait_leader_config_map_name,
)
from dynamo_operator.internal.dynamo.pod import api_rules
from dynamo_operator.internal.dynamo.pod.template import (
    Component,
    build_pod_template,
    dynamo_namespace_of,
    kube_discovery_enabled,
    multinode_node_count,
)
from dynamo_operator.internal.dynamo.pod.user_pod import layered_apart, stored_user_pod


def component_of(
    stored: ComponentDeployment | AlphaComponentDeployment, *, alpha: AlphaComponentDeployment | None = None
) -> Component:
    """The generation view of a DCD object. The parent graph comes from its controller ownerReference,
    falling back to the graph-name label (objects rendered offline have no owner).

    Its pods are read from its `podTemplate` as stored, unless it was first written in v1alpha1 in a
    way the pod template cannot state (`layered_apart`): then from its v1alpha1 form, which gives the
    pods that graph had before, so an upgrade changes none. `alpha`: its v1alpha1 form, when the
    caller has it."""
    dcd = alpha if alpha is not None else lowered(stored)
    meta = dcd.get("metadata", {})
    spec = dcd["spec"]
    parent = ""
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == c.KIND_DGD and ref.get("controller"):
            parent = str(ref.get("name"))
    object_labels: Mapping[str, str] = meta.get("labels") or {}
    if not parent:
        parent = str(
            (spec.get("labels") or {}).get(c.LABEL_GRAPH_DEPLOYMENT_NAME)
            or object_labels.get(c.LABEL_GRAPH_DEPLOYMENT_NAME)
            or ""
        )
    native = dcd is not stored and layered_apart(spec) is None
    return Component(
        name=str(meta["name"]),
        namespace=str(meta.get("namespace") or ""),
        parent_dgd=parent,
        spec=graph_component_spec(spec, object_labels) if parent else spec,
        beta=remainder.of_dcd(meta),
        metadata_merged=bool(parent),
        given_pod=stored_user_pod(cast(ComponentDeployment, stored)["spec"]) if native else None,
    )


def graph_component_spec(spec: DcdSpec, object_labels: Mapping[str, str]) -> DcdSpec:
    """A graph's DCD read alike in both forms it is stored in (graph/stored_dcd.py): its labels are
    the object's over the spec's, its annotations the pod template's over the spec's. A DCD written
    as v1alpha1 holds the same labels in both places and its graph's annotations in the spec; one
    written as v1beta1 (ours now, or upstream's) holds them on the object and in the pod template.
    A shallow copy: the cached object is never changed."""
    out: DcdSpec = spec.copy()
    labels = {**(spec.get("labels") or {}), **object_labels}
    template_annotations = (spec.get("extraPodMetadata") or {}).get("annotations") or {}
    annotations = {**(spec.get("annotations") or {}), **template_annotations}
    if labels:
        out["labels"] = labels
    if annotations:
        out["annotations"] = annotations
    return out


def with_default_ingress(comp: Component, ctx: GenContext) -> Component:
    """A graph's frontend that declares no ingress gets the operator's default one: a DCD stored as
    v1beta1 has no field for it (one written as v1alpha1 carries the same default in its spec)."""
    if not comp.parent_dgd or comp.component_type != c.COMPONENT_FRONTEND or comp.spec.get("ingress"):
        return comp
    spec = comp.spec.copy()
    spec["ingress"] = default_ingress(comp.parent_dgd, ctx)
    return dataclasses.replace(comp, spec=spec)


def check_epp(comp: Component) -> None:
    """The endpoint picker runs as one pod (upstream's webhook rule, which its CRD cannot state):
    a second replica would pick endpoints from a state of its own, and multinode has no meaning for it."""
    if comp.component_type != c.COMPONENT_EPP:
        return
    if comp.is_multinode:
        raise GenerationError("multinode", "an epp component cannot be multinode")
    replicas = comp.spec.get("replicas")
    if replicas is not None and int(replicas) != 1:
        raise GenerationError("replicas", f"an epp component runs exactly 1 replica, not {replicas}")


def multinode_missing_api(comp: Component, ctx: GenContext) -> str | None:
    """Which API a multinode component needs but the cluster lacks; None when it can run."""
    if comp.is_multinode and not ctx.capabilities.lws:
        return f"{c.LWS_GROUP}/v1 LeaderWorkerSet"
    return None


def workload_labels(comp: Component) -> dict[str, str]:
    """Labels of the Deployment/LWS/Service object itself (with the worker's sub-type, as upstream
    2a6da14c writes it there as well as on the pods)."""
    labels = comp.labels
    if comp.spec.get("subComponentType"):
        labels[c.LABEL_SUB_COMPONENT_TYPE] = str(comp.spec["subComponentType"])
    model = comp.spec.get("modelRef", {}).get("name")
    if model:
        labels[c.LABEL_BASE_MODEL_HASH] = naming.base_model_hash(str(model))
    return labels


def workload_annotations(comp: Component) -> dict[str, str]:
    """Annotations of the Deployment/LWS/Service object itself. The origin version describes the
    graph, not its workloads: upstream 2a6da14c keeps it off them (df888f68 put it there)."""
    out = comp.annotations
    out.update(comp.pod.annotations)
    out.pop(c.ANNOTATION_ORIGIN_VERSION, None)
    model = comp.spec.get("modelRef", {}).get("name")
    if model:
        out[c.ANNOTATION_BASE_MODEL] = str(model)
    return out


def _with_base_model(template: Obj, comp: Component) -> Obj:
    """A pod of a component serving a model names it (upstream 2a6da14c annotates the pod template
    as well as the workload), so model discovery can read it off the pod."""
    model = comp.spec.get("modelRef", {}).get("name")
    if model:
        template["metadata"].setdefault("annotations", {})[c.ANNOTATION_BASE_MODEL] = str(model)
    return template


def _int_or_percent(value: str) -> int | str:
    return int(value) if value.strip().isdigit() else value.strip()


def deployment_strategy(comp: Component, template: Obj) -> Obj:
    """RollingUpdate (25%/25% unless annotated) or Recreate, as the component's annotations say."""
    annotations = comp.annotations
    restore = template["metadata"].get("labels", {}).get(c.LABEL_SNAPSHOT_RESTORE_TARGET) == "true"
    if restore or annotations.get(c.ANNOTATION_DEPLOYMENT_STRATEGY) == "Recreate":
        return {"type": "Recreate"}
    return {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "maxSurge": _int_or_percent(
                annotations.get(c.ANNOTATION_MAX_SURGE, c.DEFAULT_ROLLING_UPDATE_PERCENT)
            ),
            "maxUnavailable": _int_or_percent(
                annotations.get(c.ANNOTATION_MAX_UNAVAILABLE, c.DEFAULT_ROLLING_UPDATE_PERCENT)
            ),
        },
    }


def _with_template_hash(obj: Obj, template: Obj) -> Obj:
    obj["metadata"].setdefault("annotations", {})[c.ANNOTATION_POD_TEMPLATE_HASH] = pod_template_hash(
        template
    )
    return obj


def _compact_template(template: Obj) -> Obj:
    meta = template["metadata"]
    for key in ("labels", "annotations"):
        if not meta.get(key):
            meta.pop(key, None)
        else:
            meta[key] = dict(sorted(meta[key].items()))
    return template


def desired_deployment(comp: Component, ctx: GenContext, owner: Mapping[str, Any] | None) -> Obj:
    """The Deployment of a single-node component."""
    template = _compact_template(_with_base_model(build_pod_template(comp, ctx, role=Role.MAIN), comp))
    obj = envelope(
        "apps/v1",
        "Deployment",
        comp.name,
        comp.namespace,
        labels=workload_labels(comp),
        annotations=workload_annotations(comp),
        owner=owner,
    )
    spec: Obj = {}
    if comp.spec.get("replicas") is not None:
        spec["replicas"] = int(comp.spec["replicas"])
    spec["selector"] = {"matchLabels": {c.LABEL_SELECTOR: comp.name}}
    spec["strategy"] = deployment_strategy(comp, template)
    spec["template"] = template
    obj["spec"] = spec
    return _with_template_hash(obj, template)


def _role_template(comp: Component, ctx: GenContext, role: Role) -> Obj:
    template = build_pod_template(comp, ctx, role=role)
    labels = template["metadata"]["labels"]
    labels.pop(c.LABEL_SELECTOR, None)
    labels[c.LABEL_ROLE] = role.value
    [main] = [x for x in template["spec"]["containers"] if x["name"] == c.MAIN_CONTAINER_NAME]
    if not main.get("command") or not main.get("args"):
        raise GenerationError("extraPodSpec.mainContainer", "multinode needs both command and args")
    return _compact_template(_with_base_model(template, comp))


def desired_leader_worker_set(comp: Component, ctx: GenContext, owner: Mapping[str, Any] | None) -> Obj:
    """The one LeaderWorkerSet of a multinode component, `<dcd>-0`, whose `replicas` is the
    component's: LWS scales the groups itself, as upstream 2a6da14c has it. No Volcano PodGroup any
    more (upstream dropped it with the per-replica sets); the PodGroups and the extra sets an older
    operator left are retired by the DCD reconciler (component/lws_migration.py)."""
    missing = multinode_missing_api(comp, ctx)
    if missing:
        raise MissingAPIError("multinode", missing, f"multinode components need the {missing} API")
    leader = _role_template(comp, ctx, Role.LEADER)
    worker = _role_template(comp, ctx, Role.WORKER)
    lws = envelope(
        c.LWS_API_VERSION,
        "LeaderWorkerSet",
        naming.lws_name(comp.name),
        comp.namespace,
        labels=workload_labels(comp),
        annotations=workload_annotations(comp),
        owner=owner,
    )
    lws["spec"] = {
        "replicas": comp.replicas,
        "startupPolicy": "LeaderCreated",
        # What LWS's defaulting webhook would fill in, set here so that LWS works with that webhook
        # off: without a rolloutStrategy the LWS controller (v0.6) fails on every reconcile.
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
        },
        "networkConfig": {"subdomainPolicy": "Shared"},
        "leaderWorkerTemplate": {
            "size": multinode_node_count(comp.spec),
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": leader,
            "workerTemplate": worker,
        },
    }
    return _with_template_hash(lws, {"leader": leader, "worker": worker})


def _mounts_config_map(lws: Obj, name: str) -> bool:
    """Some pod of the LeaderWorkerSet mounts the ConfigMap `name`."""
    templates = lws["spec"]["leaderWorkerTemplate"]
    return any(
        (volume.get("configMap") or {}).get("name") == name
        for role in ("leaderTemplate", "workerTemplate")
        for volume in templates[role]["spec"].get("volumes") or ()
    )


def service_port(component_type: str) -> Obj:
    """The one port of a component's Service."""
    if component_type == c.COMPONENT_FRONTEND:
        return {
            "name": c.HTTP_PORT_NAME,
            "port": c.HTTP_PORT,
            "targetPort": c.HTTP_PORT_NAME,
            "protocol": "TCP",
        }
    if component_type == c.COMPONENT_EPP:
        return {
            "name": c.EPP_GRPC_PORT_NAME,
            "port": c.EPP_GRPC_PORT,
            "targetPort": c.EPP_GRPC_PORT,
            "protocol": "TCP",
            "appProtocol": "http2",
        }
    return {
        "name": c.SYSTEM_PORT_NAME,
        "port": c.SYSTEM_PORT,
        "targetPort": c.SYSTEM_PORT_NAME,
        "protocol": "TCP",
    }


def wants_service(comp: Component, ctx: GenContext) -> bool:
    """Frontends always get a Service; others only with Kubernetes discovery."""
    return comp.component_type == c.COMPONENT_FRONTEND or kube_discovery_enabled(comp, ctx)


def desired_service(comp: Component, ctx: GenContext, owner: Mapping[str, Any] | None) -> Obj | None:
    """The component's ClusterIP Service, or None when it should have none."""
    if not wants_service(comp, ctx):
        return None
    return component_service(
        comp,
        ctx,
        name=naming.service_name(comp.name),
        namespace=comp.namespace,
        labels=workload_labels(comp),
        annotations=workload_annotations(comp),
        owner=owner,
        leader_only=comp.is_multinode,
    )


def component_service(
    comp: Component,
    ctx: GenContext,
    *,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str] | None,
    owner: Mapping[str, Any] | None,
    leader_only: bool,
) -> Obj:
    """A ClusterIP Service selecting the component's pods (only its leaders with `leader_only`), with
    the discovery labels when Kubernetes discovery is on. Both pathways build their Services here."""
    labels = dict(labels)
    if kube_discovery_enabled(comp, ctx):
        labels[c.LABEL_DISCOVERY_BACKEND] = c.DISCOVERY_BACKEND_KUBERNETES
        labels[c.LABEL_DISCOVERY_ENABLED] = c.LABEL_VALUE_TRUE
    selector = {
        c.LABEL_DYNAMO_NAMESPACE: naming.label_value(dynamo_namespace_of(comp)),
        c.LABEL_COMPONENT: comp.service_name,
    }
    if comp.role_type:
        selector[c.LABEL_COMPONENT_TYPE] = comp.role_type
    if leader_only:
        selector[c.LABEL_ROLE] = Role.LEADER.value
    obj = envelope("v1", "Service", name, namespace, labels=labels, annotations=annotations, owner=owner)
    obj["spec"] = {
        "type": "ClusterIP",
        "selector": dict(sorted(selector.items())),
        "ports": [service_port(comp.component_type)],
    }
    return obj


def ingress_host(ingress: Mapping[str, Any]) -> str:
    """`<hostPrefix><host>.<hostSuffix or local>`."""
    prefix, suffix = ingress.get("hostPrefix") or "", ingress.get("hostSuffix") or c.DEFAULT_INGRESS_SUFFIX
    return f"{prefix}{ingress.get('host') or ''}.{suffix}"


def _check_route_metadata(ingress: Mapping[str, object]) -> None:
    """The labels and annotations a route (Ingress or VirtualService) is written with: the API server
    validates any object's metadata, and the graph's schema does not (pod/api_rules.py)."""
    api_rules.check_labels(ingress.get("labels"), "ingress.labels")
    api_rules.check_annotations(ingress.get("annotations"), "ingress.annotations")


def desired_ingress(comp: Component, ctx: GenContext, owner: Mapping[str, Any] | None) -> Obj | None:
    """An Ingress when `ingress.enabled` with a controller class and no VirtualService requested."""
    ingress = comp.spec.get("ingress") or {}
    if not ingress.get("enabled") or ingress.get("useVirtualService"):
        return None
    class_name = ingress.get("ingressControllerClassName") or ctx.ingress.controller_class_name
    if not class_name:
        return None
    if not ingress.get("host"):
        raise GenerationError("ingress.host", "required when ingress is enabled")
    host = ingress_host(ingress)
    # What the Ingress API refuses and the graph's schema does not (pod/api_rules.py).
    api_rules.check_subdomain(host, "ingress.host", "host (with its prefix and suffix)", wildcard=True)
    _check_route_metadata(ingress)
    name = naming.service_name(comp.name)
    obj = envelope(
        "networking.k8s.io/v1",
        "Ingress",
        name,
        comp.namespace,
        labels={**comp.labels, **(ingress.get("labels") or {})},
        annotations=route_annotations(comp.annotations, ingress),
        owner=owner,
    )
    spec: Obj = {
        "ingressClassName": class_name,
        "rules": [
            {
                "host": host,
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": name, "port": {"number": c.HTTP_PORT}}},
                        }
                    ]
                },
            }
        ],
    }
    tls = ingress.get("tls") or {}
    if tls.get("secretName"):
        api_rules.check_subdomain(tls["secretName"], "ingress.tls.secretName", "secret")
        spec["tls"] = [{"hosts": [host], "secretName": tls["secretName"]}]
    obj["spec"] = spec
    return obj


def desired_virtual_service(comp: Component, ctx: GenContext, owner: Mapping[str, Any] | None) -> Obj | None:
    """An Istio VirtualService when enabled with `useVirtualService` and a gateway."""
    ingress = comp.spec.get("ingress") or {}
    gateway = ingress.get("virtualServiceGateway") or ctx.ingress.virtual_service_gateway
    if not (ingress.get("enabled") and ingress.get("useVirtualService") and gateway):
        return None
    if not ctx.capabilities.istio:
        raise MissingAPIError(
            "ingress.useVirtualService",
            "networking.istio.io/v1beta1 VirtualService",
            "a VirtualService needs Istio's networking.istio.io API",
        )
    if not ingress.get("host"):
        raise GenerationError("ingress.host", "required when ingress is enabled")
    host = ingress_host(ingress)
    _check_route_metadata(ingress)  # (Istio, not the API server, judges a VirtualService's hosts)
    name = naming.service_name(comp.name)
    obj = envelope(
        c.ISTIO_API_VERSION,
        "VirtualService",
        name,
        comp.namespace,
        labels={**comp.labels, **(ingress.get("labels") or {})},
        annotations=route_annotations(comp.annotations, ingress),
        owner=owner,
    )
    obj["spec"] = {
        "hosts": [host],
        "gateways": [gateway],
        "http": [
            {
                "match": [{"uri": {"prefix": "/"}}],
                "route": [{"destination": {"host": name, "port": {"number": c.HTTP_PORT}}}],
            }
        ],
    }
    return obj


def desired_model_service(model_name: str, namespace: str, owner: Mapping[str, Any] | None) -> Obj:
    """Headless Service selecting every pod that serves base model `model_name` (port 9090 `system`)."""
    model_hash = naming.base_model_hash(model_name)
    obj = envelope(
        "v1",
        "Service",
        naming.model_service_name(model_name),
        namespace,
        labels={c.LABEL_BASE_MODEL_HASH: model_hash, c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE},
        annotations={c.ANNOTATION_BASE_MODEL: model_name},
        owner=owner,
    )
    obj["spec"] = {
        "clusterIP": "None",
        "selector": {c.LABEL_BASE_MODEL_HASH: model_hash},
        "publishNotReadyAddresses": False,
        "ports": [
            {
                "name": c.SYSTEM_PORT_NAME,
                "port": c.SYSTEM_PORT,
                "targetPort": c.SYSTEM_PORT,
                "protocol": "TCP",
            }
        ],
    }
    return obj


def desired_component_objects(
    dcd: ComponentDeployment | AlphaComponentDeployment, ctx: GenContext
) -> list[GeneratedObject]:
    """Every object the DCD controller keeps for one DCD, each stamped with its content hash.

    Multinode without the LeaderWorkerSet API, and gpuMemoryService without the DRA API, raise
    MissingAPIError (the caller turns it into a condition; nothing is written, as upstream writes no
    workload then). The model Service of a DCD that belongs to a graph is the graph's (see graph/generate.py).
    """
    owner = dcd  # as read: the owner reference names it in its storage version either way
    alpha = lowered(dcd)  # once: the checks and the pod builder read the v1alpha1 form
    check_not_implemented_component(alpha)
    comp = with_default_ingress(component_of(dcd, alpha=alpha), ctx)
    out: list[Obj] = []
    if not comp.parent_dgd:  # a graph's DCD carries its graph's maps, checked with the graph
        api_rules.check_metadata_maps(alpha["spec"], "")
    check_gpu_memory_service(comp.spec, comp.pod, "")
    check_failover(comp.spec, "")
    check_container_names(comp.spec, "")
    check_epp(comp)
    if gms_enabled(comp.spec):
        if not ctx.capabilities.dra:
            raise missing_dra("gpuMemoryService.enabled")
        # First: the pods' claims name it.
        out.append(
            desired_claim_template(
                parent=comp.parent_dgd or comp.name,
                service=comp.service_name,
                namespace=comp.namespace,
                spec=comp.spec,
                pod=comp.pod,
                owner=owner,
            )
        )
    if comp.is_multinode:
        lws = desired_leader_worker_set(comp, ctx, owner)
        out.append(lws)
        if not comp.parent_dgd and _mounts_config_map(lws, wait_leader_config_map_name(comp.name)):
            # In a graph the graph writes the script its workers wait with; a DCD on its own writes it
            # itself, or its worker pods would wait forever for a volume nobody creates.
            out.append(
                wait_leader_config_map(comp.name, comp.namespace, owner=owner, labels=workload_labels(comp))
            )
    else:
        out.append(desired_deployment(comp, ctx, owner))
    for extra in (
        desired_service(comp, ctx, owner),
        desired_ingress(comp, ctx, owner),
        desired_virtual_service(comp, ctx, owner),
    ):
        if extra is not None:
            out.append(extra)
    model = comp.spec.get("modelRef", {}).get("name")
    if model and not comp.parent_dgd:
        out.append(desired_model_service(str(model), comp.namespace, owner))
    return [stamp_hash(o) for o in out]
