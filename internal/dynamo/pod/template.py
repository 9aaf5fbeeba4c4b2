"""DCD → pod template. The merge order is fixed and written down once (see `build_pod_template`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.v1alpha1.enums import BackendFramework
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import (
    DcdSpec,
    ServiceSpec,
    StoredComponent,
    StoredDcdSpec,
    editable_copy,
)
from dynamo_operator.internal.dynamo.common.remainder import MOUNT_DETAILS, NONE, Remainder
from dynamo_operator.internal.dynamo.component.backends import (
    Addressing,
    MultinodeInfo,
    PodExtras,
    Role,
    apply_multinode,
    compilation_cache_env,
    default_cache_mount_point,
    detect_backend,
    multinode_pod_volumes,
)
from dynamo_operator.internal.dynamo.component.failover import apply_failover, failover_enabled
from dynamo_operator.internal.dynamo.component.frontend_sidecar import (
    CONTAINER_NAME as CONTAINER_NAME_SIDECAR,
)
from dynamo_operator.internal.dynamo.component.frontend_sidecar import (
    build_frontend_sidecar,
    check_named_sidecar,
    complete_named_sidecar,
)
from dynamo_operator.internal.dynamo.component.gpu_memory_service import (
    apply_gpu_memory_service,
    claim_template_name,
    gms_enabled,
)
from dynamo_operator.internal.dynamo.graph.sideobjects import wait_leader_config_map_name
from dynamo_operator.internal.dynamo.pod import api_rules
from dynamo_operator.internal.dynamo.pod.defaults import ENV_DYN_FORWARDPASS_METRIC_PORT, component_defaults
from dynamo_operator.internal.dynamo.pod.era import before_upstream_1_2
from dynamo_operator.internal.dynamo.pod.merge import (
    dedupe_by_name,
    env,
    field_env,
    merge_env,
    override,
)
from dynamo_operator.internal.dynamo.pod.resources import apply_resources, check_quantity, gpu_count
from dynamo_operator.internal.dynamo.pod.user_pod import UserPod, alpha_user_pod
from dynamo_operator.internal.jsontree import copy_tree
from dynamo_operator.internal.secrets.registry import InvalidRegistryError, image_registry_host

# Annotations that steer the operator. They are not copied onto pods: their effect on the pod (if
# any) is already explicit, and e.g. retuning the rollout budget must not itself roll the pods.
# Worker sub-types that upstream's v1beta1 knows as component types (`type: prefill|decode`).
DISAGGREGATED_ROLES = ("prefill", "decode")

_CONTROL_ANNOTATIONS = frozenset(
    {
        c.ANNOTATION_LAST_APPLIED_HASH,
        c.ANNOTATION_POD_TEMPLATE_HASH,
        c.ANNOTATION_DEPLOYMENT_STRATEGY,
        c.ANNOTATION_MAX_SURGE,
        c.ANNOTATION_MAX_UNAVAILABLE,
        c.ANNOTATION_ENABLE_GROVE,
        c.ANNOTATION_CURRENT_WORKER_HASH,
        c.ANNOTATION_KAI_SCHEDULER_QUEUE,
        *c.PROPAGATED_DGD_ANNOTATIONS,
    }
)
CONTROL_ANNOTATIONS = _CONTROL_ANNOTATIONS  # the same rule for routes (route_annotations.py)


@dataclass(frozen=True, slots=True)
class Component:
    """A DCD as generation sees it: identity plus its spec in JSON (camelCase) form."""

    name: str
    namespace: str
    parent_dgd: str
    spec: DcdSpec
    # What its v1beta1 form says that `spec` cannot (common/remainder.py).
    beta: Remainder = NONE
    # A graph's DCD, read by `component_of`: `annotations` holds the pod template's too.
    metadata_merged: bool = False
    # What its user wrote of its pods (user_pod.py); read from `spec` (v1alpha1) when not given.
    given_pod: UserPod | None = None

    def __post_init__(self) -> None:
        if self.given_pod is None:
            object.__setattr__(
                self, "given_pod", alpha_user_pod(self.spec, named_sidecar=self.beta.frontend_sidecar)
            )

    @property
    def pod(self) -> UserPod:
        """What the component's user wrote of its pods."""
        assert self.given_pod is not None  # filled in by __post_init__
        return self.given_pod

    @property
    def component_type(self) -> str:
        return str(self.spec.get("componentType") or "")

    @property
    def role_type(self) -> str:
        """The type pods and Services are labelled with and `DYN_COMPONENT` names: a worker's
        `prefill`/`decode` sub-type when it has one. v1beta1 made these component types of their
        own, and upstream 2a6da14c labels v1alpha1 workers carrying them the same way; a graph
        upstream 1.0/1.1 deployed keeps `worker` (era.py)."""
        sub = str(self.spec.get("subComponentType") or "")
        if self.component_type == c.COMPONENT_WORKER and sub in DISAGGREGATED_ROLES:
            return self.component_type if before_upstream_1_2(self.annotations) else sub
        return self.component_type

    @property
    def service_name(self) -> str:
        return str(self.spec.get("serviceName") or self.name)

    @property
    def annotations(self) -> dict[str, str]:
        return dict(self.spec.get("annotations") or {})

    @property
    def labels(self) -> dict[str, str]:
        return dict(self.spec.get("labels") or {})

    @property
    def is_multinode(self) -> bool:
        return multinode_node_count(self.spec) > 1

    @property
    def replicas(self) -> int:
        value = self.spec.get("replicas")
        return c.DEFAULT_REPLICAS if value is None else int(value)


