"""The graph's children on both pathways: generated whole or `Rejected`, and as the syncer takes them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import Desired
from dynamo_operator.internal.controller.rejection import Rejected
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph.children import GraphChildren
from dynamo_operator.internal.dynamo.graph.generate import shared_between_owners

Obj = dict[str, Any]


def children_to_sync(owned: Sequence[Obj], shared: Sequence[Obj]) -> list[Desired]:
    """The children as the syncer takes them. Create-only: a PVC's spec is (mostly) immutable and its
    data precious; once an adapter exists it, not the graph, is the source of truth for its replicas.
    The namespace's planner and EPP ServiceAccounts/RoleBindings: shared, create-if-absent."""
    return [
        *(
            Desired(r, o, create_only=r in (kinds.PVC, kinds.DGDSA), shared=shared_between_owners(o))
            for o in owned
            for r in (kinds.resource_of(o),)
        ),
        *(Desired(kinds.resource_of(o), o, owned=False) for o in shared),
    ]


def generate_or_reject(generate: Callable[[], GraphChildren]) -> GraphChildren:
    """`generate()`; a graph it refuses is `Rejected` with the error's reason and message."""
    try:
        return generate()
    except GenerationError as err:
        raise Rejected(err.reason, str(err)) from err
