"""DGD → the objects the graph reconciler owns: one DCD per service, created PVCs, scaling adapters,
the discovery RBAC and the model Services."""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from dynamo_operator.api.conversion import preserve
from dynamo_operator.api.v1alpha1.groupversion import SERVICES_REQUIRED
from dynamo_operator.api.views.v1alpha1 import ExtraPodMetadata
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming, remainder
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import (
    GenerationError,
    MissingAPIError,
    NameCollisionError,
    for_service,
)
from dynamo_operator.internal.dynamo.common.hashing import digest, stamp_hash
from dynamo_operator.internal.dynamo.common.inputs import (
    DcdSpec,
    ForeignObject,
    Graph,
    ObjectMeta,
    ServiceSpec,
    StoredGraph,
    component_view,
    dcd_spec_of,
    editable_copy,
    json_object,
)
from dynamo_operator.internal.dynamo.common.needs import NEEDS
from dynamo_operator.internal.dynamo.common.not_implemented import check_graph as check_not_implemented_graph
from dynamo_operator.internal.dynamo.common.objects import Obj, envelope
from dynamo_operator.internal.dynamo.component.backends import detect_backend
from dynamo_operator.internal.dynamo.component.default_ingress import default_ingress
from dynamo_operator.internal.dynamo.component.failover import check_failover, failover_enabled
from dynamo_operator.internal.dynamo.component.frontend_sidecar import (
    check_container_names,
    check_named_sidecar,
)
from dynamo_operator.internal.dynamo.component.gpu_memory_service import (
    check_gpu_memory_service,
    gms_enabled,
    missing_dra,
)
from dynamo_operator.internal.dynamo.component.workload import (
    desired_component_objects,
    desired_model_service,
)
from dynamo_operator.internal.dynamo.graph.components import (
    components_of,
    graph_name,
    has_component_of_type,
    raised,
)
from dynamo_operator.internal.dynamo.graph.grove_only import check_component_pathway
from dynamo_operator.internal.dynamo.graph.sideobjects import (
    COMPONENT_CLASS_WORKER,
    EPP_CONFIG_TYPE,
    LABEL_COMPONENT_CLASS,
    desired_epp_objects,
    desired_wait_leader_config_map,
)
from dynamo_operator.internal.dynamo.graph.stored_dcd import stored_dcd
from dynamo_operator.internal.dynamo.graph.workernames import first_worker_generation
from dynamo_operator.internal.dynamo.pod.api_rules import check_metadata_maps
from dynamo_operator.internal.dynamo.pod.merge import merge_env
from dynamo_operator.internal.dynamo.pod.resources import check_quantities, check_quantity
from dynamo_operator.internal.dynamo.pod.template import discovery_backend_of
from dynamo_operator.internal.dynamo.pod.user_pod import alpha_user_pod
from dynamo_operator.internal.dynamo.rollout import workerhash
from dynamo_operator.internal.dynamo.rollout.workerhash import is_worker

ISTIO_SIDECAR_INJECT = "sidecar.istio.io/inject"


def _meta(dgd: Graph) -> ObjectMeta:
    meta = dgd.get("metadata") or {}
    if not meta.get("name"):
        raise GenerationError("metadata.name", "required")
    return meta


def services_of(dgd: Graph) -> dict[str, ServiceSpec]:
    """`spec.services` in name order (None entries dropped), each a shallow copy."""
    services = dgd["spec"].get("services") or {}
    return {name: services[name].copy() for name in sorted(services) if services[name] is not None}


