"""The graph and component reconcilers as the unit tests build them: over in-memory fakes, a recorder
that keeps Events, and a plain generation context unless a test gives its own (not a test module)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dynamo_operator.controllers.dynamocomponentdeployment import DynamoComponentDeploymentReconciler
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
from dynamo_operator.internal.dynamo.common.context import GenContext
from unit.apply.fakes import FakeRecorder


def plain_context(namespace: str) -> GenContext:
    return GenContext(namespace=namespace)


def component_reconciler(
    client: Any,
    cache: Any,
    *,
    gen_context: Callable[[str], GenContext] = plain_context,
    **options: Any,
) -> DynamoComponentDeploymentReconciler:
    """A DCD reconciler without the optional APIs (`options`: pods, clock, terminating, ...)."""
    return DynamoComponentDeploymentReconciler(
        client=client,
        cache=cache,
        recorder=FakeRecorder(),
        gen_context=gen_context,
        **options,
    )


def graph_reconciler(
    client: Any,
    cache: Any,
    *,
    gen_context: Callable[[str], GenContext] = plain_context,
    **options: Any,
) -> DynamoGraphDeploymentReconciler:
    """A DGD reconciler (`options`: clock, terminating)."""
    return DynamoGraphDeploymentReconciler(
        client=client, cache=cache, recorder=FakeRecorder(), gen_context=gen_context, **options
    )
