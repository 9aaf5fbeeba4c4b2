"""Names of generated objects. Every rule that turns user input into a Kubernetes name lives here."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.hashing import digest

# DNS-1035 label: Services, and the value limit of labels.
MAX_LABEL_LENGTH = 63
# DNS-1123 subdomain: Deployments, DCDs, custom objects.
MAX_SUBDOMAIN_LENGTH = 253
# A pod of a Deployment is named <deployment>-<10 hex>-<5 chars>; keep room so pod hostnames fit 63.
MAX_DEPLOYMENT_NAME_LENGTH = MAX_LABEL_LENGTH - 17


def normalised_service(service: str) -> str:
    """A service key as every generated name spells it: lower case, dots as dashes (DNS-1035)."""
    return service.lower().replace(".", "-")


def service_collisions(services: Iterable[str]) -> list[tuple[str, ...]]:
    """Groups of service keys that would generate the same object names (`Frontend` and `frontend`,
    `Cache.A` and `Cache-A`): each group sorted, groups in order of their first key."""
    groups: dict[str, list[str]] = {}
    for service in sorted(services):
        groups.setdefault(normalised_service(service), []).append(service)
    return [tuple(group) for group in groups.values() if len(group) > 1]


# Length of the worker-hash suffix of worker DCD names (`-` plus 8 hex).
WORKER_HASH_SUFFIX_LENGTH = 9


def dcd_name(dgd_name: str, service: str, worker_hash: str | None = None) -> str:
    """`<dgd>-<lower(service)>`, plus `-<worker hash>` for worker, prefill and decode services (see
    workerhash.py): a worker spec edit brings a new set of worker DCDs, other edits roll in place."""
    base = f"{dgd_name}-{service.lower()}"
    return f"{base}-{worker_hash}" if worker_hash else base


def adapter_name(dgd_name: str, service: str) -> str:
    """Scaling adapter name: `<dgd>-<lower(service)>`."""
    return f"{dgd_name}-{service.lower()}"


def service_name(resource_name: str) -> str:
    """A Service name derived from a workload name: dots are not allowed in DNS-1035 labels."""
    return resource_name.replace(".", "-")


def dynamo_namespace(namespace: str, dgd_name: str, *, global_namespace: bool = False) -> str:
    """The Dynamo (runtime) namespace: `dynamo` when global, else `<ns>-<dgd with . → ->`."""
    if global_namespace:
        return consts.GLOBAL_DYNAMO_NAMESPACE
    return f"{namespace}-{dgd_name.replace('.', '-')}"


def base_model_hash(model_name: str) -> str:
    """First 8 hex of sha256(model name): label value and model-Service suffix."""
    return hashlib.sha256(model_name.encode()).hexdigest()[:8]


def model_service_name(model_name: str) -> str:
    """Headless Service of every pod serving one base model: `dynamo-model-<hash>`."""
    return f"{consts.MODEL_SERVICE_PREFIX}{base_model_hash(model_name)}"


def lws_name(dcd: str) -> str:
    """The one LeaderWorkerSet of a multinode component: `<dcd>-0`. The suffix is from the days of one
    set per replica (`<dcd>-<i>`): keeping it lets the first of those become the native-scaled set in
    place, and keeps the set's name off the component's Service (`<dcd>`)."""
    return f"{dcd}-0"


def discovery_service_account(dgd_name: str) -> str:
    """Per-graph ServiceAccount used by pods for Kubernetes-based discovery."""
    return f"{dgd_name}{consts.DISCOVERY_SA_SUFFIX}"


def short_digest(value: str) -> str:
    """8 hex characters identifying `value` (used where a name has to be shortened)."""
    return digest(value, length=8)


# Kubernetes caps label values at 63 characters; a Dynamo namespace (`<namespace>-<dgd>`) can be longer.
LABEL_VALUE_MAX = 63


def label_value(value: str) -> str:
    """`value` when it fits a label; else a stable shortened form: a prefix, "-", and its short digest.

    Every label and selector site goes through this, so a long value still selects consistently.
    """
    if len(value) <= LABEL_VALUE_MAX:
        return value
    prefix = value[: LABEL_VALUE_MAX - 9].rstrip("-_.")
    return f"{prefix}-{short_digest(value)}"


def name_problems(
    dgd_name: str, services: list[str], *, worker_hashes: Mapping[str, str] | None = None
) -> list[str]:
    """Human-readable reasons why names generated for this graph would be rejected by the API server.
    `worker_hashes` maps the worker services to the hash their names carry."""
    problems: list[str] = []
    hashes = worker_hashes or {}
    for svc in sorted(services):
        name = service_name(dcd_name(dgd_name, svc, hashes.get(svc)))
        if len(name) > MAX_LABEL_LENGTH:
            suffix = (
                f" and the {WORKER_HASH_SUFFIX_LENGTH}-character worker-hash suffix" if svc in hashes else ""
            )
            problems.append(
                f"spec.services.{svc}: generated name {name!r} is {len(name)} characters; "
                f"metadata.name plus service name{suffix} must fit {MAX_LABEL_LENGTH}"
            )
        if not _is_dns_label(name):
            problems.append(f"spec.services.{svc}: generated name {name!r} is not a valid DNS-1035 label")
    return problems


def _is_dns_label(name: str) -> bool:
    return re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", name) is not None