def multinode_node_count(spec: ServiceSpec | DcdSpec | StoredDcdSpec | StoredComponent) -> int:
    """Nodes per replica: `multinode.nodeCount` (default 2) when the block is present, else 1. The
    block reads the same as stored (v1beta1), in a DCD or a graph's component."""
    multinode = spec.get("multinode")
    if multinode is None:
        return 1
    return int(multinode.get("nodeCount") or c.DEFAULT_NODE_COUNT)


def dynamo_namespace_of(comp: Component) -> str:
    """The component's Dynamo namespace: global, from the parent graph, or the DCD's own setting."""
    if comp.spec.get("globalDynamoNamespace"):
        return c.GLOBAL_DYNAMO_NAMESPACE
    if comp.parent_dgd:
        return naming.dynamo_namespace(comp.namespace, comp.parent_dgd)
    return str(comp.spec.get("dynamoNamespace") or naming.dynamo_namespace(comp.namespace, comp.name))


def discovery_backend(comp: Component, ctx: GenContext) -> str:
    """`kubernetes` unless the component (or operator) asks for `etcd`."""
    return discovery_backend_of(comp.annotations, ctx)


def discovery_backend_of(annotations: Mapping[str, str], ctx: GenContext) -> str:
    """`discovery_backend` of a component whose annotations (as its DCD carries them) these are."""
    chosen = annotations.get(c.ANNOTATION_DISCOVERY_BACKEND) or ctx.discovery_backend
    return c.DISCOVERY_BACKEND_ETCD if chosen == c.DISCOVERY_BACKEND_ETCD else c.DISCOVERY_BACKEND_KUBERNETES


def kube_discovery_enabled(comp: Component, ctx: GenContext) -> bool:
    """Whether pods discover each other through the Kubernetes API (needs a Service and an SA)."""
    return discovery_backend(comp, ctx) == c.DISCOVERY_BACKEND_KUBERNETES


def worker_hash_of(comp: Component) -> str | None:
    """The worker hash a worker component's DCD is labelled with (graph-generated DCDs only)."""
    if comp.component_type not in c.WORKER_COMPONENT_TYPES:
        return None
    value = comp.labels.get(c.LABEL_WORKER_HASH)
    return str(value) if value else None


