"""Listing an owner's pods by one label, for the reconcilers that read pods without watching them.

The operator keeps no Pod informer (a cluster's pods are its largest kind); a reconciler that needs
to know why pods are not ready, or whether any are left, lists them by the label that marks them as
its child's: our selector label on a Deployment's pods, LeaderWorkerSet's or Grove's own label on
theirs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from dynamo_operator.internal.client.model import ListPage
from dynamo_operator.internal.client.resource import POD, Resource

Obj = dict[str, Any]
PodLister = Callable[[str, str], Awaitable[Sequence[Obj]]]
"""`(namespace, value) -> pods`: the pods of the namespace whose label has that value."""


class PodReader(Protocol):
    """The client as the listers use it."""

    async def list_page(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
    ) -> ListPage: ...


def pods_labelled(client: PodReader, label: str, *, consistent: bool = False) -> PodLister:
    """A `PodLister` of the pods whose `label` is the value asked for. By default served from the
    API server's watch cache (resourceVersion 0: a moment stale at worst, no etcd read), enough to
    say why pods are not ready; `consistent`: a quorum read, for a decision that a pod still running
    must never be missed in (a drained generation)."""

    async def pods(namespace: str, value: str) -> Sequence[Obj]:
        page = await client.list_page(
            POD,
            namespace=namespace,
            label_selector=f"{label}={value}",
            resource_version=None if consistent else "0",
        )
        return page.items

    return pods
