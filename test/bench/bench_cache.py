"""Informer/cache figures against a real kube-apiserver (not a test: it prints numbers).

    PYTHONSAFEPATH=1 .venv/bin/python test/bench/bench_cache.py [--kubeconfig PATH] [--quick]

Without --kubeconfig (or $KUBECONFIG) it starts its own local control plane (hack/localcluster.py)
and stops it at the end. Every phase is bounded in count and time. Figures:

1. watch-event → handler latency (p50/p99) while ~1,000 writes/s (then a gentler 200/s) hit watched
   ConfigMaps for 10 s each;
   measured from the moment the write was sent, and from the moment its response came back
   (an event may beat the response: those count as 0).
2. memory per cached object: N typical Deployments (as the server returns them: status, labels,
   managedFields) synced into a cache; tracemalloc bytes retained / N, full and metadata-only.
   Then the in-process ceiling of the watch path: recorded watch bytes → events → store → handler.
3. time to list + sync 10,000 ConfigMaps into a fresh informer (pages of 500), and RSS growth.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hack"))
import localcluster
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.cache import Cache
from dynamo_operator.internal.cache.informer import SharedInformer
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import Scope
from dynamo_operator.internal.cache.transform import Transform, metadata_only
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.client import Client, _events
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, NAMESPACE
from dynamo_operator.internal.stored_version import speaking_v1alpha1

# -- helpers -------------------------------------------------------------------------------------


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bounded_gather(n: int, jobs: list[Callable[[], Awaitable[Any]]]) -> None:
    """Run `jobs` with at most `n` in flight."""
    it = iter(jobs)

    async def worker() -> None:
        for job in it:
            await job()

    await asyncio.gather(*(worker() for _ in range(n)))


async def fresh_namespace(api: Client, name: str) -> str:
    with contextlib.suppress(errors.AlreadyExists):
        await api.create(NAMESPACE, {"metadata": {"name": name}})
    return name


async def wait_until(predicate: Callable[[], bool], within: float) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


class Latency:
    """Handler that timestamps updates of the watched ConfigMaps."""

    def __init__(self) -> None:
        self.sent: dict[str, float] = {}  # "name@value" -> perf_counter when the write was sent
        self.acked: dict[str, float] = {}
        self.from_send: list[float] = []
        self.from_ack: list[float] = []
        self.pending: dict[str, float] = {}  # events seen before the ack came back

    def on_add(self, obj: Obj) -> None:
        pass

    def on_update(self, old: Obj, new: Obj) -> None:
        now = time.perf_counter()
        tag = f"{new['metadata']['name']}@{new.get('data', {}).get('seq')}"
        sent = self.sent.pop(tag, None)
        if sent is None:
            return
        self.from_send.append(now - sent)
        ack = self.acked.pop(tag, None)
        if ack is None:
            self.pending[tag] = now
        else:
            self.from_ack.append(max(0.0, now - ack))

    def on_delete(self, obj: Obj) -> None:
        pass

    def ack(self, tag: str) -> None:
        now = time.perf_counter()
        if tag in self.pending:
            self.pending.pop(tag)
            self.from_ack.append(0.0)
        else:
            self.acked[tag] = now


# -- 1. latency ----------------------------------------------------------------------------------


async def bench_latency(api: Client, *, rate: int, seconds: float, objects: int) -> None:
    ns = await fresh_namespace(api, "bench-latency")
    names = [f"lat-{i}" for i in range(objects)]
    await bounded_gather(
        32,
        [
            lambda n=n: api.apply(
                CONFIG_MAP, {"metadata": {"name": n, "namespace": ns}, "data": {"seq": "0"}}
            )
            for n in names
        ],
    )
    cache = Cache(api)
    informer = cache.informer(CONFIG_MAP, namespace=ns)
    probe = Latency()
    informer.add_event_handler(probe)
    await cache.start()
    assert await cache.wait_for_sync(60)

    total = int(rate * seconds)
    cpu_before = time.process_time()
    started = time.perf_counter()
    next_index = 0

    async def writer() -> None:
        nonlocal next_index
        while next_index < total:
            i = next_index
            next_index += 1
            due = started + i / rate  # open-loop pacing: a fixed schedule, not "as fast as acks come"
            if (delay := due - time.perf_counter()) > 0:
                await asyncio.sleep(delay)
            name = names[i % objects]
            seq = str(i + 1)
            tag = f"{name}@{seq}"
            probe.sent[tag] = time.perf_counter()
            await api.patch(CONFIG_MAP, name, {"data": {"seq": seq}}, namespace=ns)
            probe.ack(tag)

    await asyncio.wait_for(asyncio.gather(*(writer() for _ in range(64))), timeout=seconds * 6 + 30)
    write_seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu_before
    await wait_until(lambda: len(probe.from_send) >= total, within=30)
    await cache.stop()
    got = len(probe.from_send)
    ms = 1000.0
    achieved = total / write_seconds
    print(
        f"[latency] target {rate}/s: {total} writes in {write_seconds:.1f} s ({achieved:,.0f}/s achieved), "
        f"{got} events delivered; this process used {cpu:.1f} s CPU ({cpu / write_seconds:.0%} of one core)"
    )
    print(
        f"[latency] write sent → handler:   p50 {pct(probe.from_send, 0.5) * ms:6.1f} ms   "
        f"p99 {pct(probe.from_send, 0.99) * ms:6.1f} ms   max {max(probe.from_send) * ms:6.1f} ms"
    )
    print(
        f"[latency] write acked → handler:  p50 {pct(probe.from_ack, 0.5) * ms:6.1f} ms   "
        f"p99 {pct(probe.from_ack, 0.99) * ms:6.1f} ms   "
        f"({sum(1 for v in probe.from_ack if v == 0.0)} events arrived before their ack)"
    )


# -- 1b. in-process capacity of the watch path ---------------------------------------------------


class _Chunks:
    """Stands in for aiohttp's response body: yields a recorded stream in 64 KiB chunks."""

    def __init__(self, body: bytes) -> None:
        self.content = self
        self._body = body

    async def iter_any(self) -> AsyncIterator[bytes]:
        for i in range(0, len(self._body), 65536):
            yield self._body[i : i + 65536]


