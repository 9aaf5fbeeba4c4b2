"""Every label/annotation key, port, default value and env var name the operator uses, in one place.

Values match the upstream Dynamo operator (see shared/reference/dynamo-dgd-dcd.md §4.15) so objects
created by either operator select and label the same pods.
"""

from __future__ import annotations

from typing import Final

# --- API identity --------------------------------------------------------------------------------
GROUP: Final = "nvidia.com"
API_VERSION: Final = "nvidia.com/v1alpha1"
KIND_DGD: Final = "DynamoGraphDeployment"
KIND_DCD: Final = "DynamoComponentDeployment"
KIND_DGDSA: Final = "DynamoGraphDeploymentScalingAdapter"
KIND_DYNAMO_MODEL: Final = "DynamoModel"
KIND_DGDR: Final = "DynamoGraphDeploymentRequest"
# The storage version of the four kinds served in v1alpha1 and v1beta1. Owner references name it,
# as upstream's do: a reference names the kind as stored, whichever version the operator reads.
STORAGE_API_VERSION: Final = "nvidia.com/v1beta1"
CONVERTED_KINDS: Final = frozenset({KIND_DGD, KIND_DCD, KIND_DGDSA, KIND_DGDR})
LWS_API_VERSION: Final = "leaderworkerset.x-k8s.io/v1"
LWS_GROUP: Final = "leaderworkerset.x-k8s.io"
VOLCANO_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"
VOLCANO_GROUP: Final = "scheduling.volcano.sh"
ISTIO_API_VERSION: Final = "networking.istio.io/v1beta1"
ISTIO_GROUP: Final = "networking.istio.io"
GROVE_GROUP: Final = "grove.io"
GROVE_API_VERSION: Final = "grove.io/v1alpha1"
# Grove's label naming the PodClique a pod belongs to (operator/api/common/labels.go).
GROVE_LABEL_PODCLIQUE: Final = "grove.io/podclique"
KIND_POD_CLIQUE_SET: Final = "PodCliqueSet"
KIND_POD_CLIQUE: Final = "PodClique"
KIND_POD_CLIQUE_SCALING_GROUP: Final = "PodCliqueScalingGroup"
# Clique name suffixes of a multinode service's leader and worker roles (`<svc>-ldr`, `<svc>-wkr`).
GROVE_ROLE_SUFFIX_LEADER: Final = "ldr"
GROVE_ROLE_SUFFIX_WORKER: Final = "wkr"
# How long Grove lets a gang run below its minAvailable before it tears the gang down (upstream 15m).
DEFAULT_GROVE_TERMINATION_DELAY: Final = "15m0s"
GATEWAY_INFERENCE_GROUP: Final = "inference.networking.k8s.io"
FIELD_MANAGER: Final = "dynamo-operator"

# --- Ports ---------------------------------------------------------------------------------------
HTTP_PORT: Final = 8000
HTTP_PORT_NAME: Final = "http"
SYSTEM_PORT: Final = 9090
SYSTEM_PORT_NAME: Final = "system"
PLANNER_METRICS_PORT: Final = 9085
METRICS_PORT_NAME: Final = "metrics"
NIXL_PORT: Final = 19090
NIXL_PORT_NAME: Final = "nixl"
EPP_GRPC_PORT: Final = 9002
EPP_GRPC_PORT_NAME: Final = "grpc"
EPP_GRPC_HEALTH_PORT: Final = 9003
EPP_GRPC_HEALTH_PORT_NAME: Final = "grpc-health"
EPP_METRICS_PORT: Final = 9090
MPI_SSH_PORT: Final = 2222
VLLM_RAY_PORT: Final = 6379
VLLM_DP_RPC_PORT: Final = 13445
VLLM_MP_MASTER_PORT: Final = 29500
SGLANG_DIST_INIT_PORT: Final = 29500

# --- Component types -----------------------------------------------------------------------------
COMPONENT_FRONTEND: Final = "frontend"
COMPONENT_WORKER: Final = "worker"
COMPONENT_PREFILL: Final = "prefill"
COMPONENT_DECODE: Final = "decode"
COMPONENT_PLANNER: Final = "planner"
COMPONENT_EPP: Final = "epp"
COMPONENT_MAIN: Final = "main"
COMPONENT_DEFAULT: Final = "default"
WORKER_COMPONENT_TYPES: Final = frozenset({COMPONENT_WORKER, COMPONENT_PREFILL, COMPONENT_DECODE})

