"""A model's endpoints: every pod address behind the EndpointSlices of its headless Service."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict, cast

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, ObjectMeta
from dynamo_operator.internal.dynamo.status.pod_diagnosis import pod_view

# EndpointSlices carry the name of the Service they belong to in this well-known label.
SERVICE_NAME_LABEL = "kubernetes.io/service-name"


class TargetRef(TypedDict, total=False):
    kind: str
    name: str


class EndpointConditions(TypedDict, total=False):
    ready: bool  # absent (or null): ready, as the EndpointSlice API defines


class SliceEndpoint(TypedDict, total=False):
    addresses: list[str]
    conditions: EndpointConditions
    targetRef: TargetRef


class EndpointSlice(TypedDict, total=False):
    """What a model reads of an EndpointSlice (discovery.k8s.io/v1)."""

    metadata: ObjectMeta
    endpoints: list[SliceEndpoint]


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One pod address serving the model. `serving` is the slice's readiness (nil counts as ready,
    as the EndpointSlice API defines)."""

    address: str
    pod_name: str
    serving: bool
    service: str


def service_name(base_model_name: str) -> str:
    """The headless Service of the base model (created by whoever serves it, not by the model)."""
    return naming.model_service_name(base_model_name)


def base_model_hash(base_model_name: str) -> str:
    return naming.base_model_hash(base_model_name)


def address(ip: str, port: int = consts.SYSTEM_PORT) -> str:
    """`http://<ip>:<port>`, with IPv6 addresses bracketed."""
    try:
        host = f"[{ip}]" if isinstance(ipaddress.ip_address(ip), ipaddress.IPv6Address) else ip
    except ValueError:
        host = ip
    return f"http://{host}:{port}"


def endpoints_from_slices(slices: Iterable[ForeignObject]) -> list[Endpoint]:
    """Every Pod-backed address of the slices, deduplicated by address (a pod may appear in two
    slices during a slice rebalance), sorted for stable status."""
    found: dict[str, Endpoint] = {}
    for found_slice in slices:
        # As listed: the API server validated it against its schema.
        eps = cast(EndpointSlice, found_slice)
        service = ((eps.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL, "")
        for ep in eps.get("endpoints") or ():
            ref = ep.get("targetRef") or {}
            if ref.get("kind") != "Pod":
                continue
            ready = (ep.get("conditions") or {}).get("ready")
            for ip in ep.get("addresses") or ():
                addr = address(ip)
                serving = ready is not False
                previous = found.get(addr)
                if previous is None or (serving and not previous.serving):
                    found[addr] = Endpoint(addr, str(ref.get("name", "")), serving, service)
    return sorted(found.values())


def endpoints_from_pods(pods: Iterable[ForeignObject], *, service: str) -> list[Endpoint]:
    """The endpoints the EndpointSlice controller would publish for `service`, read off its Pods: every
    live pod with an IP, serving when Ready. Used where slices cannot carry the pods' addresses (the API
    server refuses loopback IPs in EndpointSlices, and simulated pods in tests have loopback IPs)."""
    found: dict[str, Endpoint] = {}
    for found_pod in pods:
        pod = pod_view(found_pod)
        meta, status = pod.get("metadata") or {}, pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            continue
        ip = status.get("podIP")
        if not ip:
            continue
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ()
        )
        addr = address(str(ip))
        found[addr] = Endpoint(
            addr, str(meta.get("name", "")), ready and not meta.get("deletionTimestamp"), service
        )
    return sorted(found.values())


def services_of(endpoints: Iterable[Endpoint]) -> list[str]:
    return sorted({e.service for e in endpoints if e.service})