async def bench_watch_path(api: Client, *, events: int) -> None:
    """How many MODIFIED events/s one core turns from raw watch bytes into handler calls."""
    ns = await fresh_namespace(api, "bench-latency")
    template = await api.get(CONFIG_MAP, "lat-0", namespace=ns)
    lines = []
    for i in range(events):
        meta = {**template["metadata"], "name": f"lat-{i % 200}", "resourceVersion": str(10_000 + i)}
        lines.append(orjson.dumps({"type": "MODIFIED", "object": {**template, "metadata": meta}}))
    body = b"\n".join(lines) + b"\n"
    informer = SharedInformer(api, Scope(CONFIG_MAP, ns))
    informer.replace([])
    seen = 0

    class Count:
        def on_add(self, obj: Obj) -> None:
            nonlocal seen
            seen += 1

        def on_update(self, old: Obj, new: Obj) -> None:
            nonlocal seen
            seen += 1

        def on_delete(self, obj: Obj) -> None:
            pass

    informer.add_event_handler(Count())
    t0 = time.perf_counter()
    async for event in _events(_Chunks(body), CONFIG_MAP):  # type: ignore[arg-type]
        informer.upsert(event.object)
    elapsed = time.perf_counter() - t0
    print(
        f"[watch-path] {events} events ({len(body) / events:,.0f} B each) decoded and dispatched in "
        f"{elapsed:.2f} s: {events / elapsed:,.0f} events/s on one core "
        f"({elapsed / events * 1e6:.0f} µs/event; {seen} handler calls)"
    )


# -- 2. memory per object ------------------------------------------------------------------------


def deployment(name: str, ns: str) -> Obj:
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "bench", "tier": "web"}
    return {
        "metadata": {"name": name, "namespace": ns, "labels": labels, "annotations": {"team": "inference"}},
        "spec": {
            "replicas": 0,  # no pods: the figure is about the Deployment object itself
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.0",
                            "args": ["--model", "Qwen/Qwen3-0.6B", "--port", "8000"],
                            "env": [{"name": "DYN_LOG", "value": "info"}, {"name": "POD_NAME", "value": "x"}],
                            "ports": [{"name": "http", "containerPort": 8000}],
                            "resources": {
                                "requests": {"cpu": "1", "memory": "4Gi"},
                                "limits": {"nvidia.com/gpu": "1"},
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/health", "port": 8000},
                                "periodSeconds": 10,
                            },
                        }
                    ]
                },
            },
        },
    }


@contextlib.contextmanager
def traced() -> Iterator[Callable[[], int]]:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    try:
        yield lambda: tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


