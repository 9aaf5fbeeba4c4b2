"""nvidia.com/v1beta1: pydantic models of the four kinds upstream serves in this version.

Same conventions as api/v1alpha1 (snake_case attributes, camelCase JSON, embedded Kubernetes types as
dicts). Both versions are served, converted by the webhook (`dynamo_operator.api.conversion`).
DynamoModel has no v1beta1.
"""

# ruff: noqa: F405  (__all__ names the models the star import below gives the type checker)

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_models import models_on_first_use
from .enums import (
    ProfilingPhase,
)
from .groupversion import API_VERSION, STORED, VERSION

if TYPE_CHECKING:
    from .models import *  # noqa: F403  (the models, typed; loaded at run time by __getattr__)


__getattr__ = models_on_first_use(__name__)


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
