"""The v1beta1 enumerations the operator's run-time code decides by, apart from the models (see
api/v1alpha1/enums.py for why)."""

from __future__ import annotations

import enum


class ProfilingPhase(enum.StrEnum):
    """The step of the profiling run while the request is Profiling."""

    INITIALIZING = "Initializing"
    SWEEPING_PREFILL = "SweepingPrefill"
    SWEEPING_DECODE = "SweepingDecode"
    SELECTING_CONFIG = "SelectingConfig"
    BUILDING_CURVES = "BuildingCurves"
    GENERATING_DGD = "GeneratingDGD"
    DONE = "Done"
