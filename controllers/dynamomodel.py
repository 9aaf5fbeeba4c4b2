"""DynamoModel reconciler: finds the pods serving a model and, for LoRA models, loads the adapter.

Endpoints come from the EndpointSlices of the base model's headless Service (`dynamo-model-<hash>`,
created by the graph/component that declares `modelRef`): a label-scoped informer holds only slices
carrying a base-model hash (upstream's selection), indexed by it. A LoRA adapter is
POSTed to every serving endpoint on each reconcile (the call is idempotent) and the model is looked
at again every 30 s until every endpoint has it. Base models are never contacted.

Where the slices of the Service carry no endpoint at all while pods are selected by it, the endpoints
are read off those Pods instead (a label-scoped Pod informer, metadata and status only): the API
server refuses loopback addresses in EndpointSlices, so simulated pods with 127.0.0.0/8 IPs (our test
clusters) never appear in slices. In a real cluster slices are populated and are the only source.

Deletion of a LoRA model runs through the `nvidia.com/finalizer` finalizer: DELETE the adapter on
every endpoint. Failed unloads are retried (every 10 s) until the grace (`--lora-unload-grace`, 60 s)
after deletion was requested is over, then the finalizer is removed anyway with a Warning Event: an
unreachable or broken pod must not keep a model object alive forever, and a pod that misses the
DELETE loses the adapter on its next restart anyway. Each attempt is bounded by the LoRA client's 30 s
batch timeout.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

import structlog
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import ChildClient, StatusWriter
from dynamo_operator.internal.cache.interface import StoreReader
from dynamo_operator.internal.cache.transform import keep_fields
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import ENDPOINT_SLICE, POD, Resource, object_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.builder import Builder, Built, InformerOptions
from dynamo_operator.internal.controller.predicates import Funcs
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.dgdr.names import FINALIZER
from dynamo_operator.internal.dynamo.dynamomodel import endpoints as ep
from dynamo_operator.internal.dynamo.dynamomodel.status import (
    LoadResult,
    ModelStatus,
    compute,
    model_status,
    to_load,
)
from dynamo_operator.internal.dynamo.dynamomodel.view import ModelView, read_model
from dynamo_operator.internal.events import Recorder
from dynamo_operator.internal.lora.client import LoraApi, LoraClient
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.observability.reconcile_metrics import observed
from dynamo_operator.internal.settings import Settings
from dynamo_operator.internal.timestamps import parse_rfc3339

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

UNLOAD_GRACE = 60.0
UNLOAD_RETRY = 10.0


class ModelReader(Protocol):
    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def list(
        self, resource: Resource, *, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> builtins.list[Obj]: ...
    def by_index(self, resource: Resource, index: str, value: str) -> builtins.list[Obj]: ...


def _meta(obj: Mapping[str, Any], field: str) -> Any:
    return (obj.get("metadata") or {}).get(field)


# Spec edits and the start of deletion (which bumps a custom resource's generation, but say it
# explicitly); status writes of our own do not retrigger.
spec_or_deletion_changed = Funcs(
    on_update=lambda old, new: (
        _meta(old, "generation") != _meta(new, "generation")
        or _meta(old, "deletionTimestamp") != _meta(new, "deletionTimestamp")
    )
)


class DynamoModelReconciler:
    """Reports a model's endpoints; loads (and on deletion unloads) LoRA adapters on them."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ModelReader,
        recorder: Recorder,
        lora: LoraApi,
        slices: StoreReader,
        pods: StoreReader | None = None,
        clock: Clock | None = None,
        unload_grace: float = UNLOAD_GRACE,
    ) -> None:
        self._client, self._cache, self._recorder, self._lora = client, cache, recorder, lora
        self._unload_grace = unload_grace
        # EndpointSlices carrying a base-model-hash label (`MODEL_SLICES`), indexed by it.
        self._slices = slices
        # Pods carrying a base-model-hash label (see the module docstring); None: slices only.
        self._pods = pods
        self._clock: Clock = clock or RealClock()
        self._status = StatusWriter(client, kinds.DYNAMO_MODEL)

    def setup(self, b: Builder) -> None:
        """For models (spec changes, deletion); Watches EndpointSlices of model Services, mapped by the
        Service's base-model hash to the models in that namespace."""
        b.for_(kinds.DYNAMO_MODEL, predicates=(spec_or_deletion_changed,))
        b.watches(ENDPOINT_SLICE, self.models_of_slice, informer=MODEL_SLICES)
        b.watches(POD, self.models_of_pod, informer=MODEL_PODS)

    def models_of_slice(self, eps: Obj) -> list[str]:
        """Models whose base model the slice's model Service serves (by the base-model-hash label
        the EndpointSlice controller copies from the Service; component Services carry it too, but
        only the model Service's slices are read)."""
        service = str((_meta(eps, "labels") or {}).get(ep.SERVICE_NAME_LABEL, ""))
        if not service.startswith(consts.MODEL_SERVICE_PREFIX):
            return []
        return self._models_with_hash(eps)

    def models_of_pod(self, pod: Obj) -> list[str]:
        """Models whose base model the pod serves (by its base-model-hash label)."""
        return self._models_with_hash(pod)

    def _models_with_hash(self, obj: Obj) -> list[str]:
        labelled = base_model_of(obj)
        if labelled is None:
            return []
        namespace, model_hash = labelled
        return [
            object_key(m)
            for m in self._cache.by_index(kinds.DYNAMO_MODEL, "namespace", namespace)
            if ep.base_model_hash(str((m.get("spec") or {}).get("baseModelName", ""))) == model_hash
        ]

    def _endpoints(self, model: ModelView) -> list[ep.Endpoint]:
        service = ep.service_name(model.base_model)
        model_hash = ep.base_model_hash(model.base_model)
        slices = [
            eps
            for eps in self._slices.by_index(MODEL_INDEX, f"{model.namespace}/{model_hash}")
            if (_meta(eps, "labels") or {}).get(ep.SERVICE_NAME_LABEL) == service
        ]
        found = ep.endpoints_from_slices(slices)
        if found or self._pods is None:
            return found
        pods = [
            p
            for p in self._pods.by_index("namespace", model.namespace)
            if (_meta(p, "labels") or {}).get(consts.LABEL_BASE_MODEL_HASH) == model_hash
        ]
        return ep.endpoints_from_pods(pods, service=service)

    async def reconcile(self, key: str) -> Result:
        """Read → finalizer → endpoints (and LoRA loads) → status."""
        raw = self._cache.get(kinds.DYNAMO_MODEL, key)
        if raw is None:
            return Result()
        model = read_model(raw)
        if model.deletion_timestamp:
            return await self._finalize(model) if FINALIZER in model.finalizers else Result()
        if model.lora and FINALIZER not in model.finalizers:
            model = await self._set_finalizers(model, [*model.finalizers, FINALIZER])
        elif not model.lora and FINALIZER in model.finalizers:
            model = await self._set_finalizers(model, [f for f in model.finalizers if f != FINALIZER])

        endpoints = self._endpoints(model)
        results: dict[str, LoadResult] | None = None
        if model.lora and endpoints:
            results = await self._load(model, to_load(endpoints))
        status = compute(model.model, endpoints, results)
        await self._write(model, status)
        return Result(requeue_after=status.requeue_after)

    async def _load(self, model: ModelView, targets: Sequence[ep.Endpoint]) -> dict[str, LoadResult]:
        addresses = [e.address for e in targets]
        if not model.source:
            missing = LoadResult(False, "source URI is required for LoRA models")
            return dict.fromkeys(addresses, missing)
        outcomes = await self._lora.load(addresses, lora_name=model.model_name, source_uri=model.source)
        return dict(zip(addresses, outcomes, strict=True))

    async def _write(self, model: ModelView, status: ModelStatus) -> None:
        new = model_status(
            model.model.get("status") or {}, status, generation=model.generation, now=self._clock.wall()
        )
        if not await self._status.write(model.raw, new):
            return  # nothing changed: the Events were already recorded when it did
        for event in status.events:
            kind: Literal["Normal", "Warning"] = "Warning" if event.type == "Warning" else "Normal"
            self._recorder.event(model.raw, type=kind, reason=event.reason, message=event.message)

    async def _set_finalizers(self, model: ModelView, finalizers: list[str]) -> ModelView:
        # resourceVersion: a stale view must not overwrite a finalizer list someone else just changed.
        body = {"metadata": {"finalizers": finalizers, "resourceVersion": model.resource_version}}
        return read_model(
            await self._client.patch(kinds.DYNAMO_MODEL, model.name, body, namespace=model.namespace)
        )

    async def _finalize(self, model: ModelView) -> Result:
        if model.lora:
            endpoints = self._endpoints(model)
            if endpoints:
                outcomes = await self._lora.unload([e.address for e in endpoints], lora_name=model.model_name)
                failed = [o.error for o in outcomes if not o.ok]
                if failed:
                    message = f"Failed to unload LoRA from {len(failed)} endpoint(s): {'; '.join(failed)}"
                    self._recorder.event(
                        model.raw, type="Warning", reason="LoRAUnloadFailed", message=message
                    )
                    deleted = parse_rfc3339(model.deletion_timestamp)
                    waited = (self._clock.wall() - deleted).total_seconds() if deleted else self._unload_grace
                    if waited < self._unload_grace:
                        return Result(requeue_after=UNLOAD_RETRY)
                    log.warning("giving up LoRA unload", model=object_key(model.raw), waited=waited)
                else:
                    message = f"Unloaded LoRA from {len(outcomes)} endpoint(s)"
                    self._recorder.event(model.raw, type="Normal", reason="LoRAUnloaded", message=message)
        with contextlib.suppress(errors.NotFound):
            await self._set_finalizers(model, [f for f in model.finalizers if f != FINALIZER])
        return Result()


