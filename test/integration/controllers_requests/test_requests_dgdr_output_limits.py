"""Profiler output past the parser's limits fails its request, and the operator carries on (issue #34,
defect 2): an alias bomb, an oversize and a deep document, each in the output ConfigMap of a request
whose Job completed. The peak RSS of this process (the operator runs in it) and the event loop's
longest stall are printed for the issue's note (`pytest -s`); they are figures, not assertions.
"""

from __future__ import annotations

import asyncio
import resource
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, EVENT
from integration.controllers_requests.dgdr_testlib import finish_pod, request, wait_state, write_output_text
from integration.controllers_requests.requests_testlib import apply, condition
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

REFUSED = "OutputLimitExceeded"
STALL_PROBE_INTERVAL = 0.02  # seconds between the stall probe's wake-ups
STALL_PROBE_MAX_TICKS = 100_000  # bounds the probe's loop whatever happens


def laughs(levels: int) -> str:
    """The billion-laughs shape: each anchor a list of ten aliases of the one before."""
    lines = ['l0: &l0 "lol"']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@pytest.fixture
async def longest_stall() -> AsyncIterator[list[float]]:
    """The longest time the event loop took past a probe's wake-up, in seconds (one-element list,
    updated while the test runs; the test may reset it). The loop is shared by the operator, its
    webhook and the test, on a machine shared with other work: a figure, not a bound."""
    worst = [0.0]

    async def probe() -> None:
        for _ in range(STALL_PROBE_MAX_TICKS):
            before = time.monotonic()
            await asyncio.sleep(STALL_PROBE_INTERVAL)
            worst[0] = max(worst[0], time.monotonic() - before - STALL_PROBE_INTERVAL)

    task = asyncio.create_task(probe())
    try:
        yield worst
    finally:
        task.cancel()


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        pytest.param(laughs(8), "expanded size", id="alias-bomb-8-levels"),
        pytest.param("a: " + "x" * 600_000 + "\n", "document size", id="oversize"),
        pytest.param("[" * 100_000 + "]" * 100_000, "nesting depth", id="deep"),
    ],
)
async def test_output_past_a_limit_fails_the_request_and_the_operator_carries_on(
    api: Client,
    operator: RunningOperator,
    ns: str,
    kubectl: Kubectl,
    *,
    longest_stall: list[float],
    text: str,
    limit: str,
) -> None:
    """The request turns Failed (SpecGenerated False, OutputLimitExceeded, the limit named) with one
    Warning Event; the operator keeps running and the next request of the namespace starts profiling."""
    peak_before, rss_before = peak_rss_mib(), rss_mib()
    await apply(api, request("bomb", ns))
    await wait_state(api, ns, "bomb", "Profiling")
    await write_output_text(api, "bomb", ns, text)
    await finish_pod(api, kubectl, ns, "profile-bomb", phase="Succeeded")
    # Measured from here: the operator reading the output, not the test's own (blocking) kubectl call.
    longest_stall[0] = 0.0

    failed = await wait_state(api, ns, "bomb", "Failed")
    cond = condition(failed, "SpecGenerated")
    assert (cond["status"], cond["reason"]) == ("False", REFUSED)
    assert f"{limit} limit" in cond["message"]
    assert "generatedDeployment" not in failed["status"]

    async def warnings() -> list[str]:
        events = await api.list(EVENT, namespace=ns, field_selector="involvedObject.name=bomb")
        return [e["message"] for e in events if e.get("reason") == REFUSED and e.get("type") == "Warning"]

    [message] = await eventually(warnings, until=lambda ms: len(ms) == 1)
    assert f"{limit} limit" in message

    assert operator.manager.ready
    await apply(api, request("after", ns))
    await wait_state(api, ns, "after", "Profiling")
    assert (await api.get(kinds.DGDR, "bomb", namespace=ns))["status"]["state"] == "Failed"
    print(
        f"\n{limit}: {len(text.encode())} bytes refused; process RSS {rss_before:.0f} -> {rss_mib():.0f} MiB,"
        f" peak RSS {peak_before:.0f} -> {peak_rss_mib():.0f} MiB;"
        f" longest event-loop stall {longest_stall[0] * 1000:.0f} ms"
    )


async def test_the_output_informer_holds_no_output_data(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The operator's informer of output ConfigMaps (selected by the sidecar's label) is metadata-only:
    a labelled ConfigMap reaches it without its data, which the reconciler reads live."""
    [outputs] = [
        i
        for i in operator.manager.cache.informers()
        if i.scope.resource == CONFIG_MAP and i.scope.label_selector == "dgdr.nvidia.com/name"
    ]
    await write_output_text(api, "unread", ns, laughs(8))
    cached = await eventually(lambda: _cached(outputs, f"{ns}/dgdr-output-unread"), until=bool)
    assert cached["metadata"]["labels"]["dgdr.nvidia.com/name"] == "unread"
    assert "data" not in cached


async def _cached(informer: Any, key: str) -> dict[str, Any] | None:
    found: dict[str, Any] | None = informer.store.get(key)
    return found