async def bench_memory(api: Client, *, count: int) -> None:
    ns = await fresh_namespace(api, "bench-memory")
    await bounded_gather(
        32, [lambda i=i: api.apply(DEPLOYMENT, deployment(f"dep-{i}", ns)) for i in range(count)]
    )
    # Let the deployment controller write status (observedGeneration, conditions) like in real life.
    sample = await api.get(DEPLOYMENT, f"dep-{count - 1}", namespace=ns)
    for _ in range(100):
        if sample.get("status", {}).get("conditions"):
            break
        await asyncio.sleep(0.1)
        sample = await api.get(DEPLOYMENT, f"dep-{count - 1}", namespace=ns)
    wire = len(orjson.dumps(sample))
    stripped = len(
        orjson.dumps(
            {**sample, "metadata": {k: v for k, v in sample["metadata"].items() if k != "managedFields"}}
        )
    )
    print(
        f"[memory] a typical Deployment: {wire} bytes of JSON on the wire, {stripped} without managedFields"
    )

    async def sync(transform: Transform | None) -> SharedInformer:
        cache = Cache(api)
        informer = cache.informer(DEPLOYMENT, namespace=ns, transform=transform)
        await cache.start()
        assert await cache.wait_for_sync(120)
        await cache.stop()  # keep the store, drop the watch machinery
        gc.collect()
        return informer

    for label, transform in (("full object", None), ("metadata-only", metadata_only)):
        # RSS without tracemalloc (its own bookkeeping would dominate), then the exact Python heap.
        gc.collect()
        rss_before = psutil.Process().memory_info().rss
        informer = await sync(transform)
        rss = psutil.Process().memory_info().rss - rss_before
        del informer
        with traced() as retained:
            informer = await sync(transform)
            held = retained()
        n = len(informer.store)
        print(
            f"[memory] {label:>13}: {n} Deployments cached, {held / n:,.0f} B/object retained (tracemalloc), "
            f"RSS +{rss / n:,.0f} B/object"
        )
        del informer
        gc.collect()


# -- 3. list + sync 10k --------------------------------------------------------------------------


async def bench_list_sync(api: Client, *, count: int) -> None:
    ns = await fresh_namespace(api, "bench-list")
    existing = sum(o["metadata"]["name"].startswith("cm-") for o in await api.list(CONFIG_MAP, namespace=ns))
    started = time.perf_counter()
    await bounded_gather(
        64,
        [
            lambda i=i: api.apply(
                CONFIG_MAP,
                {"metadata": {"name": f"cm-{i:05d}", "namespace": ns}, "data": {"key": f"value-{i}"}},
            )
            for i in range(existing, count)
        ],
    )
    if count > existing:
        print(f"[list] created {count - existing} ConfigMaps in {time.perf_counter() - started:.1f} s")
    for attempt in range(3):
        cache = Cache(api)
        informer = cache.informer(CONFIG_MAP, namespace=ns)
        t0 = time.perf_counter()
        await cache.start()
        assert await cache.wait_for_sync(300)
        elapsed = time.perf_counter() - t0
        await cache.stop()
        print(
            f"[list] run {attempt + 1}: list+sync of {len(informer.store)} ConfigMaps in {elapsed:.2f} s "
            f"({len(informer.store) / elapsed:,.0f} objects/s)"
        )
        del informer, cache
    with traced() as retained:
        cache = Cache(api)
        informer = cache.informer(CONFIG_MAP, namespace=ns)
        await cache.start()
        assert await cache.wait_for_sync(300)
        await cache.stop()
        gc.collect()
        held = retained()
    print(f"[list] store of {len(informer.store)} ConfigMaps retains {held / 2**20:.1f} MiB (tracemalloc)")


# -- driver --------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def target(kubeconfig: str | None) -> AsyncIterator[Client]:
    if kubeconfig:
        async with await Client.from_kubeconfig(
            kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        ) as api:
            yield api
        return
    cluster = localcluster.LocalCluster(f"bench-cache-{os.getpid()}", owner_pid=os.getpid(), nodes=1)
    with localcluster.running(cluster):
        async with await Client.from_kubeconfig(
            cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        ) as api:
            yield api


async def main(args: argparse.Namespace) -> None:
    async with target(args.kubeconfig) as api:
        print(f"API server: {api.config.server}; python {sys.version.split()[0]}")
        for rate in args.rate:
            await bench_latency(api, rate=rate, seconds=args.seconds, objects=200)
        await bench_watch_path(api, events=20_000)
        await bench_memory(api, count=args.deployments)
        await bench_list_sync(api, count=args.configmaps)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"))
    parser.add_argument(
        "--rate", type=int, nargs="+", default=[1000, 200], help="target writes (= watch events) per second"
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--deployments", type=int, default=1000)
    parser.add_argument("--configmaps", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ns = parser.parse_args()
    if ns.quick:
        ns.seconds, ns.deployments, ns.configmaps = 2.0, 100, 1000
    asyncio.run(main(ns))