# --- Labels --------------------------------------------------------------------------------------
LABEL_SELECTOR: Final = "nvidia.com/selector"
LABEL_GRAPH_DEPLOYMENT_NAME: Final = "nvidia.com/dynamo-graph-deployment-name"
LABEL_COMPONENT: Final = "nvidia.com/dynamo-component"
LABEL_DYNAMO_NAMESPACE: Final = "nvidia.com/dynamo-namespace"
LABEL_COMPONENT_TYPE: Final = "nvidia.com/dynamo-component-type"
LABEL_SUB_COMPONENT_TYPE: Final = "nvidia.com/dynamo-sub-component-type"
LABEL_BASE_MODEL: Final = "nvidia.com/dynamo-base-model"
LABEL_BASE_MODEL_HASH: Final = "nvidia.com/dynamo-base-model-hash"
LABEL_DISCOVERY_BACKEND: Final = "nvidia.com/dynamo-discovery-backend"
LABEL_DISCOVERY_ENABLED: Final = "nvidia.com/dynamo-discovery-enabled"
LABEL_WORKER_HASH: Final = "nvidia.com/dynamo-worker-hash"
LABEL_COMPONENT_POD: Final = "nvidia.com/dynamo-component-pod"
LABEL_METRICS_ENABLED: Final = "nvidia.com/metrics-enabled"
LABEL_MANAGED_BY: Final = "nvidia.com/managed-by"
LABEL_APP_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
LABEL_APP_COMPONENT: Final = "app.kubernetes.io/component"
LABEL_APP_NAME: Final = "app.kubernetes.io/name"
LABEL_ROLE: Final = "role"
LABEL_INSTANCE_ID: Final = "instance-id"
LABEL_VALUE_TRUE: Final = "true"
LABEL_VALUE_FALSE: Final = "false"
MANAGED_BY_VALUE: Final = "dynamo-operator"

# --- Annotations ---------------------------------------------------------------------------------
ANNOTATION_ENABLE_GROVE: Final = "nvidia.com/enable-grove"
# The pathway a graph runs on, recorded by the operator (upstream's values): `grove` or `component`.
ANNOTATION_WORKLOAD_PROVIDER: Final = "nvidia.com/workload-provider"
WORKLOAD_PROVIDER_GROVE: Final = "grove"
WORKLOAD_PROVIDER_COMPONENT: Final = "component"
# How Grove replaces a PodCliqueSet's pods after a change (upstream's annotation and values).
ANNOTATION_GROVE_UPDATE_STRATEGY: Final = "nvidia.com/grove-update-strategy"
GROVE_UPDATE_STRATEGIES: Final = ("RollingRecreate", "OnDelete")
ANNOTATION_DISABLE_IMAGE_PULL_SECRET_DISCOVERY: Final = "nvidia.com/disable-image-pull-secret-discovery"
ANNOTATION_DISCOVERY_BACKEND: Final = "nvidia.com/dynamo-discovery-backend"
ANNOTATION_KUBE_DISCOVERY_MODE: Final = "nvidia.com/dynamo-kube-discovery-mode"
ANNOTATION_BASE_MODEL: Final = "nvidia.com/dynamo-base-model"
ANNOTATION_ORIGIN_VERSION: Final = "nvidia.com/dynamo-operator-origin-version"
ANNOTATION_VLLM_EXECUTOR_BACKEND: Final = "nvidia.com/vllm-distributed-executor-backend"
ANNOTATION_ENABLE_METRICS: Final = "nvidia.com/enable-metrics"
ANNOTATION_KAI_SCHEDULER_QUEUE: Final = "nvidia.com/kai-scheduler-queue"
ANNOTATION_RESTART_AT: Final = "nvidia.com/restartAt"
# On a DCD: the restart id its controller has acted on. v1beta1 stores a DCD's restart id outside
# its spec, so stamping one bumps no generation; the graph waits for this instead.
ANNOTATION_RESTART_OBSERVED: Final = "nvidia.com/restart-observed"
ANNOTATION_CURRENT_WORKER_HASH: Final = "nvidia.com/current-worker-hash"
ANNOTATION_DEPLOYMENT_STRATEGY: Final = "nvidia.com/deployment-strategy"
ANNOTATION_MAX_SURGE: Final = "nvidia.com/deployment-rolling-update-max-surge"
ANNOTATION_MAX_UNAVAILABLE: Final = "nvidia.com/deployment-rolling-update-max-unavailable"
# Content hash of the desired object (everything we send, minus this annotation), see dynamo/hashing.py.
ANNOTATION_LAST_APPLIED_HASH: Final = "nvidia.com/last-applied-hash"
# Hash of the pod template alone: differs between two desired workloads iff their pods would roll.
ANNOTATION_POD_TEMPLATE_HASH: Final = "nvidia.com/pod-template-hash"
ANNOTATION_VOLCANO_GROUP_NAME: Final = "scheduling.k8s.io/group-name"
# The graph's Volcano queue (upstream's annotation), and where Grove's Volcano backend reads it.
ANNOTATION_VOLCANO_QUEUE: Final = "nvidia.com/volcano-queue"
ANNOTATION_GROVE_VOLCANO_QUEUE: Final = "scheduling.grove.io/volcano-queue"
LABEL_SNAPSHOT_RESTORE_TARGET: Final = "nvidia.com/snapshot-is-restore-target"

