"""The pydantic base of every API type and the aliases of embedded Kubernetes types."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from .markers import Cel, IntOrString, K8sType, PreserveUnknown, Schema


class ApiModel(BaseModel):
    """snake_case attributes, camelCase JSON; unknown fields are dropped, never fatal.

    The CRD schema, not this model, refuses typos: an older operator reading an object written by a
    newer CRD must keep working.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        use_enum_values=True,
        validate_default=False,
    )

    # Object-level CEL rules, emitted as `x-kubernetes-validations` by the CRD generator.
    __cel__: ClassVar[tuple[Cel, ...]] = ()
    # A Kubernetes type whose properties this model extends (its own fields are added on top).
    __k8s_base__: ClassVar[K8sType | None] = None
    # Dotted property paths the CRD schema of this model leaves out although the model has them
    # (as upstream post-processes a schema: its standalone DCD omits the graph-only fields).
    __crd_omit__: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (camelCase, no nulls), as the API server stores it."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# Embedded Kubernetes types stay plain dicts in Python; their schemas come from k8s_schemas.json.
EnvVar = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.EnvVar")]
Probe = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Probe")]
Container = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Container", drop_required=("name",))]
Toleration = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Toleration")]
ResourceRequirements = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.ResourceRequirements")]
ResourceClaim = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.ResourceClaim")]
CoreConfigMapKeySelector = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.ConfigMapKeySelector")]
Condition = Annotated[dict[str, Any], K8sType("io.k8s.apimachinery.pkg.apis.meta.v1.Condition")]
HorizontalPodAutoscalerBehavior = Annotated[
    dict[str, Any], K8sType("io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior")
]
MetricSpec = Annotated[dict[str, Any], K8sType("io.k8s.api.autoscaling.v2.MetricSpec")]
# Quantity: "8Gi", "500m" or a bare integer.
Quantity = Annotated[int | str, IntOrString()]
Time = Annotated[str, Schema({"format": "date-time"})]
RawObject = Annotated[dict[str, Any], PreserveUnknown()]
EmbeddedObject = Annotated[dict[str, Any], PreserveUnknown(embedded_resource=True)]
