"""The workload provider a graph runs on, as recorded on it: `nvidia.com/workload-provider`. Pure.

Which pathway a graph takes was inferred on every reconcile from what the cluster serves and what
the graph already runs on. Inferred again later, the answer could change under a running graph: a
Grove graph whose operator is restarted with `--enable-grove=false`, or whose Grove CRDs went away
for a moment, moved to DynamoComponentDeployments, replacing every pod. So the operator records the
pathway it chose (`grove` or `component`, upstream's annotation and values) and from then on
reads the record instead of inferring: a graph on Grove that cannot have Grove now waits, refused
with `SelectedWorkloadProviderUnavailable`, until Grove is back.

The owner's explicit asks still move a graph, as before the record existed:
`nvidia.com/enable-grove: "false"` takes any graph to DCDs, `"true"` a DCD graph to Grove (when
Grove is served). Unlike upstream, whose webhook makes the record immutable, this operator has no
webhook; it rewrites the record after such a move.
"""

from __future__ import annotations

from typing import ClassVar

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph

PROVIDERS = (c.WORKLOAD_PROVIDER_COMPONENT, c.WORKLOAD_PROVIDER_GROVE)
REASON_PROVIDER_UNAVAILABLE = "SelectedWorkloadProviderUnavailable"


class InvalidWorkloadProviderError(GenerationError):
    """The graph records a workload provider this operator does not implement."""

    reason: ClassVar[str] = "InvalidWorkloadProvider"


def recorded_provider(dgd: Graph) -> str | None:
    """The provider the graph records (None: none yet, a new graph or one from before the record).
    Raises InvalidWorkloadProviderError for a value that is neither `grove` nor `component`."""
    annotations = dgd.get("metadata", {}).get("annotations") or {}
    if c.ANNOTATION_WORKLOAD_PROVIDER not in annotations:
        return None
    value = str(annotations[c.ANNOTATION_WORKLOAD_PROVIDER])
    if value not in PROVIDERS:
        raise InvalidWorkloadProviderError(
            f"metadata.annotations[{c.ANNOTATION_WORKLOAD_PROVIDER}]",
            f"{value[:64]!r} is not a workload provider; supported: {', '.join(PROVIDERS)}"
            " (the operator records it: remove the annotation to let it choose again)",
        )
    return value


def provider_of(grove: bool) -> str:
    """The value recorded for a pathway."""
    return c.WORKLOAD_PROVIDER_GROVE if grove else c.WORKLOAD_PROVIDER_COMPONENT


def unavailable_message() -> str:
    """Why a graph recorded on Grove waits while the operator cannot use Grove."""
    return (
        f"the graph runs on Grove ({c.ANNOTATION_WORKLOAD_PROVIDER}: {c.WORKLOAD_PROVIDER_GROVE}),"
        " which this operator cannot use now (Grove's API is not served, or --enable-grove is off);"
        " it is not moved to DynamoComponentDeployments, which would replace every pod. Make Grove"
        f' available again, or move the graph on purpose with {c.ANNOTATION_ENABLE_GROVE}: "false"'
    )
