"""The Endpoint Picker Plugin component's configuration (`eppConfig`, componentType "epp").

The inline form is the Gateway API Inference Extension's EndpointPickerConfig, typed as upstream's
schema types it; fields the picker knows beyond these are kept as written.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from .base import ApiModel, CoreConfigMapKeySelector
from .markers import Cel, Schema

# Any JSON value, kept as written (a plugin's parameters are the plugin's business).
AnyJson = Annotated[Any, Schema({"x-kubernetes-preserve-unknown-fields": True})]


class PluginSpec(ApiModel):
    """One plugin instance of the picker."""

    name: str | None = Field(None, description="Name of the instance; its type when left out.")
    type: str = Field(description="Plugin type.")
    parameters: AnyJson = Field(None, description="Parameters of the plugin, any JSON.")


class SchedulingPlugin(ApiModel):
    """A plugin instance a scheduling profile runs."""

    plugin_ref: str = Field(description="Name of a plugin instance declared under plugins.")
    weight: int | None = Field(None, description="Weight of a scorer plugin.")


class SchedulingProfile(ApiModel):
    """A named set of plugins the picker runs for a request."""

    name: str = Field(description="Name of the profile.")
    plugins: list[SchedulingPlugin] = Field(description="Plugins the profile runs.")


class SaturationDetector(ApiModel):
    """When the picker deems the pool saturated."""

    queue_depth_threshold: int | None = Field(None, description="Depth of the waiting queue.")
    kv_cache_util_threshold: float | None = Field(None, description="KV-cache utilisation, 0 to 1.")
    metrics_staleness_threshold: str | None = Field(
        None, description="Age after which a pod's metrics are stale (a duration)."
    )


class EndpointPickerConfig(ApiModel):
    """EndpointPickerConfig given inline; keys beyond the typed ones are kept as written."""

    # The schema keeps unknown fields (x-kubernetes-preserve-unknown-fields), so the model does too.
    model_config = ConfigDict(extra="allow")

    api_version: str | None = Field(None, description="Its apiVersion.")
    kind: str | None = Field(None, description="Its kind.")
    plugins: list[PluginSpec] = Field(description="Plugin instances.")
    scheduling_profiles: list[SchedulingProfile] = Field(description="Scheduling profiles.")
    feature_gates: list[str] | None = Field(None, description="Feature gates of the picker.")
    saturation_detector: SaturationDetector | None = Field(None, description="Saturation thresholds.")


class EPPConfig(ApiModel):
    """Configuration of an Endpoint Picker Plugin component (componentType "epp")."""

    __cel__ = (
        Cel(
            rule="has(self.configMapRef) != has(self.config)",
            message="exactly one of configMapRef and config must be set",
            reason="FieldValueInvalid",
        ),
        Cel(
            rule="!has(self.configMapRef)"
            " || (has(self.configMapRef.name) && size(self.configMapRef.name) > 0)",
            message="configMapRef.name is required",
            field_path=".configMapRef.name",
            reason="FieldValueRequired",
        ),
    )

    config_map_ref: CoreConfigMapKeySelector | None = Field(
        None, description="ConfigMap key holding EndpointPickerConfig YAML. Mutually exclusive with config."
    )
    config: Annotated[EndpointPickerConfig, Schema({"x-kubernetes-preserve-unknown-fields": True})] | None = (
        Field(
            None,
            description="EndpointPickerConfig given inline; the operator stores it in a ConfigMap. "
            "Mutually exclusive with configMapRef.",
        )
    )
