"""What the operator learns at start-up and hands to the controllers: flags and optional APIs, as
one `Settings` (`settings_from`).

Optional APIs are asked of discovery once per group/version (`optional_apis` names them). A 404
for the group/version, or an answer that does not list the resource, means "not served". An error
that may pass (no connection, timeout, 5xx, 429) is retried with backoff, bounded; one that will not
(401, 403, ...) or retries that run out leave the API *unknown*: it starts as not served, with a
Warning, and the CRD watch (`optional_api_watch`) settles it as soon as the caches sync.
An error is never reported as "absent".
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal import consts
from dynamo_operator.internal.client.retry import is_retriable
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext, IngressDefaults
from dynamo_operator.internal.optional_api_table import BY_NAME, OPTIONAL_APIS, OptionalApi, capabilities
from dynamo_operator.internal.settings import Settings
from dynamo_operator.optional_apis import Answer, discovery_serves
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

log = structlog.get_logger(__name__)

__all__ = ["Capabilities", "Discovery", "Settings", "detect_capabilities", "is_transient", "settings_from"]


class Discovery(Protocol):
    async def api_resources(self, group_version: str) -> list[dict[str, Any]] | None: ...


@dataclass(frozen=True, slots=True)
class DiscoveryRetry:
    """Attempts per API (the client already retried each one a few times) and the waits between them:
    about a minute in all, which covers an API server or an aggregated API that is still starting."""

    attempts: int = 6
    base_delay: float = 1.0
    max_delay: float = 20.0


DEFAULT_DISCOVERY_RETRY = DiscoveryRetry()


def settings_from(options: OperatorOptions, capabilities: Capabilities | None = None) -> Settings:
    """The reconcilers' settings: the flags under generation's names (an empty flag keeps generation's
    default) and the optional APIs detected at start-up."""
    infrastructure = {
        consts.ENV_NATS_SERVER: options.nats_address,
        consts.ENV_ETCD_ENDPOINTS: options.etcd_address,
        consts.ENV_PROMETHEUS_ENDPOINT: options.prometheus_endpoint,
        consts.ENV_MODEL_EXPRESS_URL: options.model_express_url,
    }
    defaults = GenContext(namespace="")
    generation = GenContext(
        namespace="",  # each namespace's context is this one with its namespace (Settings.gen_context)
        ingress=IngressDefaults(
            controller_class_name=options.ingress_controller_class_name,
            tls_secret_name=options.ingress_controller_tls_secret_name,
            host_suffix=options.ingress_host_suffix,
            virtual_service_gateway=options.istio_virtual_service_gateway,
        ),
        planner_cluster_role=options.planner_cluster_role_name,
        epp_cluster_role=options.epp_cluster_role_name,
        mpi_ssh_secret_name=options.mpi_run_ssh_secret_name or defaults.mpi_ssh_secret_name,
        mpi_ssh_secret_namespace=options.mpi_run_ssh_secret_namespace,
        discovery_backend=options.discovery_backend or defaults.discovery_backend,
        infrastructure_env={env: value for env, value in infrastructure.items() if value},
        operator_version="" if options.operator_version == "unknown" else options.operator_version,
        grove_termination_delay=options.grove_termination_delay,
        volcano_on_grove=options.volcano_scheduler,
    )
    return Settings(
        namespace=options.namespace or None,
        capabilities=capabilities or Capabilities(),
        generation=generation,
        profiling_cluster_role=options.dgdr_profiling_cluster_role_name,
        grove=options.enable_grove or "false",
        lora_unload_grace=options.lora_unload_grace,
    )


def is_transient(err: BaseException) -> bool:
    """Worth asking discovery again: no answer, a timeout, a 5xx or a 429 (a GET is idempotent)."""
    return isinstance(err, TimeoutError) or is_retriable(err, idempotent=True)


class _Unknown:
    """Discovery could not tell (an error that would not pass, or retries that ran out)."""


UNKNOWN = _Unknown()
# What discovery said of one group/version: its resources, None for a 404, or UNKNOWN.
Listing = list[dict[str, Any]] | None | _Unknown


async def list_group_version(
    discovery: Discovery,
    group_version: str,
    *,
    retry: DiscoveryRetry = DEFAULT_DISCOVERY_RETRY,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> Listing:
    """Discovery's resources of `group_version`, retried while the error may pass; UNKNOWN when it
    could not tell (see the module docstring)."""
    jitter = rng or random.Random()

    def wait(state: RetryCallState) -> float:
        ceiling = min(retry.max_delay, retry.base_delay * 2.0 ** (state.attempt_number - 1))
        return ceiling / 2 + jitter.uniform(0, ceiling / 2)

    def before_sleep(state: RetryCallState) -> None:
        err = state.outcome.exception() if state.outcome is not None else None
        log.info(
            "API discovery failed; retrying",
            group_version=group_version,
            attempt=state.attempt_number,
            error=str(err),
        )

    try:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(retry.attempts),
            wait=wait,
            retry=retry_if_exception(is_transient),
            sleep=sleep,
            before_sleep=before_sleep,
            reraise=True,
        ):
            with attempt:
                resources = await discovery.api_resources(group_version)
    except Exception as err:  # detection must never stop the operator from starting
        log.warning(
            "API discovery failed; starting without its APIs until their CRDs are seen",
            apis=sorted(api.name for api in OPTIONAL_APIS if api.group_version == group_version),
            group_version=group_version,
            error=f"{type(err).__name__}: {err}",
        )
        return UNKNOWN
    return resources


def answer_of(api: OptionalApi, listing: Listing) -> Answer:
    """Whether `api` is served, from the listing of its group/version (None when it could not tell)."""
    return None if isinstance(listing, _Unknown) else discovery_serves(api, listing)


async def ask(
    discovery: Discovery,
    api: OptionalApi,
    *,
    retry: DiscoveryRetry = DEFAULT_DISCOVERY_RETRY,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> Answer:
    """Whether discovery serves `api`; None when it could not tell (see the module docstring)."""
    return answer_of(
        api, await list_group_version(discovery, api.group_version, retry=retry, sleep=sleep, rng=rng)
    )


async def detect_answers(
    discovery: Discovery,
    *,
    retry: DiscoveryRetry = DEFAULT_DISCOVERY_RETRY,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rng: random.Random | None = None,
) -> dict[str, Answer]:
    """Every optional API's answer from discovery: each group/version asked once (Grove's PodCliqueSet
    and ClusterTopologyBinding share grove.io/v1alpha1), the group/versions concurrently."""
    group_versions = sorted({api.group_version for api in OPTIONAL_APIS})
    listings = await asyncio.gather(
        *(list_group_version(discovery, gv, retry=retry, sleep=sleep, rng=rng) for gv in group_versions)
    )
    by_group_version = dict(zip(group_versions, listings, strict=True))
    return {api.name: answer_of(api, by_group_version[api.group_version]) for api in OPTIONAL_APIS}


def capabilities_from_answers(answers: Mapping[str, Answer]) -> Capabilities:
    """Unknown counts as not served *for now*: nothing is generated for an API that may be missing."""
    return capabilities(BY_NAME[name] for name, answer in answers.items() if answer)


async def detect_capabilities(
    discovery: Discovery,
    *,
    retry: DiscoveryRetry = DEFAULT_DISCOVERY_RETRY,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Capabilities:
    """The optional APIs discovery says are served (see the module docstring), logged once."""
    answers = await detect_answers(discovery, retry=retry, sleep=sleep)
    unknown = sorted(name for name, answer in answers.items() if answer is None)
    capabilities = capabilities_from_answers(answers)
    log.info(
        "Detected optional APIs",
        unknown=unknown,
        **{name: bool(answer) for name, answer in answers.items()},
    )
    return capabilities
