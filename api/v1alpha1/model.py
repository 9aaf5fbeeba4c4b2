"""DynamoModel: a model (base or LoRA) served by the components that reference it."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from .base import ApiModel, Condition
from .enums import ModelType
from .groupversion import API_VERSION, DYNAMO_MODEL_KIND, DYNAMO_MODEL_PLURAL
from .markers import Cel, CrdInfo, ListType, PrinterColumn, Schema


class ModelSource(ApiModel):
    """Where the model's weights come from."""

    uri: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Source URI: s3://bucket/path/to/model or hf://org/model@revision."
    )


def _immutable(field: str) -> Cel:
    return Cel(rule="self == oldSelf", message=f"{field} is immutable", reason="FieldValueForbidden")


class DynamoModelSpec(ApiModel):
    """Desired state of a model."""

    __cel__ = (
        Cel(
            rule="self.modelType != 'lora' || (has(self.source)"
            " && (self.source.uri.startsWith('s3://') || self.source.uri.startsWith('hf://')))",
            message="a lora model needs source.uri starting with s3:// or hf://",
            field_path=".source",
            reason="FieldValueInvalid",
        ),
    )

    model_name: Annotated[str, Schema({"minLength": 1})] = Field(
        description='Full model identifier, e.g. "meta-llama/Llama-3.3-70B-Instruct-lora".'
    )
    base_model_name: Annotated[str, Schema({"minLength": 1}), _immutable("baseModelName")] = Field(
        description="Base model identifier; matches the modelRef of the serving components. Immutable."
    )
    model_type: Annotated[ModelType, _immutable("modelType")] = Field(
        ModelType.BASE, description="base, lora or adapter. Immutable."
    )
    source: ModelSource | None = Field(None, description="Source of the weights (for lora models).")


class EndpointInfo(ApiModel):
    """One pod serving the model."""

    address: str = Field(description='Endpoint address, e.g. "http://10.0.1.5:9090".')
    pod_name: str | None = Field(None, description="Pod behind the endpoint.")
    ready: bool = Field(
        description="LoRA: the adapter was loaded (POST /loras answered 2xx). Base models: always false."
    )


class DynamoModelStatus(ApiModel):
    """Observed endpoints of a model."""

    endpoints: list[EndpointInfo] | None = Field(None, description="All endpoints serving the model.")
    ready_endpoints: int = Field(0, description="Endpoints that are ready.")
    total_endpoints: int = Field(0, description="All endpoints.")
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None, description="Latest observations of the model, one per type."
    )


class DynamoModel(ApiModel):
    """A model served by Dynamo components; LoRA adapters are loaded into every serving pod."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_MODEL_PLURAL,
        singular="dynamomodel",
        short_names=("dm",),
        printer_columns=(
            PrinterColumn("BaseModel", ".spec.baseModelName", description="Base model name"),
            PrinterColumn("Type", ".spec.modelType", description="Model type"),
            PrinterColumn("Ready", ".status.readyEndpoints", type="integer", description="Ready endpoints"),
            PrinterColumn("Total", ".status.totalEndpoints", type="integer", description="Total endpoints"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1alpha1")
    kind: str = Field(DYNAMO_MODEL_KIND, description="DynamoModel")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoModelSpec = Field(description="Desired state of the model.")
    status: DynamoModelStatus | None = Field(None, description="Observed state of the model.")