# Keys of DGD metadata.annotations copied into every service's annotations (service value wins).
PROPAGATED_DGD_ANNOTATIONS: Final = (
    ANNOTATION_ENABLE_METRICS,
    ANNOTATION_DISCOVERY_BACKEND,
    ANNOTATION_KUBE_DISCOVERY_MODE,
    ANNOTATION_ORIGIN_VERSION,
    ANNOTATION_VLLM_EXECUTOR_BACKEND,
    ANNOTATION_DISABLE_IMAGE_PULL_SECRET_DISCOVERY,
)

# --- Env var names -------------------------------------------------------------------------------
ENV_DYN_NAMESPACE: Final = "DYN_NAMESPACE"
ENV_DYN_NAMESPACE_PREFIX: Final = "DYN_NAMESPACE_PREFIX"
ENV_DYN_NAMESPACE_WORKER_SUFFIX: Final = "DYN_NAMESPACE_WORKER_SUFFIX"
ENV_DYN_COMPONENT: Final = "DYN_COMPONENT"
ENV_DYN_PARENT_DGD_NAME: Final = "DYN_PARENT_DGD_K8S_NAME"
ENV_DYN_PARENT_DGD_NAMESPACE: Final = "DYN_PARENT_DGD_K8S_NAMESPACE"
ENV_DYN_DISCOVERY_BACKEND: Final = "DYN_DISCOVERY_BACKEND"
ENV_DYN_KUBE_DISCOVERY_MODE: Final = "DYN_KUBE_DISCOVERY_MODE"
ENV_CONTAINER_NAME: Final = "CONTAINER_NAME"
ENV_POD_NAME: Final = "POD_NAME"
ENV_POD_NAMESPACE: Final = "POD_NAMESPACE"
ENV_POD_UID: Final = "POD_UID"
ENV_DYNAMO_PORT: Final = "DYNAMO_PORT"
ENV_DYN_HTTP_PORT: Final = "DYN_HTTP_PORT"
ENV_DYN_SYSTEM_ENABLED: Final = "DYN_SYSTEM_ENABLED"
ENV_DYN_SYSTEM_PORT: Final = "DYN_SYSTEM_PORT"
ENV_DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS: Final = "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"
ENV_DYN_HEALTH_CHECK_ENABLED: Final = "DYN_HEALTH_CHECK_ENABLED"
ENV_NIXL_TELEMETRY_ENABLE: Final = "NIXL_TELEMETRY_ENABLE"
ENV_NIXL_TELEMETRY_EXPORTER: Final = "NIXL_TELEMETRY_EXPORTER"
ENV_NIXL_TELEMETRY_PROMETHEUS_PORT: Final = "NIXL_TELEMETRY_PROMETHEUS_PORT"
ENV_PLANNER_PROMETHEUS_PORT: Final = "PLANNER_PROMETHEUS_PORT"
ENV_VLLM_CACHE_ROOT: Final = "VLLM_CACHE_ROOT"
ENV_VLLM_NIXL_SIDE_CHANNEL_HOST: Final = "VLLM_NIXL_SIDE_CHANNEL_HOST"
ENV_OMPI_KEEP_FQDN_HOSTNAMES: Final = "OMPI_MCA_orte_keep_fqdn_hostnames"
ENV_USE_STREAMING: Final = "USE_STREAMING"
ENV_RUST_LOG: Final = "RUST_LOG"
ENV_DYN_ENFORCE_DISAGG: Final = "DYN_ENFORCE_DISAGG"
ENV_NATS_SERVER: Final = "NATS_SERVER"
ENV_ETCD_ENDPOINTS: Final = "ETCD_ENDPOINTS"
ENV_MODEL_EXPRESS_URL: Final = "MODEL_EXPRESS_URL"
ENV_PROMETHEUS_ENDPOINT: Final = "PROMETHEUS_ENDPOINT"

