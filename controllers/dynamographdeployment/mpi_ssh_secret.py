"""Provides the MPI SSH key Secret in every namespace that runs a multinode graph.

The Secret is shared by the namespace's graphs (internal/dynamo/graph/mpisecret.py), so this controller
keeps it apart from the graph reconciler: it reconciles graphs, and for one that needs the Secret it
makes sure the Secret exists in the graph's namespace. It creates, never updates: a key in use is
never replaced, not on re-apply, not on restart, not when another graph arrives. Deleting the Secret
is the way to rotate the key: the next reconcile of a graph there makes a new one (restart the
multinode pods then, as their key copies are from the old one).

Where the key pair comes from:
- `--mpi-run-ssh-secret-namespace` set: one key pair, kept in that namespace (made there first when
  absent) and copied into each namespace that needs it, as upstream does;
- unset: a key pair of its own per namespace, made there.

Secret values never reach this process's memory except while one is created or copied: the only
Secret informer here is metadata-only and filtered on the Secret's name, and nothing logs a value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, Protocol

import structlog
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import Recorder
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import SECRET, Resource, split_key
from dynamo_operator.internal.controller.builder import Builder, Built, InformerOptions
from dynamo_operator.internal.controller.predicates import Funcs
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import stored_graph_view
from dynamo_operator.internal.dynamo.graph.mpisecret import (
    KeyPairSource,
    desired_mpi_ssh_secret,
    graph_needs_mpi_ssh_secret,
    mpi_ssh_secret_copy,
)
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.secrets.sshkeys import generate_rsa_key_pair
from dynamo_operator.internal.settings import Settings

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
CONTROLLER_NAME = "mpisshsecret"
REASON_CREATED = "MpiSshSecretCreated"
REASON_FAILED = "MpiSshSecretFailed"


class SecretClient(Protocol):
    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj: ...
    async def create(self, resource: Resource, obj: Obj) -> Obj: ...


class Reader(Protocol):
    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]: ...


class Store(Protocol):
    def get(self, key: str) -> Obj | None: ...


def needs_secret(obj: Mapping[str, Any]) -> bool:
    """A graph (as stored) that is not being deleted and runs a service on several nodes."""
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return False
    try:
        return graph_needs_mpi_ssh_secret(stored_graph_view(obj))
    except GenerationError:
        return False  # refused by its own reconcile: it runs nothing


# A graph matters when it arrives needing the Secret or starts needing it; its other updates (status,
# scaling) and its deletion do not (the Secret stays for the namespace's other graphs).
graph_starts_needing = Funcs(
    on_create=needs_secret,
    on_update=lambda old, new: needs_secret(new) and not needs_secret(old),
    on_delete=lambda obj: False,
)


# Only a deletion of the Secret is news: its creation is ours, and its content is never ours to change.
secret_deleted = Funcs(on_create=lambda obj: False, on_update=lambda old, new: False)


class MpiSshSecretReconciler:
    """Per graph key: if the graph is multinode and its namespace lacks the Secret, create it."""

    def __init__(
        self,
        *,
        client: SecretClient,
        cache: Reader,
        secrets: Store,
        recorder: Recorder,
        secret_name: str,
        source_namespace: str = "",
        keys: KeyPairSource = generate_rsa_key_pair,
    ) -> None:
        self._client, self._cache, self._secrets, self._recorder = client, cache, secrets, recorder
        self._name, self._source_namespace, self._keys = secret_name, source_namespace, keys
        # One creation at a time per namespace: two graphs arriving together must not both draw a key.
        self._locks: dict[str, asyncio.Lock] = {}

    def setup(self, b: Builder) -> None:
        """For graphs that start needing the Secret; Watches the Secret's deletion (metadata only,
        this one name) to bring it back for the namespace's graphs that need it."""
        b.for_(kinds.DGD, graph_starts_needing)
        b.watches(SECRET, self.graphs_needing, secret_deleted, informer=secret_informer(self._name))

    def graphs_needing(self, secret: Obj) -> list[str]:
        """Keys of the graphs in the Secret's namespace that need it."""
        ns = str((secret.get("metadata") or {}).get("namespace") or "")
        return [
            f"{ns}/{g['metadata']['name']}"
            for g in self._cache.by_index(kinds.DGD, "namespace", ns)
            if needs_secret(g)
        ]

    async def reconcile(self, key: str) -> Result:
        graph = self._cache.get(kinds.DGD, key)
        if graph is None or not needs_secret(graph):
            return Result()
        namespace, _ = split_key(key)
        namespace = namespace or ""
        if self._secrets.get(f"{namespace}/{self._name}") is not None:
            return Result()  # the steady state: one cache read, no request
        lock = self._locks.setdefault(namespace, asyncio.Lock())
        async with lock:
            try:
                origin = await self._ensure(namespace)
            except errors.ApiError as err:
                if errors.namespace_terminating(err):
                    # The namespace goes with its graphs: nothing to provide, nothing to retry.
                    log.info("Namespace is being deleted; no MPI SSH Secret for it", namespace=namespace)
                    return Result()
                # No Secret value is in `err`: the API server does not echo the body of a create.
                message = f"cannot provide Secret {self._name}: {err.code} {err.reason}: {err.message}"
                self._recorder.event(graph, type="Warning", reason=REASON_FAILED, message=message)
                raise
        if origin is not None:
            self._recorder.event(
                graph, type="Normal", reason=REASON_CREATED, message=f"created Secret {self._name} {origin}"
            )
        return Result()

    async def _ensure(self, namespace: str) -> str | None:
        """Create the Secret in `namespace` unless it is there; returns where its key came from, None
        when nothing was created."""
        # A live read: the cache may not show a Secret we created a moment ago for another graph.
        if await self._exists(namespace):
            return None
        source = self._source_namespace
        if source and source != namespace:
            secret = mpi_ssh_secret_copy(await self._source_secret(source), namespace)
            origin = f"(a copy of {source}/{self._name})"
        else:
            secret = desired_mpi_ssh_secret(namespace, self._name, await asyncio.to_thread(self._keys))
            origin = "(a new key pair)"
        if not await self._create(secret):
            return None
        log.info(
            "Created the MPI SSH key Secret", namespace=namespace, name=self._name, source=source or None
        )
        return origin

    async def _source_secret(self, source: str) -> Obj:
        """The Secret of the source namespace, made there first when absent (upstream's behaviour)."""
        for _ in range(2):  # absent → created (by us or a racing writer) → read again
            try:
                return await self._client.get(SECRET, self._name, namespace=source)
            except errors.NotFound:
                pass
            secret = desired_mpi_ssh_secret(source, self._name, await asyncio.to_thread(self._keys))
            if await self._create(secret):
                log.info("Created the MPI SSH key Secret", namespace=source, name=self._name, source=None)
                return secret
        return await self._client.get(SECRET, self._name, namespace=source)

    async def _exists(self, namespace: str) -> bool:
        try:
            await self._client.get(SECRET, self._name, namespace=namespace)
        except errors.NotFound:
            return False
        return True

    async def _create(self, secret: Obj) -> bool:
        """POST, never apply: an existing Secret (ours or the user's) is never overwritten."""
        try:
            await self._client.create(SECRET, secret)
        except errors.AlreadyExists:
            return False
        return True


def secret_selector(name: str) -> str:
    """Field selector of the one Secret name this controller watches."""
    return f"metadata.name={name}"


def secret_informer(name: str) -> InformerOptions:
    """The one Secret name this controller watches, metadata only: no key material is cached."""
    return InformerOptions(field_selector=secret_selector(name), metadata_only=True)


def build(mgr: Manager, settings: Settings) -> Built[MpiSshSecretReconciler]:
    """The reconciler, reading its Secret informer's store; graphs drive it, and a deleted Secret
    brings back the namespace's graphs that need it."""
    b = mgr.builder(CONTROLLER_NAME)
    name = settings.generation.mpi_ssh_secret_name or consts.DEFAULT_MPI_SSH_SECRET_NAME
    reconciler = MpiSshSecretReconciler(
        client=mgr.client,
        cache=mgr.cache,
        secrets=b.informer(SECRET, secret_informer(name)).store,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        secret_name=name,
        source_namespace=settings.generation.mpi_ssh_secret_namespace,
    )
    reconciler.setup(b)
    return Built(b.complete(reconciler), reconciler)