def service_to_dcd_spec(
    dgd: Graph,
    service: str,
    ctx: GenContext,
    *,
    restart_at: str | None = None,
    worker_hash: str | None = None,
) -> DcdSpec:
    """The DCD spec for one service: the service spec plus everything the graph contributes.
    `worker_hash` labels a worker service with the graph's worker hash (see workerhash.py)."""
    meta = _meta(dgd)
    dgd_spec = dgd["spec"]
    source = services_of(dgd)[service]
    spec = editable_copy(source)
    dgd_name, namespace = str(meta["name"]), ctx.namespace
    dyn_ns = naming.dynamo_namespace(
        namespace, dgd_name, global_namespace=bool(spec.get("globalDynamoNamespace"))
    )
    annotations = component_annotations(dgd, source)
    if restart_at:
        annotations[c.ANNOTATION_RESTART_AT] = restart_at
    labels: dict[str, str] = {**(dgd_spec.get("labels") or {}), **(spec.get("labels") or {})}
    labels.update(dcd_labels(dgd_name, service, dyn_ns))
    if worker_hash and is_worker(source):
        labels[c.LABEL_WORKER_HASH] = worker_hash
    if is_worker(source) and _has_epp(dgd):
        labels[LABEL_COMPONENT_CLASS] = COMPONENT_CLASS_WORKER
    spec["annotations"] = annotations
    spec["labels"] = labels
    if not annotations:
        spec.pop("annotations")
    spec["serviceName"] = service
    spec["dynamoNamespace"] = dyn_ns
    backend = generated_backend_framework(dgd)
    if backend:
        spec["backendFramework"] = backend
    envs = merge_env(dgd_spec.get("envs") or [], spec.get("envs") or [])
    if envs:
        spec["envs"] = envs
    if spec.get("componentType") == c.COMPONENT_FRONTEND and not spec.get("ingress"):
        spec["ingress"] = default_ingress(dgd_name, ctx)
    if spec.get("componentType") == c.COMPONENT_PLANNER:
        # The planner scales the graph through its ServiceAccount's binding: name it in the spec (a
        # ServiceAccount the user chose stays theirs).
        extra = spec.setdefault("extraPodSpec", {})
        extra.setdefault("serviceAccountName", ctx.planner_service_account)
    epp = spec.get("eppConfig") or {}
    if isinstance(epp.get("config"), dict):
        # The inline config as the EPP reads it: typed, its apiVersion/kind written out.
        spec["eppConfig"] = {**epp, "config": {**EPP_CONFIG_TYPE, **epp["config"]}}
    if spec.get("replicas") is None:
        spec["replicas"] = c.DEFAULT_REPLICAS
    return dcd_spec_of(spec)


def component_annotations(dgd: Graph, service: ServiceSpec) -> dict[str, str]:
    """A service's annotations as its DCD carries them: its own, then the operator's keys of the
    graph's metadata (c.PROPAGATED_DGD_ANNOTATIONS), then the graph's `spec.annotations`; never a
    restart id, which only the restart state machine sets."""
    annotations: dict[str, str] = dict(service.get("annotations") or {})
    dgd_annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    for key in c.PROPAGATED_DGD_ANNOTATIONS:
        if key in dgd_annotations:
            annotations.setdefault(key, str(dgd_annotations[key]))
    for key, value in (dgd["spec"].get("annotations") or {}).items():
        annotations.setdefault(key, value)
    annotations.pop(c.ANNOTATION_RESTART_AT, None)
    return annotations


def _no_istio_sidecar_for_epp(spec: DcdSpec, own: ServiceSpec) -> None:
    """An EPP DCD's pods opt out of Istio's sidecar: the EPP serves its own TLS, and a sidecar in
    front of it breaks the handshake under STRICT mTLS. A graph-wide "true" does not undo it; the
    component's own annotation does (upstream 2a6da14c; its Grove pathway does not do this)."""
    if spec.get("componentType") != c.COMPONENT_EPP:
        return
    if ISTIO_SIDECAR_INJECT in (own.get("annotations") or {}):
        return
    spec["annotations"] = {**(spec.get("annotations") or {}), ISTIO_SIDECAR_INJECT: "false"}


