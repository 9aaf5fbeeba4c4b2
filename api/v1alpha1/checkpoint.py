"""A service's `checkpoint` block: start workers from a snapshot of a warmed-up container.

Accepted as upstream's v1alpha1 schema accepts it, so a v1alpha1 client keeps it; this operator
does not implement checkpoint/restore and refuses a service that turns it on
(internal/dynamo/common/not_implemented.py).
"""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field

from .base import ApiModel, RawObject
from .common import StringMap
from .markers import Cel, ListType, Schema

# A container name (DNS label).
ContainerName = Annotated[
    str, Schema({"minLength": 1, "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"})
]
_INT32_FROM_ONE = Schema({"format": "int32", "minimum": 1})


class CheckpointMode(enum.StrEnum):
    """Deprecated upstream: `enabled` without `checkpointRef` is Auto, `checkpointRef` is Manual."""

    AUTO = "Auto"
    MANUAL = "Manual"


class CheckpointStartupPolicy(enum.StrEnum):
    """Whether workers start cold at once or wait until the checkpoint is ready."""

    IMMEDIATE = "Immediate"
    WAIT_FOR_CHECKPOINT = "WaitForCheckpoint"


class CheckpointDeletionPolicy(enum.StrEnum):
    """What becomes of a checkpoint the graph made when the graph is deleted."""

    DELETE = "Delete"
    RETAIN = "Retain"


class CheckpointBackendFramework(enum.StrEnum):
    """The backend a checkpoint was taken with (in upstream's order)."""

    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"


class DynamoCheckpointIdentity(ApiModel):
    """The inputs that make two checkpoints interchangeable."""

    model: str = Field(description="Model identifier.")
    backend_framework: CheckpointBackendFramework = Field(description="Backend the checkpoint is for.")
    dynamo_version: str | None = Field(None, description="Dynamo version the checkpoint was taken with.")
    tensor_parallel_size: Annotated[int, _INT32_FROM_ONE] = Field(1, description="Tensor parallel size.")
    pipeline_parallel_size: Annotated[int, _INT32_FROM_ONE] = Field(1, description="Pipeline parallel size.")
    dtype: str | None = Field(None, description="Data type of the weights.")
    max_model_len: Annotated[int, _INT32_FROM_ONE] | None = Field(
        None, description="Maximum sequence length."
    )
    extra_parameters: StringMap | None = Field(None, description="Further parameters of the identity.")


class ServiceCheckpointJobConfig(ApiModel):
    """Changes to the job that takes the checkpoint."""

    gms_client_containers: Annotated[list[ContainerName], ListType("set")] | None = Field(
        None, description="Containers of the job wired as GPU Memory Service clients."
    )
    pod_template: RawObject | None = Field(
        None, description="A pod template merged over the job's generated pod (helper containers, ...)."
    )


class ServiceCheckpointConfig(ApiModel):
    """Checkpoint and restore of the service's main container (not implemented by this operator)."""

    __cel__ = (
        Cel(
            rule="!has(self.job) || !has(self.checkpointRef) || size(self.checkpointRef) == 0",
            message="checkpoint.job cannot be set when checkpointRef is specified",
        ),
    )

    enabled: bool = Field(False, description="Take a checkpoint of the service and restore pods from it.")
    mode: CheckpointMode | None = Field(None, description="Deprecated; leave it out.")
    startup_policy: CheckpointStartupPolicy = Field(
        CheckpointStartupPolicy.IMMEDIATE, description="When workers start relative to the checkpoint."
    )
    deletion_policy: CheckpointDeletionPolicy = Field(
        CheckpointDeletionPolicy.DELETE, description="Delete or keep a graph-made checkpoint with the graph."
    )
    checkpoint_ref: str | None = Field(
        None, description="Name of an existing DynamoCheckpoint to restore from (identity is then ignored)."
    )
    identity: DynamoCheckpointIdentity | None = Field(None, description="Deprecated; leave it out.")
    target_container_name: ContainerName = Field("main", description="Container snapshotted and restored.")
    job: ServiceCheckpointJobConfig | None = Field(None, description="Changes to the checkpoint job.")