CONTROLLER_NAME = "dynamomodel"


# Pods carrying a base-model hash, status only: the endpoints' readiness beside their slices.
MODEL_PODS = InformerOptions(label_selector=consts.LABEL_BASE_MODEL_HASH, transform=keep_fields("status"))

MODEL_INDEX = "base-model"
"""Index of the slice informer: `namespace/<base-model hash>`."""


def base_model_of(obj: Obj) -> tuple[str, str] | None:
    """(namespace, base-model hash) of a labelled pod or slice; None without the label."""
    model_hash = (_meta(obj, "labels") or {}).get(consts.LABEL_BASE_MODEL_HASH)
    namespace = _meta(obj, "namespace")
    return (str(namespace), str(model_hash)) if model_hash and namespace else None


def slice_model_keys(eps: Obj) -> list[str]:
    """`namespace/<base-model hash>` of a slice ([] without the label)."""
    labelled = base_model_of(eps)
    return ["/".join(labelled)] if labelled else []


MODEL_SLICES = InformerOptions(
    label_selector=consts.LABEL_BASE_MODEL_HASH, indexers={MODEL_INDEX: slice_model_keys}
)
"""Only the EndpointSlices of model Services: the EndpointSlice controller copies a Service's labels
onto its slices, and a model Service carries the base-model hash, which upstream selects slices by.
Every other slice of the cluster (one or more per Service) is neither watched nor cached."""


def build(mgr: Manager, settings: Settings) -> Built[DynamoModelReconciler]:
    """The reconciler (with the process's one LoRA client, closed when the manager stops) and its
    controller."""
    lora_client = LoraClient()
    b = mgr.builder(CONTROLLER_NAME)
    reconciler = DynamoModelReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        lora=lora_client,
        slices=b.informer(ENDPOINT_SLICE, MODEL_SLICES).store,
        pods=b.informer(POD, MODEL_PODS).store,
        unload_grace=settings.lora_unload_grace,
    )
    reconciler.setup(b)

    async def close_lora_client_at_stop() -> None:
        try:
            await asyncio.Event().wait()  # until the manager cancels its runnables
        finally:
            await lora_client.close()

    mgr.add_runnable(close_lora_client_at_stop, needs_leader=False, name="lora-client")
    return Built(b.complete(observed(reconciler, kinds.DYNAMO_MODEL)), reconciler)