# What upstream's generator (2a6da14c) writes into a generated DCD's pod template metadata, besides
# the DCD's labels: here the same keys go to `extraPodMetadata`, which the stored v1beta1 DCD holds
# as `spec.podTemplate.metadata`. Each is on the pods already (the labels and Istio's opt-out through
# the component's labels and annotations) or kept off them (the origin version, pod_annotations), so
# no pod changes.
_POD_TEMPLATE_LABELS = (c.LABEL_WORKER_HASH, LABEL_COMPONENT_CLASS)
_POD_TEMPLATE_ANNOTATIONS = (c.ANNOTATION_ORIGIN_VERSION, ISTIO_SIDECAR_INJECT)


def _pod_template_metadata_as_upstream(spec: DcdSpec) -> None:
    labels = {k: v for k, v in (spec.get("labels") or {}).items() if k in _POD_TEMPLATE_LABELS}
    annotations = {k: v for k, v in (spec.get("annotations") or {}).items() if k in _POD_TEMPLATE_ANNOTATIONS}
    if not labels and not annotations:
        return
    meta = spec.get("extraPodMetadata") or {}
    merged: ExtraPodMetadata = dict(meta)  # type: ignore[assignment]
    if labels:
        merged["labels"] = {**labels, **(meta.get("labels") or {})}
    if annotations:
        merged["annotations"] = {**annotations, **(meta.get("annotations") or {})}
    spec["extraPodMetadata"] = merged


def generated_backend_framework(dgd: Graph) -> str:
    """The backend every DCD of the graph is written with (upstream 2a6da14c stamps it on each, the
    frontend's too): the graph's own, else the one its workers' command lines run; "" when none
    does. Workers running different backends are refused, as upstream refuses them."""
    explicit = str(dgd["spec"].get("backendFramework") or "")
    if explicit:
        return explicit
    found = ""
    for service, spec in services_of(dgd).items():
        main = (spec.get("extraPodSpec") or {}).get("mainContainer") or {}
        backend = detect_backend(str(spec.get("componentType") or ""), None, main)
        if backend and found and backend != found:
            raise GenerationError(
                f"spec.services.{service}", f"workers run several backend frameworks: {found} and {backend}"
            )
        found = backend or found
    return found


def _has_epp(dgd: Graph) -> bool:
    return any(s.get("componentType") == c.COMPONENT_EPP for s in services_of(dgd).values())


def dcd_labels(dgd_name: str, service: str, dyn_ns: str) -> dict[str, str]:
    """Labels identifying a DCD (and, through spec.labels, its pods) as one service of one graph."""
    return {
        c.LABEL_COMPONENT: service,
        c.LABEL_DYNAMO_NAMESPACE: naming.label_value(dyn_ns),
        c.LABEL_GRAPH_DEPLOYMENT_NAME: dgd_name,
    }


def graph_worker_hash(dgd: Graph) -> str:
    """The worker hash of the graph's current spec (the same for all its worker services)."""
    return workerhash.worker_hash(dgd["spec"].get("services") or {})


def dcd_names(dgd: Graph, *, worker_hash: str | None = None) -> dict[str, str]:
    """Service → the name of its DCD: `<dgd>-<lower(svc)>`, worker services with `-<worker hash>`
    (`worker_hash`: the graph's, when the caller has computed it already)."""
    dgd_name = str(_meta(dgd)["name"])
    services = services_of(dgd)
    wh = worker_hash or graph_worker_hash(dgd)
    return {
        svc: naming.dcd_name(dgd_name, svc, wh if is_worker(spec) else None) for svc, spec in services.items()
    }


def desired_dcds(
    dgd: Graph,
    ctx: GenContext,
    *,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str | None = None,
) -> list[Obj]:
    """One DCD per service, sorted by name, each stamped with its content hash.

    Worker services are named and labelled with the graph's worker hash (`worker_hash`: precomputed
    by the caller, else computed here). `restart_at` maps a service to the restart id its pods must
    carry (see restart.py); services absent from it carry none.
    """
    return [
        written for _, written in _generated_dcds(dgd, ctx, restart_at=restart_at, worker_hash=worker_hash)
    ]


