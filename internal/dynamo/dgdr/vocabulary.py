"""Condition types, condition reasons and Event reasons of a DGDR (kubectl and alerts key off these)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from dynamo_operator.api.v1beta1.enums import ProfilingPhase


class ConditionType(enum.StrEnum):
    VALIDATION = "Validation"
    PROFILING = "Profiling"
    SPEC_GENERATED = "SpecGenerated"
    DEPLOYMENT_READY = "DeploymentReady"


class Reason(enum.StrEnum):
    """Condition reasons."""

    VALIDATION_PASSED = "ValidationPassed"
    VALIDATION_FAILED = "ValidationFailed"
    REFERENCE_NOT_FOUND = "ReferenceNotFound"
    SPEC_CHANGE_REJECTED = "SpecChangeRejected"
    UNKNOWN_STATE = "UnknownState"
    JOB_CREATION_FAILED = "JobCreationFailed"
    PROFILING_RUNNING = "ProfilingRunning"
    PROFILING_COMPLETED = "ProfilingCompleted"
    PROFILING_FAILED = "ProfilingFailed"
    GENERATION_FAILED = "GenerationFailed"
    # The profiler output passed a parser limit (the message names which).
    OUTPUT_LIMIT_EXCEEDED = "OutputLimitExceeded"
    # The request or its profiler output names a namespace other than the request's own.
    NAMESPACE_NOT_ALLOWED = "NamespaceNotAllowed"
    SPEC_GENERATED = "SpecGenerated"
    DEPLOYMENT_CREATED = "DeploymentCreated"
    DEPLOYMENT_READY = "DeploymentReady"
    DEPLOYMENT_DEGRADED = "DeploymentDegraded"
    DEPLOYMENT_DELETED = "DeploymentDeleted"
    # The Profiling condition's reason names the profiler's step while it runs (the step's own name,
    # Completed for Done), and on failure the step it failed in ("<step>Failed"): upstream's v1beta1
    # keeps status.profilingPhase as the canonical value and mirrors it here for `kubectl describe`.
    INITIALIZING = "Initializing"
    SWEEPING_PREFILL = "SweepingPrefill"
    SWEEPING_DECODE = "SweepingDecode"
    SELECTING_CONFIG = "SelectingConfig"
    BUILDING_CURVES = "BuildingCurves"
    GENERATING_DGD = "GeneratingDGD"
    COMPLETED = "Completed"
    INITIALIZING_FAILED = "InitializingFailed"
    SWEEPING_PREFILL_FAILED = "SweepingPrefillFailed"
    SWEEPING_DECODE_FAILED = "SweepingDecodeFailed"
    SELECTING_CONFIG_FAILED = "SelectingConfigFailed"
    BUILDING_CURVES_FAILED = "BuildingCurvesFailed"
    GENERATING_DGD_FAILED = "GeneratingDGDFailed"
    DONE_FAILED = "DoneFailed"


def profiling_step_reason(phase: ProfilingPhase) -> Reason:
    """The Profiling condition's reason while the profiler is at `phase`."""
    return Reason.COMPLETED if phase is ProfilingPhase.DONE else Reason(phase.value)


def profiling_failure_reason(phase: ProfilingPhase | None) -> Reason:
    """The Profiling condition's reason when the run failed at `phase` (None: no step known)."""
    return Reason(f"{phase.value}Failed") if phase is not None else Reason.PROFILING_FAILED


class EventReason(enum.StrEnum):
    # Normal
    INITIALIZED = "Initialized"
    PROFILING_JOB_CREATED = "ProfilingJobCreated"
    SPEC_GENERATED = "SpecGenerated"
    DEPLOYMENT_CREATED = "DeploymentCreated"
    DEPLOYMENT_READY = "DeploymentReady"
    # Warning
    VALIDATION_FAILED = "ValidationFailed"
    REFERENCE_NOT_FOUND = "ReferenceNotFound"
    PROFILING_JOB_FAILED = "ProfilingJobFailed"
    PROFILING_CHECK_FAILED = "ProfilingCheckFailed"
    GENERATION_FAILED = "GenerationFailed"
    OUTPUT_LIMIT_EXCEEDED = "OutputLimitExceeded"
    NAMESPACE_NOT_ALLOWED = "NamespaceNotAllowed"
    CONFIG_MAP_CREATION_FAILED = "ConfigMapCreationFailed"
    DEPLOYMENT_CREATION_FAILED = "DeploymentCreationFailed"
    SPEC_CHANGE_REJECTED = "SpecChangeRejected"
    DEPLOYMENT_DEGRADED = "DeploymentDegraded"
    DEPLOYMENT_DELETED = "DeploymentDeleted"


class EventType(enum.StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class ConditionSpec:
    """A condition to upsert by type; the writer stamps observedGeneration and lastTransitionTime."""

    type: ConditionType
    status: bool
    reason: Reason
    message: str

    def as_dict(self) -> dict[str, str]:
        return {
            "type": str(self.type),
            "status": "True" if self.status else "False",
            "reason": str(self.reason),
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class EventSpec:
    """An Event to record on the DGDR."""

    type: EventType
    reason: EventReason
    message: str