# --- Defaults ------------------------------------------------------------------------------------
MAIN_CONTAINER_NAME: Final = "main"
GLOBAL_DYNAMO_NAMESPACE: Final = "dynamo"
DISCOVERY_BACKEND_KUBERNETES: Final = "kubernetes"
DISCOVERY_BACKEND_ETCD: Final = "etcd"
KUBE_DISCOVERY_MODE_POD: Final = "pod"
KUBE_DISCOVERY_MODE_CONTAINER: Final = "container"
DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: Final = 60
EPP_TERMINATION_GRACE_PERIOD_SECONDS: Final = 130
DEFAULT_RESTART_POLICY: Final = "Always"
DEFAULT_FS_GROUP: Final = 1000
SHARED_MEMORY_VOLUME_NAME: Final = "shared-memory"
SHARED_MEMORY_MOUNT_PATH: Final = "/dev/shm"
DEFAULT_SHARED_MEMORY_SIZE: Final = "8Gi"
DEFAULT_VLLM_CACHE_MOUNT_POINT: Final = "/root/.cache/vllm"
PLANNER_SERVICE_ACCOUNT_NAME: Final = "planner-serviceaccount"
EPP_SERVICE_ACCOUNT_NAME: Final = "epp-serviceaccount"
DEFAULT_INGRESS_SUFFIX: Final = "local"
DEFAULT_ROLLING_UPDATE_PERCENT: Final = "25%"
DEFAULT_GPU_RESOURCE: Final = "nvidia.com/gpu"
DEFAULT_REPLICAS: Final = 1
DEFAULT_NODE_COUNT: Final = 2
VOLCANO_SCHEDULER_NAME: Final = "volcano"
KAI_SCHEDULER_NAME: Final = "kai-scheduler"
DEFAULT_KAI_SCHEDULER_QUEUE: Final = "dynamo"
LABEL_KAI_SCHEDULER_QUEUE: Final = "kai.scheduler/queue"
DISCOVERY_SA_SUFFIX: Final = "-k8s-service-discovery"
MODEL_SERVICE_PREFIX: Final = "dynamo-model-"
SSH_KEY_MOUNT_PATH: Final = "/ssh-pk"
DEFAULT_MPI_SSH_SECRET_NAME: Final = "mpi-run-ssh-secret"
DOCKER_CONFIG_JSON_TYPE: Final = "kubernetes.io/dockerconfigjson"
DOCKER_CONFIG_JSON_KEY: Final = ".dockerconfigjson"
DOCKER_HUB_HOST: Final = "docker.io"

# Condition types and reasons written by the DGD / DCD reconcilers.
CONDITION_READY: Final = "Ready"
CONDITION_AVAILABLE: Final = "Available"
CONDITION_COMPONENT_READY: Final = "DynamoComponentReady"
DGD_STATE_PENDING: Final = "pending"
DGD_STATE_SUCCESSFUL: Final = "successful"
DGD_STATE_FAILED: Final = "failed"
REASON_ALL_READY: Final = "all_resources_are_ready"
REASON_SOME_NOT_READY: Final = "some_resources_are_not_ready"
REASON_RECONCILE_FAILED: Final = "failed_to_reconcile_the_resources"
REASON_NO_ORCHESTRATOR: Final = "NoOrchestratorAvailable"
# An optional API other than a multinode orchestrator is not served (InferencePool, DRA, Istio...).
REASON_MISSING_API: Final = "MissingAPI"