def _generated_dcds(
    dgd: Graph,
    ctx: GenContext,
    *,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str | None = None,
) -> list[tuple[Obj, Obj]]:
    """`desired_dcds`, each DCD beside the v1alpha1 form it was made in (the same object when it is
    written as v1alpha1): what its workload is checked with before the graph is written
    (`check_workloads`) without converting the written form back."""
    restart_at = restart_at or {}
    wh = worker_hash or graph_worker_hash(dgd)
    names = dcd_names(dgd, worker_hash=wh)
    # The v1beta1-only facts of each component (remainder.py) travel on to its DCD.
    remainders = remainder.of_graph(dgd.get("metadata"))
    out: list[tuple[Obj, Obj]] = []
    services = services_of(dgd)
    for service in services:
        spec = service_to_dcd_spec(dgd, service, ctx, restart_at=restart_at.get(service), worker_hash=wh)
        _no_istio_sidecar_for_epp(spec, services[service])
        _pod_template_metadata_as_upstream(spec)
        payload = remainder.dcd_payload(remainders.get(service, remainder.NONE))
        dcd = envelope(
            c.API_VERSION,
            c.KIND_DCD,
            names[service],
            ctx.namespace,
            labels=spec["labels"],
            annotations={preserve.DCD_SPEC: payload} if payload else None,
            owner=dgd,
        )
        dcd["spec"] = spec
        if ctx.dcd_api_version == c.STORAGE_API_VERSION:
            graph_labels = dgd["spec"].get("labels") or {}
            out.append((dcd, stored_dcd(dcd, alpha_component=services[service], graph_labels=graph_labels)))
        else:
            out.append((dcd, stamp_hash(dcd)))
    return sorted(out, key=lambda pair: pair[1]["metadata"]["name"])


def desired_pvcs(dgd: Graph, ctx: GenContext) -> list[Obj]:
    """PVCs the graph creates (`create: true`), owned by it. PVCs the user brought are never ours."""
    out: list[Obj] = []
    for i, pvc in enumerate(dgd["spec"].get("pvcs") or []):
        if not pvc.get("create"):
            continue
        field = f"spec.pvcs[{i}]"
        for required in ("name", "size", "storageClass", "volumeAccessMode"):
            if not pvc.get(required):
                raise GenerationError(f"{field}.{required}", "required when create is true")
        claim = envelope("v1", "PersistentVolumeClaim", str(pvc["name"]), ctx.namespace, owner=dgd)
        claim["spec"] = {
            "accessModes": [pvc["volumeAccessMode"]],
            "resources": {"requests": {"storage": check_quantity(pvc["size"], f"{field}.size")}},
            "storageClassName": pvc["storageClass"],
        }
        out.append(stamp_hash(claim))
    return sorted(out, key=lambda o: o["metadata"]["name"])