def pod_labels(comp: Component, ctx: GenContext) -> dict[str, str]:
    """Labels every pod of the component carries; operator-owned keys cannot be overridden."""
    spec = comp.spec
    labels = comp.labels
    if comp.annotations.get(c.ANNOTATION_ENABLE_METRICS) != c.LABEL_VALUE_FALSE:
        labels[c.LABEL_METRICS_ENABLED] = c.LABEL_VALUE_TRUE
    if kube_discovery_enabled(comp, ctx):
        labels[c.LABEL_DISCOVERY_BACKEND] = c.DISCOVERY_BACKEND_KUBERNETES
        labels[c.LABEL_DISCOVERY_ENABLED] = c.LABEL_VALUE_TRUE
    labels.update(comp.pod.labels)
    # Re-asserted last: selectors of the Deployment and Services depend on these.
    labels[c.LABEL_SELECTOR] = comp.name
    labels[c.LABEL_COMPONENT] = comp.service_name
    labels[c.LABEL_DYNAMO_NAMESPACE] = naming.label_value(dynamo_namespace_of(comp))
    if comp.parent_dgd:
        labels[c.LABEL_GRAPH_DEPLOYMENT_NAME] = comp.parent_dgd
    if comp.role_type:
        labels[c.LABEL_COMPONENT_TYPE] = comp.role_type
    if spec.get("subComponentType"):
        labels[c.LABEL_SUB_COMPONENT_TYPE] = str(spec["subComponentType"])
    if comp.labels.get(c.LABEL_WORKER_HASH):
        labels[c.LABEL_WORKER_HASH] = comp.labels[c.LABEL_WORKER_HASH]
    model = spec.get("modelRef", {})
    if model.get("name"):
        labels[c.LABEL_BASE_MODEL_HASH] = naming.base_model_hash(str(model["name"]))
    return labels


def pod_annotations(comp: Component) -> dict[str, str]:
    """Component annotations (incl. restartAt) then extraPodMetadata annotations (which win). Never
    the origin version, from either: it describes the graph, and upstream drops it from pods after
    the merge (a v1beta1 DCD carries it in its pod template metadata, i.e. extraPodMetadata here)."""
    out = {k: v for k, v in comp.annotations.items() if k not in _CONTROL_ANNOTATIONS}
    if not comp.metadata_merged:
        # (A graph's DCD has them in `annotations` already, and the operator's control keys a graph
        # propagates sit in its pod template when it is stored as v1beta1: they stay off pods.)
        out.update(comp.pod.annotations)
    out.pop(c.ANNOTATION_ORIGIN_VERSION, None)
    return out


def _base_env(
    comp: Component, ctx: GenContext, dyn_ns: str, *, container_name: str = c.MAIN_CONTAINER_NAME
) -> list[dict[str, Any]]:
    out = [
        env(c.ENV_DYN_NAMESPACE, dyn_ns),
        env(c.ENV_DYN_COMPONENT, comp.role_type),
        env(c.ENV_DYN_PARENT_DGD_NAME, comp.parent_dgd),
        env(c.ENV_DYN_PARENT_DGD_NAMESPACE, comp.namespace),
        field_env(c.ENV_POD_NAME, "metadata.name"),
        field_env(c.ENV_POD_NAMESPACE, "metadata.namespace"),
        field_env(c.ENV_POD_UID, "metadata.uid"),
        env(c.ENV_DYN_DISCOVERY_BACKEND, discovery_backend(comp, ctx)),
    ]
    if comp.annotations.get(c.ANNOTATION_KUBE_DISCOVERY_MODE) == c.KUBE_DISCOVERY_MODE_CONTAINER:
        out += [
            env(c.ENV_CONTAINER_NAME, container_name),
            env(c.ENV_DYN_KUBE_DISCOVERY_MODE, c.KUBE_DISCOVERY_MODE_CONTAINER),
        ]
    suffix = worker_hash_of(comp)
    if suffix:
        # Workers of one hash register under their own suffix, so old and new workers of a rollout
        # are told apart by the frontend.
        out.append(env(c.ENV_DYN_NAMESPACE_WORKER_SUFFIX, suffix))
    return out


