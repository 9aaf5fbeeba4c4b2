"""The v1alpha1 enumerations the operator's run-time code decides by, apart from the models.

They live here, not beside the pydantic models that use them, so that importing one (the graph
controller's rollout phases, say) does not load pydantic and every model of the API: the running
operator needs the values, never the models (test/unit/packaging/test_import_footprint.py).
"""

from __future__ import annotations

import enum


class BackendFramework(enum.StrEnum):
    """Inference backends the operator knows how to wire."""

    SGLANG = "sglang"
    VLLM = "vllm"
    TRTLLM = "trtllm"


class RestartStrategyType(enum.StrEnum):
    """Restart the services one after the other, or all at once."""

    SEQUENTIAL = "Sequential"
    PARALLEL = "Parallel"


class RestartPhase(enum.StrEnum):
    """Progress of a graph restart."""

    PENDING = "Pending"
    RESTARTING = "Restarting"
    COMPLETED = "Completed"
    FAILED = "Failed"
    SUPERSEDED = "Superseded"


class RollingUpdatePhase(enum.StrEnum):
    """Progress of a managed worker rolling update."""

    NONE = ""
    PENDING = "Pending"
    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"
    FAILED = "Failed"


class ModelType(enum.StrEnum):
    """Kinds of model."""

    BASE = "base"
    LORA = "lora"
    ADAPTER = "adapter"


class DGDRState(enum.StrEnum):
    """Lifecycle states of a request ("" before the first reconcile)."""

    INITIAL = ""
    PENDING = "Pending"
    PROFILING = "Profiling"
    DEPLOYING = "Deploying"
    READY = "Ready"
    DEPLOYMENT_DELETED = "DeploymentDeleted"
    FAILED = "Failed"


# States in which the spec may no longer change: profiling has started.
IMMUTABLE_SPEC_STATES: tuple[DGDRState, ...] = (
    DGDRState.PROFILING,
    DGDRState.DEPLOYING,
    DGDRState.READY,
    DGDRState.DEPLOYMENT_DELETED,
)
