"""What the API server itself counted: its `apiserver_request_total` for writes and LIST/WATCH
requests, the watch events it sent (`apiserver_watch_events_total`, `apiserver_watch_events_sizes`)
and the watchers it terminated (`apiserver_terminated_watchers_total`); and a CPU profile of it.

The metrics have no client label, so they count every client's writes and every watcher's events:
the operator's (or the write floor's), the controller-manager's, scheduler's and kwok's. Sampled
around two runs of the same graphs, the difference shows what each run's pace and watches cost the
cluster (e.g. Deployment and ReplicaSet status updates per graph). `served_counts` and `per_graph`
are pure (unit-tested).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import aiohttp
from dynamo_operator.internal.client.client import Client
from prometheus_client.parser import text_string_to_metric_families

SERVED_VERBS = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE"})
RESTART_VERBS = frozenset({"LIST", "WATCH"})
"""Counted too, and shown however few: a watcher the API server dropped comes back as a LIST and WATCH."""
COUNTED_VERBS = SERVED_VERBS | RESTART_VERBS
TERMINATED = "apiserver_terminated_watchers_total"
WATCH_SAMPLES = {
    "apiserver_watch_events_total": "WATCH-EVENTS",
    "apiserver_watch_events_sizes_sum": "WATCH-KB",
}


async def apiserver_served(api: Client) -> Counter[str]:
    """The API server's counts so far (`served_counts` of its /metrics)."""
    return served_counts((await _get(api, "/metrics")).decode())


async def cpu_profile(api: Client, seconds: int, out: Path) -> None:
    """A CPU profile of the API server over the next `seconds` (its /debug/pprof), written to `out`
    for `go tool pprof` (e.g. `-top -diff_base floor.pprof operator.pprof`)."""
    body = await _get(api, "/debug/pprof/profile", params={"seconds": str(seconds)}, wait=seconds)
    await asyncio.to_thread(out.write_bytes, body)


async def _get(api: Client, path: str, *, params: dict[str, str] | None = None, wait: float = 0) -> bytes:
    """The body of a GET of one of the API server's own endpoints, with `api`'s credentials (a
    session of its own: the client's request path decodes JSON). `wait`: seconds the server takes
    on purpose before it answers."""
    auth = await api.config.credentials.authorization()
    async with (
        aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=wait + 60)) as session,
        session.get(
            api.config.server + path,
            params=params,
            ssl=api.config.ssl_context,
            headers={"Authorization": auth} if auth else {},
        ) as resp,
    ):
        return await resp.read()


COUNTED_NAMES = frozenset({
    "apiserver_request_total",
    TERMINATED,
    *WATCH_SAMPLES,
    "apiserver_watch_events_sizes",  # the histogram's HELP and TYPE lines
})  # fmt: skip


def counted_lines(metrics_text: str) -> str:
    """The lines of `metrics_text` that `served_counts` reads (their samples, HELP and TYPE), the rest
    dropped before parsing: the API server's /metrics is megabytes of histograms (1.7 MB on a fresh
    local cluster, more after a run), and parsing all of it took 0.7 s of CPU there, these lines
    alone 0.02 s."""

    def name(line: str) -> str:
        if line.startswith("#"):  # "# HELP name text" or "# TYPE name type"
            words = line.split(" ", 3)
            return words[2] if len(words) > 2 else ""
        return line.partition("{")[0].partition(" ")[0]

    return "".join(line for line in metrics_text.splitlines(keepends=True) if name(line) in COUNTED_NAMES)


def served_counts(metrics_text: str) -> Counter[str]:
    """Write requests in an API server's /metrics text, by "VERB resource[/subresource]" (LIST and WATCH
    too), the watch events it sent, all watchers together, by "WATCH-EVENTS resource" and "WATCH-KB
    resource", and the watchers it closed for falling behind, by "TERMINATED-WATCHERS resource"."""
    served: Counter[str] = Counter()
    for family in text_string_to_metric_families(counted_lines(metrics_text)):
        for sample in family.samples:
            labels = sample.labels
            if sample.name in WATCH_SAMPLES:
                # Events sent to every watcher of the kind (and their bytes): what watches cost.
                what = labels.get("resource") or labels.get("kind", "")
                served[f"{WATCH_SAMPLES[sample.name]} {what}"] += int(
                    sample.value / 1024 if sample.name.endswith("_sum") else sample.value
                )
                continue
            if sample.name == TERMINATED:
                # Watchers the API server closed because they could not keep up with their events.
                served[f"TERMINATED-WATCHERS {labels.get('resource', '')}"] += int(sample.value)
                continue
            if sample.name != "apiserver_request_total" or labels.get("verb") not in COUNTED_VERBS:
                continue
            what = labels.get("resource", "") + (
                f"/{labels['subresource']}" if labels.get("subresource") else ""
            )
            served[f"{labels['verb']} {what}"] += int(sample.value)
    return served


def per_graph(served: Counter[str], n: int) -> dict[str, float]:
    """Counts per graph by key, the ones that happened at least once per ten graphs; reads (LIST, WATCH)
    and terminated watchers as plain counts, whenever there was one."""

    def rare(key: str) -> bool:
        return key.startswith("TERMINATED") or key.split(" ", 1)[0] in RESTART_VERBS

    return {
        k: (v if rare(k) else round(v / n, 1))
        for k, v in sorted(served.items())
        if v >= n / 10 or (rare(k) and v)
    }