def _pvc_mounts(
    comp: Component, backend: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
    """(volumes, mounts, compilation cache mount point) for the component's claim mounts."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    cache: str | None = None
    for i, vm in enumerate(comp.pod.mounts):
        name = vm.name
        if not name:
            raise GenerationError(f"volumeMounts[{i}].name", "required")
        # Named, not numbered: the two versions list the compilation cache in different places.
        field = f"volumeMounts[name={name}]"
        mount_point = vm.mount_path
        # The mount's name is the name of the pod's volume for the claim.
        api_rules.check_dns_label(
            name, "compilationCache.pvcName" if vm.compilation_cache else field, "volume"
        )
        if vm.compilation_cache:
            mount_point = mount_point or default_cache_mount_point(backend)
            if not mount_point:
                raise GenerationError(
                    f"{field}.mountPoint",
                    f"required: backend {backend or 'none'!r} has no default cache path",
                )
            cache = cache or mount_point
        elif not mount_point:
            raise GenerationError(f"{field}.mountPoint", "required")
        if all(v["name"] != name for v in volumes):
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
        mount: dict[str, Any] = {"name": name, "mountPath": mount_point}
        details = vm.details or {}
        mount.update((k, details[k]) for k in MOUNT_DETAILS if k in details)  # type: ignore[literal-required]
        mounts.append(mount)
    return volumes, mounts, cache


def _epp_volumes(comp: Component) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    volumes: list[dict[str, Any]]
    mounts: list[dict[str, Any]]
    ref = (comp.spec.get("eppConfig") or {}).get("configMapRef") or {}
    cm_name = ref.get("name") or f"{comp.parent_dgd or comp.name}-epp-config"
    key = ref.get("key") or "epp-config-dynamo.yaml"
    volumes = [
        {
            "name": "epp-config",
            "configMap": {"name": cm_name, "items": [{"key": key, "path": "epp-config-dynamo.yaml"}]},
        },
        {"name": "hf-cache", "emptyDir": {}},
    ]
    mounts = [
        {"name": "epp-config", "mountPath": "/etc/epp", "readOnly": True},
        {"name": "hf-cache", "mountPath": "/home/nonroot/.cache"},
    ]
    return volumes, mounts


def _union_by_name(low: list[dict[str, Any]], high: list[dict[str, Any]]) -> list[dict[str, Any]]:
    names = {v.get("name") for v in high}
    return [*high, *[v for v in low if v.get("name") not in names]]


def _shared_memory(pod: UserPod) -> dict[str, Any] | None:
    if pod.shared_memory_disabled:
        return None
    size = check_quantity(pod.shared_memory_size or c.DEFAULT_SHARED_MEMORY_SIZE, "sharedMemory.size")
    if size.startswith("-"):
        # The API server refuses a negative emptyDir limit, once the graph's other parts are written.
        raise GenerationError("sharedMemory.size", f"{size!r} must not be negative")
    return {"name": c.SHARED_MEMORY_VOLUME_NAME, "emptyDir": {"medium": "Memory", "sizeLimit": size}}


def image_pull_secrets(
    user: list[dict[str, Any]], image: str | None, comp: Component, ctx: GenContext
) -> list[dict[str, Any]]:
    """User pull secrets first (deduped, in their order), then discovered ones for the image's registry."""
    out = dedupe_by_name(user)
    if not image or comp.annotations.get(c.ANNOTATION_DISABLE_IMAGE_PULL_SECRET_DISCOVERY) == "true":
        return out
    try:
        host = image_registry_host(image)
    except InvalidRegistryError:
        return out
    known = {s["name"] for s in out}
    out += [{"name": name} for name in sorted(ctx.docker_secrets.get(host, ())) if name not in known]
    return out


def build_main_container(
    comp: Component,
    ctx: GenContext,
    *,
    role: Role = Role.MAIN,
    backend: str | None = None,
    addressing: Addressing | None = None,
) -> tuple[dict[str, Any], PodExtras]:
    """The `main` container after every layer (steps 1-9 of `build_pod_template`), and the pod-level
    additions its backend rewrite needs. `addressing`: how multinode pods find each other (None: a
    LeaderWorkerSet group)."""
    spec = comp.spec
    dyn_ns = dynamo_namespace_of(comp)
    defaults = component_defaults(
        comp.component_type,
        dyn_ns=dyn_ns,
        dgd_name=comp.parent_dgd or comp.name,
        namespace=comp.namespace,
        planner_service_account=ctx.planner_service_account,
    )
    # 1. defaults
    container: dict[str, Any] = {"name": c.MAIN_CONTAINER_NAME}
    if comp.component_type != c.COMPONENT_EPP:
        container["command"] = defaults.command or ["/bin/sh", "-c"]
    if defaults.args:
        container["args"] = list(defaults.args)
    if defaults.ports:
        container["ports"] = copy_tree(defaults.ports)
    container.update(copy_tree(defaults.probes))
    default_env = defaults.env
    if before_upstream_1_2(comp.annotations):  # pods as upstream 1.0/1.1 made them (era.py)
        default_env = [e for e in default_env if e.get("name") != ENV_DYN_FORWARDPASS_METRIC_PORT]
    base_env = merge_env(_base_env(comp, ctx, dyn_ns), default_env)
    # 2. mainContainer layered over the defaults; its env is unioned (user wins); startupProbe replaces.
    pod = comp.pod
    user = editable_copy(pod.main)
    user_env = user.pop("env", None) or []
    user_startup = user.pop("startupProbe", None)
    container = override(container, user)
    container["name"] = c.MAIN_CONTAINER_NAME
    if user_startup is not None:
        container["startupProbe"] = copy_tree(user_startup)
    env_list = merge_env(base_env, user_env)
    # 3. component envs (in a graph these already hold spec.envs underneath the service's own)
    env_list = merge_env(env_list, pod.env)
    # 4. top-level probes replace whatever came before, whole
    for probe, value in pod.probes.items():
        container[probe] = copy_tree(value)
    # 5. resources, 6. envFromSecret
    apply_resources(container, pod)
    if pod.env_from_secret:
        env_from = list(container.get("envFrom") or [])
        env_from.append({"secretRef": {"name": pod.env_from_secret}})
        container["envFrom"] = env_from
    # 7. infrastructure env at the lowest priority
    infra = [env(k, v) for k, v in sorted(ctx.infrastructure_env.items()) if v]
    env_list = merge_env(infra, env_list)
    # 8. PVC mounts, compilation cache
    resolved_backend = (
        backend
        if backend is not None
        else detect_backend(comp.component_type, spec.get("backendFramework"), container)
    )
    cache_backend = resolved_backend or str(spec.get("backendFramework") or "")
    _, pvc_mounts, cache_mount = _pvc_mounts(comp, cache_backend)
    env_list = merge_env(compilation_cache_env(cache_backend, cache_mount), env_list)
    if comp.component_type == c.COMPONENT_EPP:
        pvc_mounts = _epp_volumes(comp)[1] + pvc_mounts
    if pvc_mounts:
        container["volumeMounts"] = _union_by_name(pvc_mounts, list(container.get("volumeMounts") or []))
    if container.get("volumeMounts"):
        container["volumeMounts"] = comp.beta.with_mount_details(container["volumeMounts"])
    container["env"] = env_list
    # 9. backend rewrites for multinode roles
    extras = PodExtras()
    if role is not Role.MAIN:
        info = MultinodeInfo(
            node_count=multinode_node_count(spec),
            gpus_per_node=gpu_count(pod, prefer_requests=resolved_backend == BackendFramework.TRTLLM),
            wait_leader_config_map=wait_leader_config_map_name(comp.parent_dgd or comp.name),
            addressing=addressing,
        )
        extras = apply_multinode(
            container, backend=resolved_backend, role=role, info=info, annotations=comp.annotations
        )
    return container, extras


def build_pod_template(
    comp: Component, ctx: GenContext, *, role: Role = Role.MAIN, addressing: Addressing | None = None
) -> dict[str, Any]:
    """The pod template of one role of a component (`addressing`: see `build_main_container`).

    Order (later wins): component defaults → extraPodSpec.mainContainer → env (defaults, then main
    container env, then component envs) → top-level probes → resources → envFromSecret → infra env (lowest)
    → PVC mounts → backend rewrites (`build_main_container`) → base pod spec → extraPodSpec → fsGroup
    1000 unless the user gave a securityContext → service account (`_pod_spec`) → volumes, shared
    memory (`_pod_volumes`), containers (main first), image pull secrets → frontend sidecar → GPU
    Memory Service → failover engines (`_apply_addons`).
    """
    spec = comp.spec
    container, extras = build_main_container(comp, ctx, role=role, addressing=addressing)
    main_mounts = copy_tree(container.get("volumeMounts") or [])  # before shared memory joins them
    if not container.get("image"):
        raise GenerationError(
            "extraPodSpec.mainContainer.image", "required: the operator sets no default image"
        )
    backend = detect_backend(comp.component_type, spec.get("backendFramework"), container)
    extra = editable_copy(comp.pod.spec)
    # The lists extraPodSpec merges by name or appends, rather than replacing what is generated.
    user_volumes = extra.pop("volumes", None) or []
    for volume in user_volumes:
        api_rules.check_dns_label(
            volume.get("name"), f"extraPodSpec.volumes[name={volume.get('name')}].name", "volume"
        )
    user_containers = extra.pop("containers", None) or []
    user_pull_secrets = extra.pop("imagePullSecrets", None) or []
    extra_init = extra.pop("initContainers", None) or []
    pod = _pod_spec(comp, ctx, extra)
    volumes = _pod_volumes(comp, ctx, container, role=role, backend=backend, extras=extras, user=user_volumes)
    if volumes:
        pod["volumes"] = volumes
    init_containers = [*extras.init_containers, *(extra_init or [])]
    if init_containers:
        pod["initContainers"] = init_containers
    # main is always containers[0]: backends and tools address it by position.
    pod["containers"] = [container, *[x for x in user_containers if x.get("name") != c.MAIN_CONTAINER_NAME]]
    pulls = image_pull_secrets(list(user_pull_secrets), container.get("image"), comp, ctx)
    if pulls:
        pod["imagePullSecrets"] = pulls
    user_fields = _user_container_fields(user_containers, extra_init)
    _check_containers(
        comp, container, user_containers=[*user_containers, *extra_init], user_fields=user_fields
    )
    _apply_addons(pod, comp, ctx, backend=backend, main_mounts=main_mounts)
    # After the add-ons: a user's container may mount a volume one of them declares (GMS's socket),
    # and the frontend sidecar a v1beta1 component names is the user's probes over the frontend's.
    user_built = [
        x for x in [*pod["containers"], *pod.get("initContainers", [])] if x.get("name") in user_fields
    ]
    api_rules.check_volume_mounts(
        user_built, (str(v.get("name")) for v in pod.get("volumes") or ()), user_fields
    )
    for built in user_built:
        if built.get("name") == comp.pod.named_sidecar:
            for probe in api_rules.PROBES:
                api_rules.check_probe(built.get(probe), f"{user_fields[str(built['name'])]}.{probe}")
    return {"metadata": {"labels": pod_labels(comp, ctx), "annotations": pod_annotations(comp)}, "spec": pod}


def _user_container_fields(
    user_containers: Sequence[Mapping[str, object]], user_init: Sequence[Mapping[str, object]]
) -> dict[str, str]:
    """The field each container the user wrote beside `main` came from, by its name."""
    fields = {str(x.get("name")): f"extraPodSpec.initContainers[name={x.get('name')}]" for x in user_init}
    fields.update(
        (str(x.get("name")), f"extraPodSpec.containers[name={x.get('name')}]")
        for x in user_containers
        if x.get("name") != c.MAIN_CONTAINER_NAME
    )
    return fields


def _check_containers(
    comp: Component,
    main: Mapping[str, object],
    *,
    user_containers: Sequence[Mapping[str, object]],
    user_fields: Mapping[str, str],
) -> None:
    """The API server's rules for probes and environment variables (api_rules.py), on the main
    container as built and on the containers the user wrote beside it (`user_containers`, a name
    given twice read as its first), naming the user's field (`user_fields`, by container name)."""
    pod = comp.pod
    for probe in api_rules.PROBES:
        flat = probe in pod.probes
        api_rules.check_probe(
            main.get(probe), probe if flat else f"extraPodSpec.mainContainer.{probe}", replaces_default=flat
        )
    own = {str(e.get("name")): "envs" for e in pod.env}
    api_rules.check_env(main.get("env"), own, "extraPodSpec.mainContainer.env")
    flat_secret = {pod.env_from_secret: "envFromSecret"} if pod.env_from_secret else {}
    api_rules.check_env_from(main.get("envFrom"), flat_secret, "extraPodSpec.mainContainer.envFrom")
    by_name: dict[str, Mapping[str, object]] = {}
    for x in user_containers:
        by_name.setdefault(str(x.get("name")), x)
    for name, field in user_fields.items():
        container = by_name[name]
        api_rules.check_dns_label(name, f"{field}.name", "container")
        if name != comp.pod.named_sidecar:  # completed by the add-ons, checked once completed
            for probe in api_rules.PROBES:
                api_rules.check_probe(container.get(probe), f"{field}.{probe}")
        api_rules.check_env(container.get("env"), {}, f"{field}.env")
        api_rules.check_env_from(container.get("envFrom"), {}, f"{field}.envFrom")


def _pod_spec(comp: Component, ctx: GenContext, extra: Mapping[str, Any]) -> dict[str, Any]:
    """The pod spec before volumes and containers: grace period, restart policy and service account
    defaults, `extra` (extraPodSpec without its merged lists) over them, then fsGroup 1000 unless the
    user gave a securityContext, and the discovery ServiceAccount when nothing else named one."""
    defaults = component_defaults(
        comp.component_type,
        dyn_ns=dynamo_namespace_of(comp),
        dgd_name=comp.parent_dgd or comp.name,
        namespace=comp.namespace,
        planner_service_account=ctx.planner_service_account,
    )
    pod: dict[str, Any] = {
        "terminationGracePeriodSeconds": (
            c.EPP_TERMINATION_GRACE_PERIOD_SECONDS
            if comp.component_type == c.COMPONENT_EPP
            else c.DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS
        ),
        "restartPolicy": c.DEFAULT_RESTART_POLICY,
    }
    if defaults.service_account:
        pod["serviceAccountName"] = defaults.service_account
    pod = override(pod, extra)
    if extra.get("securityContext") is None:
        pod["securityContext"] = {"fsGroup": c.DEFAULT_FS_GROUP}
    if not pod.get("serviceAccountName") and kube_discovery_enabled(comp, ctx) and comp.parent_dgd:
        pod["serviceAccountName"] = naming.discovery_service_account(comp.parent_dgd)
    return pod


def _pod_volumes(
    comp: Component,
    ctx: GenContext,
    container: dict[str, Any],
    *,
    role: Role,
    backend: str,
    extras: PodExtras,
    user: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The pod's volumes: generated ones (PVCs, compilation cache, EPP config, multinode), then the
    user's (a user volume replaces a generated one of its name), then shared memory, whose mount it
    puts on `container` in place of any the user gave at that name or path."""
    spec = comp.spec
    cache_backend = backend or str(spec.get("backendFramework") or "")
    volumes, _, _ = _pvc_mounts(comp, cache_backend)
    if comp.component_type == c.COMPONENT_EPP:
        volumes = _epp_volumes(comp)[0] + volumes
    if role is not Role.MAIN:
        volumes += multinode_pod_volumes(backend, ctx.mpi_ssh_secret_name) + extras.volumes
    volumes = _union_by_name(volumes, [dict(v) for v in user])
    shm = _shared_memory(comp.pod)
    if shm is not None:
        volumes = [v for v in volumes if v.get("name") != c.SHARED_MEMORY_VOLUME_NAME] + [shm]
        mounts = [
            m
            for m in container.get("volumeMounts", [])
            if m.get("name") != c.SHARED_MEMORY_VOLUME_NAME
            and m.get("mountPath") != c.SHARED_MEMORY_MOUNT_PATH
        ]
        mounts.append({"name": c.SHARED_MEMORY_VOLUME_NAME, "mountPath": c.SHARED_MEMORY_MOUNT_PATH})
        container["volumeMounts"] = mounts
    return volumes


def claim_template_of(comp: Component) -> str:
    """The ResourceClaimTemplate a GMS component's pods claim from (`<graph>-<service>-gpu`)."""
    return claim_template_name(comp.parent_dgd or comp.name, comp.service_name)


def _apply_addons(
    pod: dict[str, Any],
    comp: Component,
    ctx: GenContext,
    *,
    backend: str,
    main_mounts: Sequence[Mapping[str, Any]] = (),
) -> None:
    """frontendSidecar, gpuMemoryService, failover, in that order (upstream's): the sidecar joins the
    pod before failover clones `containers[0]`, which GMS has already rewritten. `main_mounts`: the
    main container's mounts before shared memory, which a v1beta1-named sidecar shares."""
    spec = comp.spec
    sidecar = comp.pod.frontend_sidecar
    named = comp.pod.named_sidecar
    if sidecar is not None or named is not None:
        # The env a frontend service of this graph would get (no worker suffix: it is no worker).
        as_frontend = dataclasses.replace(comp, spec={**spec, "componentType": c.COMPONENT_FRONTEND})
        dyn_ns = dynamo_namespace_of(comp)
        component_env = _base_env(as_frontend, ctx, dyn_ns, container_name=named or CONTAINER_NAME_SIDECAR)
        if sidecar is not None:
            container = build_frontend_sidecar(
                sidecar, component_env=component_env, dyn_ns=dyn_ns, infrastructure_env=ctx.infrastructure_env
            )
            api_rules.check_env(container.get("env"), {}, "frontendSidecar.envs")
            secret = str(sidecar.get("envFromSecret") or "")
            api_rules.check_env_from(
                container.get("envFrom"), {secret: "frontendSidecar.envFromSecret"}, "frontendSidecar"
            )
            pod["containers"] = [*pod["containers"], container]
        else:
            # A DCD written alone was never checked as a graph.
            check_named_sidecar(comp.pod.containers, named, "")
            at = next(i for i, x in enumerate(pod["containers"]) if x.get("name") == named)
            container = complete_named_sidecar(
                pod["containers"][at],
                component_env=component_env,
                dyn_ns=dyn_ns,
                infrastructure_env=ctx.infrastructure_env,
                parent_mounts=main_mounts,
            )
            pod["containers"][at] = container
        pulls = image_pull_secrets(list(pod.get("imagePullSecrets") or []), container["image"], comp, ctx)
        if pulls:
            pod["imagePullSecrets"] = pulls
    if gms_enabled(spec):
        apply_gpu_memory_service(pod, claim_template=claim_template_of(comp))
    if failover_enabled(spec):
        apply_failover(pod, backend=backend, node_count=multinode_node_count(spec))
