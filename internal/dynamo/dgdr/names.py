"""Names the DGDR machinery shares with the profiler, the generated DGD and users' tooling.

Every string here is part of an external contract (the profiler image's sidecar, dashboards, kubectl
selectors), so it must match the upstream operator exactly.
"""

from __future__ import annotations

from typing import Final

# Child object names, derived from the DGDR name.
JOB_NAME_PREFIX: Final = "profile-"
OUTPUT_CONFIG_MAP_PREFIX: Final = "dgdr-output-"

# The profiler writes both files; which one becomes the DGD depends on spec.useMocker.
OUTPUT_KEY: Final = "config_with_planner.yaml"
MOCKER_OUTPUT_KEY: Final = "mocker_config_with_planner.yaml"
PROFILER_STATUS_KEY: Final = "profiler_status.yaml"

# Labels on the profiling Job and its pods.
LABEL_APP: Final = "app"
LABEL_DGDR: Final = "dgdr"
APP_ONLINE_PROFILER: Final = "dynamo-profiler"
APP_AIC_PROFILER: Final = "aic-profiler"
# Tracking labels on everything a DGDR creates outside its own ownership tree (DGD, extra ConfigMaps).
LABEL_DGDR_NAME: Final = "dgdr.nvidia.com/name"
LABEL_DGDR_NAMESPACE: Final = "dgdr.nvidia.com/namespace"
LABEL_MANAGED_BY: Final = "nvidia.com/managed-by"
MANAGED_BY_OPERATOR: Final = "dynamo-operator"

# Label selector for the profiling pods (Job pods carry the template labels).
PROFILING_POD_SELECTOR: Final = f"{LABEL_APP} in ({APP_ONLINE_PROFILER},{APP_AIC_PROFILER}),{LABEL_DGDR}"

# Profiling Job pod contract.
PROFILING_SERVICE_ACCOUNT: Final = "dgdr-profiling-job"
PROFILING_ROLE_BINDING: Final = "dgdr-profiling-job-binding"
IMAGE_PULL_SECRET: Final = "nvcr-imagepullsecret"
PROFILER_CONTAINER: Final = "profiler"
COPIER_CONTAINER: Final = "output-copier"
# The output copier runs /bin/sh with kubectl, sed, tr, grep and head (job.py's script). Pinned to one
# kubectl release, never a moving `latest`: upstream's `bitnami/kubectl:latest` is no longer an
# option to pin, as Bitnami withdrew its versioned tags from docker.io/bitnami in 2025 (a pinned tag
# there no longer resolves) and its `bitnamilegacy` copies receive no fixes. alpine/kubectl publishes
# one tag per kubectl release, with busybox for the script. Version tag only, no digest: no digest of
# this tag could be verified from the sources at hand; add `@sha256:...` when releasing.
COPIER_IMAGE: Final = "docker.io/alpine/kubectl:1.34.2"
HF_TOKEN_SECRET: Final = "hf-token-secret"
HF_TOKEN_KEY: Final = "HF_TOKEN"
OUTPUT_VOLUME: Final = "profiling-output"
CONFIG_VOLUME: Final = "profiling-config"
MODEL_CACHE_VOLUME: Final = "model-cache"
OUTPUT_DIR: Final = "/data"
CONFIG_DIR: Final = "/config"
BASE_CONFIG_FILE: Final = "disagg.yaml"
DEFAULT_MODEL_CACHE_MOUNT: Final = "/opt/model-cache"
JOB_BACKOFF_LIMIT: Final = 3
PROFILER_UID: Final = 1000

# The DGD reports this state when every service is up (DGD status.state enum).
DGD_READY_STATE: Final = "successful"

FINALIZER: Final = "nvidia.com/finalizer"


def job_name(dgdr_name: str) -> str:
    """The profiling Job of a DGDR (same for online and AI-Configurator profiling)."""
    return f"{JOB_NAME_PREFIX}{dgdr_name}"


def output_config_map_name(dgdr_name: str) -> str:
    """The ConfigMap the profiler's sidecar writes its results into."""
    return f"{OUTPUT_CONFIG_MAP_PREFIX}{dgdr_name}"


def output_key(*, use_mocker: bool) -> str:
    """Which key of the output ConfigMap holds the DGD to deploy."""
    return MOCKER_OUTPUT_KEY if use_mocker else OUTPUT_KEY


def dgdr_for_output_config_map(name: str) -> str | None:
    """Inverse of `output_config_map_name`, for mapping ConfigMap events to their DGDR."""
    if name.startswith(OUTPUT_CONFIG_MAP_PREFIX) and len(name) > len(OUTPUT_CONFIG_MAP_PREFIX):
        return name[len(OUTPUT_CONFIG_MAP_PREFIX) :]
    return None
