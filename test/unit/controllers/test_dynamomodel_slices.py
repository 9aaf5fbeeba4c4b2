"""The DynamoModel controller's EndpointSlices: a label-scoped informer (only slices carrying a
base-model hash, as upstream selects them), indexed by that hash; only the model Service's slices are
read, so a component Service carrying the same label changes nothing."""

from __future__ import annotations

from typing import Any, cast

import pytest
from dynamo_operator.controllers import dynamomodel as dm
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.resource import ENDPOINT_SLICE, Resource
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.dynamomodel.view import read_model
from unit.controllers.builder_testlib import informers_asked

Obj = dict[str, Any]
BASE = "org/base-model"
HASH = naming.base_model_hash(BASE)
MODEL_SERVICE = naming.model_service_name(BASE)


def endpoint_slice(name: str, *, service: str, labels: dict[str, str], ip: str, ns: str = "team") -> Obj:
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"kubernetes.io/service-name": service, **labels},
        },
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": [ip], "conditions": {"ready": True}, "targetRef": {"kind": "Pod", "name": name}}
        ],
    }


def model(name: str = "m", ns: str = "team", base: str = BASE) -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoModel",
        "metadata": {"name": name, "namespace": ns, "uid": "u-" + name},
        "spec": {"modelName": name, "baseModelName": base, "modelType": "base"},
    }


class IndexedStore:
    """A store answering `by_index` with an index function over fixed objects."""

    def __init__(self, objects: list[Obj], index: str, keys: Any) -> None:
        self._objects, self._index, self._keys = objects, index, keys

    def by_index(self, index: str, value: str) -> list[Obj]:
        assert index == self._index
        return [o for o in self._objects if value in self._keys(o)]

    def get(self, key: str) -> Obj | None:
        raise NotImplementedError

    def list(self) -> list[Obj]:
        return list(self._objects)

    def keys(self) -> list[str]:
        raise NotImplementedError


class ModelCache:
    """The plain cache as the reconciler reads models from it (by namespace)."""

    def __init__(self, models: list[Obj]) -> None:
        self._models = models

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        assert (resource, index) == (kinds.DYNAMO_MODEL, "namespace")
        return [m for m in self._models if m["metadata"]["namespace"] == value]

    def get(self, resource: Resource, key: str) -> Obj | None:
        raise NotImplementedError

    def list(self, resource: Resource, **_: Any) -> list[Obj]:
        raise AssertionError("slices are read from the scoped informer, never from the plain cache")


def reconciler(slices: list[Obj], models: list[Obj] | None = None) -> dm.DynamoModelReconciler:
    return dm.DynamoModelReconciler(
        client=cast(Any, None),
        cache=ModelCache(models or [model()]),
        recorder=cast(Any, None),
        lora=cast(Any, None),
        slices=IndexedStore(slices, dm.MODEL_INDEX, dm.slice_model_keys),
        pods=None,
    )


@pytest.mark.parametrize(
    ("labels", "ns", "keys"),
    [
        pytest.param({consts.LABEL_BASE_MODEL_HASH: HASH}, "team", [f"team/{HASH}"], id="labelled"),
        pytest.param({}, "team", [], id="no-hash-label"),
        pytest.param({consts.LABEL_BASE_MODEL_HASH: ""}, "team", [], id="empty-hash"),
    ],
)
def test_a_slice_is_indexed_by_namespace_and_base_model_hash(
    labels: dict[str, str], ns: str, keys: list[str]
) -> None:
    """`namespace/<hash>`, or nothing without the label."""
    assert (
        dm.slice_model_keys(endpoint_slice("s", service="svc", labels=labels, ip="127.0.3.1", ns=ns)) == keys
    )


def test_the_controller_watches_slices_only_through_the_scoped_informer() -> None:
    """setup() asks the cache for exactly one EndpointSlice informer, the label-scoped one."""
    asked = informers_asked("dynamomodel", reconciler([]))
    assert [selector for resource, selector in asked if resource == ENDPOINT_SLICE] == [
        consts.LABEL_BASE_MODEL_HASH
    ]


@pytest.mark.parametrize(
    ("service", "labels", "models"),
    [
        pytest.param(MODEL_SERVICE, {consts.LABEL_BASE_MODEL_HASH: HASH}, ["team/m"], id="model-service"),
        pytest.param(
            "graph-decode-1234", {consts.LABEL_BASE_MODEL_HASH: HASH}, [], id="component-service-same-hash"
        ),
        pytest.param(MODEL_SERVICE, {}, [], id="model-service-without-hash"),
        pytest.param(MODEL_SERVICE, {consts.LABEL_BASE_MODEL_HASH: "0000beef"}, [], id="another-base-model"),
    ],
)
def test_a_slice_event_reaches_the_models_of_its_model_service(
    service: str, labels: dict[str, str], models: list[str]
) -> None:
    """Mapped by hash to the models of that base model in the slice's namespace."""
    eps = endpoint_slice("s", service=service, labels=labels, ip="127.0.3.1")
    assert reconciler([]).models_of_slice(eps) == models


def test_endpoints_come_from_the_model_service_slices_only() -> None:
    """A component Service with the same hash (upstream labels it so too) adds no endpoint."""
    slices = [
        endpoint_slice(
            "model-a", service=MODEL_SERVICE, labels={consts.LABEL_BASE_MODEL_HASH: HASH}, ip="127.0.3.1"
        ),
        endpoint_slice(
            "component-a",
            service="graph-decode-1234",
            labels={consts.LABEL_BASE_MODEL_HASH: HASH},
            ip="127.0.3.9",
        ),
        endpoint_slice(
            "other-ns",
            service=MODEL_SERVICE,
            labels={consts.LABEL_BASE_MODEL_HASH: HASH},
            ip="127.0.3.5",
            ns="x",
        ),
    ]
    found = reconciler(slices)._endpoints(read_model(model()))
    assert [(e.address, e.service) for e in found] == [("http://127.0.3.1:9090", MODEL_SERVICE)]