def desired_scaling_adapters(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """A DynamoGraphDeploymentScalingAdapter per component with `scalingAdapter` (v1alpha1's
    `scalingAdapter.enabled`), in v1beta1: the version the adapter's CRD stores and its controller
    reads (`kinds.DGDSA`). Read from the graph as stored (components.py)."""
    stored = raised(dgd)
    dgd_name = graph_name(stored)
    out: list[Obj] = []
    for component in components_of(stored):
        if "scalingAdapter" not in component:
            continue
        name = component["name"]
        adapter = envelope(
            c.STORAGE_API_VERSION,
            c.KIND_DGDSA,
            naming.adapter_name(dgd_name, name),
            ctx.namespace,
            labels={c.LABEL_GRAPH_DEPLOYMENT_NAME: dgd_name, c.LABEL_COMPONENT: name},
            owner=stored,
        )
        replicas = component.get("replicas")
        adapter["spec"] = {
            "replicas": c.DEFAULT_REPLICAS if replicas is None else int(replicas),
            "dgdRef": {"name": dgd_name, "componentName": name},
        }
        out.append(stamp_hash(adapter))
    return sorted(out, key=lambda o: o["metadata"]["name"])


def adapter_selector(dgd_name: str, service: str) -> str:
    """The label selector string a scaling adapter reports for the scale subresource."""
    return f"{c.LABEL_GRAPH_DEPLOYMENT_NAME}={dgd_name},{c.LABEL_COMPONENT}={service}"


def desired_discovery_rbac(dgd: Graph, ctx: GenContext) -> list[Obj]:
    """ServiceAccount, Role and RoleBinding pods use for Kubernetes discovery (when any service uses it)."""
    dgd_name = str(_meta(dgd)["name"])
    backends = (discovery_backend_of(component_annotations(dgd, s), ctx) for s in services_of(dgd).values())
    if c.DISCOVERY_BACKEND_KUBERNETES not in backends:
        return []
    sa_name = naming.discovery_service_account(dgd_name)
    labels = {
        c.LABEL_APP_MANAGED_BY: c.MANAGED_BY_VALUE,
        c.LABEL_APP_COMPONENT: "rbac",
        c.LABEL_APP_NAME: naming.label_value(sa_name),
    }
    sa = envelope("v1", "ServiceAccount", sa_name, ctx.namespace, labels=labels, owner=dgd)
    role = envelope(
        "rbac.authorization.k8s.io/v1", "Role", f"{sa_name}-role", ctx.namespace, labels=labels, owner=dgd
    )
    role["rules"] = [
        {"apiGroups": [""], "resources": ["endpoints", "pods"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["discovery.k8s.io"],
            "resources": ["endpointslices"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": [c.GROUP],
            "resources": ["dynamoworkermetadatas"],
            "verbs": ["create", "get", "list", "watch", "update", "patch", "delete"],
        },
    ]
    binding = envelope(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        f"{sa_name}-binding",
        ctx.namespace,
        labels=labels,
        owner=dgd,
    )
    binding["roleRef"] = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{sa_name}-role"}
    binding["subjects"] = [{"kind": "ServiceAccount", "name": sa_name, "namespace": ctx.namespace}]
    return [stamp_hash(o) for o in (sa, role, binding)]


def desired_model_services(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """One headless Service per distinct `modelRef.name` across the graph, owned by the graph. Read
    from the graph as stored (components.py)."""
    stored = raised(dgd)
    models = sorted(
        {str(x["modelRef"]["name"]) for x in components_of(stored) if x.get("modelRef", {}).get("name")}
    )
    return [stamp_hash(desired_model_service(m, ctx.namespace, stored)) for m in models]


def check_unique_names(dgd_name: str, services: Mapping[str, Any]) -> None:
    """Raise NameCollisionError when service keys differ only in case or in '.' versus '-': they would
    write one DCD, Deployment or Service twice (the CRD refuses this; this is the backstop)."""
    groups = naming.service_collisions(services)
    if not groups:
        return
    described = "; ".join(
        f"{' and '.join(repr(s) for s in group)} would {'both' if len(group) == 2 else 'all'} be named "
        f"{naming.dcd_name(dgd_name, naming.normalised_service(group[0]))!r}"
        for group in groups
    )
    raise NameCollisionError(
        "spec.services",
        groups,
        f"service names must stay distinct once lower-cased with '.' read as '-': {described}; rename one",
    )


def shared_between_owners(obj: ForeignObject) -> bool:
    """Objects another owner may control without a conflict: a model's headless Service (one per
    model and namespace, whichever graph came first) and a PVC (two graphs may both create one
    model cache; its data is never ours to take over)."""
    kind = obj.get("kind")
    labels = json_object(json_object(obj.get("metadata")).get("labels"))
    return kind == "PersistentVolumeClaim" or (kind == "Service" and c.LABEL_BASE_MODEL_HASH in labels)


def validate_graph(dgd: Graph, ctx: GenContext, *, worker_hash: str | None = None) -> None:
    """Semantic checks a schema cannot express; raises GenerationError naming the field."""
    # First: a field the operator does not implement refuses the graph whatever else is wrong.
    check_not_implemented_graph(dgd)
    meta = _meta(dgd)
    services = services_of(dgd)
    if not services:
        raise GenerationError("spec.services", SERVICES_REQUIRED)
    check_unique_names(str(meta["name"]), services)
    wh = worker_hash or graph_worker_hash(dgd)
    problems = naming.name_problems(
        str(meta["name"]),
        list(services),
        worker_hashes={svc: wh for svc, spec in services.items() if is_worker(spec)},
    )
    if problems:
        raise GenerationError(problems[0].split(":", 1)[0], problems[0].split(": ", 1)[1])
    pvc_names = {p.get("name") for p in dgd["spec"].get("pvcs") or []}
    remainders = remainder.of_graph(meta)
    check_metadata_maps(dgd["spec"], "spec.")
    for svc, spec in services.items():
        check_metadata_maps(spec, f"spec.services.{svc}.")
        # A mount names a graph PVC or a volume of the service's own pod: v1beta1 graphs declare
        # their PVC volumes in the pod template, which the v1alpha1 view keeps in extraPodSpec.volumes.
        pod_volumes = {v.get("name") for v in (spec.get("extraPodSpec") or {}).get("volumes") or []}
        for vm in spec.get("volumeMounts") or []:
            if vm.get("name") not in pvc_names | pod_volumes:
                # Keyed by name, not index: the conversion reorders the mounts (paths.py).
                # (`spec.pvcs` is v1alpha1's alone: a v1beta1 graph declares every volume in the pod.)
                graph_pvcs = " and no PVC of the graph (spec.pvcs)" if pvc_names else ""
                raise GenerationError(
                    f"spec.services.{svc}.volumeMounts[name={vm.get('name')}]",
                    f"names no volume of the pod (spec.services.{svc}.extraPodSpec.volumes){graph_pvcs}",
                )
        node_count = (spec.get("multinode") or {}).get("nodeCount")
        if spec.get("multinode") is not None and node_count is not None and int(node_count) < 2:
            raise GenerationError(f"spec.services.{svc}.multinode.nodeCount", "must be at least 2")
        pod = alpha_user_pod(spec)
        check_gpu_memory_service(spec, pod, f"spec.services.{svc}.")
        check_failover(spec, f"spec.services.{svc}.")
        check_container_names(spec, f"spec.services.{svc}.")
        check_named_sidecar(
            (spec.get("extraPodSpec") or {}).get("containers") or [],
            remainders.get(svc, remainder.NONE).frontend_sidecar,
            f"spec.services.{svc}.",
        )
        mode = (meta.get("annotations") or {}).get(c.ANNOTATION_KUBE_DISCOVERY_MODE)
        if failover_enabled(spec) and mode != c.KUBE_DISCOVERY_MODE_CONTAINER:
            # CEL cannot read annotations, so this rule of upstream's webhook is checked here.
            raise GenerationError(
                f"metadata.annotations[{c.ANNOTATION_KUBE_DISCOVERY_MODE}]",
                f"spec.services.{svc}.failover needs per-container discovery: annotate the graph with "
                f"{c.ANNOTATION_KUBE_DISCOVERY_MODE}: {c.KUBE_DISCOVERY_MODE_CONTAINER}",
            )
        # Last, after the checks naming a quantity's meaning (a GPU count): its form only.
        check_quantities(pod, f"spec.services.{svc}.")


def desired_side_objects(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """Per-graph ConfigMaps / InferencePools some components need (multinode, epp), read from the
    graph as stored (components.py)."""
    stored = raised(dgd)
    components = components_of(stored)
    out: list[Obj] = []
    if any(x.get("multinode") is not None for x in components):
        out.append(desired_wait_leader_config_map(stored, ctx))
    for component in components:
        if component.get("type") == c.COMPONENT_EPP:
            out += desired_epp_objects(stored, component, ctx)
    return [stamp_hash(o) for o in out]


def desired_graph_objects(
    dgd: Graph,
    ctx: GenContext,
    *,
    stored: StoredGraph | None = None,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str | None = None,
) -> list[Obj]:
    """Everything the graph reconciler owns directly, in apply order (`worker_hash`: the graph's,
    when the caller has computed it already; else the one the reconciler names a new graph's
    workers with, workernames.py). `stored`: the same graph as stored, which the graph-level
    objects are read from (None: `dgd` raised to it, components.py)."""
    # Validated before hashing: v2 generates every worker DCD and fails on a bad value without
    # naming its field; validation names it. Either hash makes names of the same length.
    validate_graph(dgd, ctx, worker_hash=worker_hash)
    check_component_pathway(dgd, ctx)  # this is the component pathway: Grove-only fields have no place
    if not worker_hash:
        worker_hash = first_worker_generation(dgd, str(_meta(dgd).get("namespace") or ctx.namespace)).active
    generated = _generated_dcds(dgd, ctx, restart_at=restart_at, worker_hash=worker_hash)
    check_workloads([made for made, _ in generated], ctx)
    dcds = [written for _, written in generated]
    as_stored = stored if stored is not None else raised(dgd)
    objects = [
        *desired_pvcs(dgd, ctx),
        *desired_discovery_rbac(dgd, ctx),
        *desired_side_objects(as_stored, ctx),
        *desired_model_services(as_stored, ctx),
        *dcds,
        *desired_scaling_adapters(as_stored, ctx),
    ]
    check_distinct_objects(objects)
    return objects


# Workload checks that passed, by a digest of the DCD checked, with the context each passed in. The
# reconciler generates a graph again whenever one of its inputs changes, and most such changes
# leave most DCDs as they were: a rollout step (replicas are set after generation), a restart step
# (one component's restart id), a scale of one component. Generating every workload again to check
# it was about 60 % of the graph's generation, and cannot answer differently: the check is pure.
# Only passes are kept (a refusal is found again each time). 4,096 cover the graphs being worked on.
_PASSED: collections.OrderedDict[bytes, GenContext] = collections.OrderedDict()
PASSED_SIZE = 4096


def check_workloads(dcds: Sequence[Obj], ctx: GenContext) -> None:
    """Generate each DCD's workload as its reconciler will, and let the first spec error refuse the
    graph. A graph is written whole or not at all: found by a DCD's reconciler instead, the error
    would come once the graph's other components were written and running. An API the cluster does
    not serve is not an error here: `missing_apis` reports those, for the whole graph. A DCD that
    passed in an equal context before is not generated again (`_PASSED`).

    `dcds` are the v1alpha1 forms generation made: the stored form the reconciler reads is lowered
    back to them (test_stored_dcd pins that a pod does not depend on the form), so converting each
    written DCD back here would only repeat that work."""
    for dcd in dcds:
        key = bytes.fromhex(digest(dcd))
        if _PASSED.get(key) == ctx:
            _PASSED.move_to_end(key)
            continue
        service = str(dcd["metadata"]["labels"][c.LABEL_COMPONENT])
        with for_service(service), contextlib.suppress(MissingAPIError):
            desired_component_objects(component_view(dcd), ctx)
        _PASSED[key] = ctx
        if len(_PASSED) > PASSED_SIZE:
            _PASSED.popitem(last=False)


def check_distinct_objects(objects: Sequence[Obj]) -> None:
    """Raise NameCollisionError when two generated objects share kind and name: the CRD's rules
    should make that impossible, and writing both would make them overwrite each other forever."""
    seen: set[tuple[str, str]] = set()
    duplicates: list[str] = []
    for obj in objects:
        key = (str(obj.get("kind")), str(obj["metadata"]["name"]))
        if key in seen:
            duplicates.append(f"{key[0]} {key[1]}")
        seen.add(key)
    if duplicates:
        raise NameCollisionError(
            "spec.services", [], f"the graph would generate {', '.join(sorted(set(duplicates)))} twice"
        )


def missing_apis(dgd: Graph, ctx: GenContext, *, grove: bool = False) -> list[MissingAPIError]:
    """Optional APIs the graph's services need but the cluster does not serve, one error per service
    (the reconciler reports them as a Failed condition, e.g. reason NoOrchestratorAvailable).
    `grove`: the graph takes the Grove pathway, whose scaling groups run multinode services.

    gpuMemoryService without DRA fails the whole graph on both pathways: upstream 2a6da14c creates
    no workload for such a graph (df888f68 let the other services run and only that DCD wait)."""
    caps = ctx.capabilities
    out: list[MissingAPIError] = []
    for svc, spec in services_of(dgd).items():
        field = f"spec.services.{svc}"
        if gms_enabled(spec) and not caps.dra:
            out.append(missing_dra(f"{field}.gpuMemoryService.enabled"))
        out.extend(
            MissingAPIError(f"{field}.{need.field}", need.api, need.text())
            for need in NEEDS
            if need.uses(spec, grove) and not need.capability(caps)
        )
    return out


def desired_planner_rbac(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """The namespace's planner ServiceAccount (+ RoleBinding to the configured ClusterRole) when the
    graph has a planner. Shared by every graph of the namespace, so it carries no ownerReference and
    is not part of `desired_graph_objects`: apply it create-if-absent, never prune it."""
    if not has_component_of_type(raised(dgd), c.COMPONENT_PLANNER):
        return []
    return namespace_service_account(ctx.planner_service_account, ctx.planner_cluster_role, ctx)


def desired_epp_rbac(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """The namespace's EPP ServiceAccount (every EPP pod runs as it) and, with `--epp-cluster-role-name`,
    its RoleBinding to that ClusterRole (the endpoint picker watches pods and InferencePools) when the
    graph has an epp service. Shared like the planner's (see `desired_planner_rbac`)."""
    if not has_component_of_type(raised(dgd), c.COMPONENT_EPP):
        return []
    return namespace_service_account(c.EPP_SERVICE_ACCOUNT_NAME, ctx.epp_cluster_role, ctx)


def desired_shared_objects(dgd: Graph | StoredGraph, ctx: GenContext) -> list[Obj]:
    """Everything the graph needs that is shared with the other graphs of its namespace: the planner
    and EPP ServiceAccounts with their bindings (create-if-absent, never owned, never pruned)."""
    stored = raised(dgd)
    return [*desired_planner_rbac(stored, ctx), *desired_epp_rbac(stored, ctx)]


def namespace_service_account(name: str, cluster_role: str, ctx: GenContext) -> list[Obj]:
    """A ServiceAccount of the namespace and, when `cluster_role` is set, the RoleBinding
    `<name>-binding` granting it that ClusterRole there ("" binds nothing)."""
    labels = {
        c.LABEL_APP_MANAGED_BY: c.MANAGED_BY_VALUE,
        c.LABEL_APP_COMPONENT: "rbac",
        c.LABEL_APP_NAME: naming.label_value(name),
    }
    out = [envelope("v1", "ServiceAccount", name, ctx.namespace, labels=labels)]
    if cluster_role:
        binding = envelope(
            "rbac.authorization.k8s.io/v1", "RoleBinding", f"{name}-binding", ctx.namespace, labels=labels
        )
        binding["roleRef"] = {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": cluster_role,
        }
        binding["subjects"] = [{"kind": "ServiceAccount", "name": name, "namespace": ctx.namespace}]
        out.append(binding)
    return [stamp_hash(o) for o in out]
