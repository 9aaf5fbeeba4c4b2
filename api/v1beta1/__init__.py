"""nvidia.com/v1beta1: pydantic models of the four kinds upstream serves in this version.

Same conventions as api/v1alpha1 (snake_case attributes, camelCase JSON, embedded Kubernetes types as
dicts). Both versions are served, converted by the webhook (`dynamo_operator.api.conversion`).
DynamoModel has no v1beta1.
"""

# ruff: noqa: F405  (__all__ names the models the star import below gives the type checker)

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .enums import (
    ProfilingPhase,
)
from .groupversion import API_VERSION, STORED, VERSION

if TYPE_CHECKING:
    from .models import *  # noqa: F403  (the models, typed; loaded at run time by __getattr__)


def __getattr__(name: str) -> Any:
    """A model of this version, imported on first use (PEP 562). The running operator reads the
    constants and enumerations above, never a model, so it does not load pydantic at all; the CRD
    generator, the offline tools and the tests load the models by naming one. Lowercase names are
    submodules, never models: asking for one does not load them."""
    if name.startswith("_") or name.islower():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import models

    try:
        value = getattr(models, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


__all__ = [
    "API_VERSION",
    "KINDS",
    "STORED",
    "VERSION",
    "ComponentReplicaStatus",
    "ComponentType",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "ProfilingPhase",
]
