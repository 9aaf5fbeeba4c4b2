"""Workqueue throughput in-process: keys/s through add → get → done with N concurrent workers.

Standalone (not a test): `PYTHONSAFEPATH=1 .venv/bin/python test/bench/bench_workqueue.py [--keys N]`.
Prints one line per scenario (best and median of --repeat runs: shared machines are noisy).
Bounded: each run handles a fixed number of keys.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from dynamo_operator.internal.workqueue import RateLimitingQueue


async def run_scenario(*, keys: int, workers: int, distinct: int, named: bool) -> tuple[float, int, float]:
    """Feed `keys` adds over `distinct` keys while `workers` drain; returns (keys/s, handled, seconds)."""
    queue: RateLimitingQueue[str] = RateLimitingQueue(name="bench" if named else None)
    handled = 0
    names = [f"ns/obj-{i}" for i in range(distinct)]

    async def worker() -> None:
        nonlocal handled
        while (key := await queue.get()) is not None:
            handled += 1
            queue.forget(key)
            queue.done(key)

    async def producer() -> None:
        for i in range(keys):
            queue.add(names[i % distinct])
            if i % 64 == 63:
                await asyncio.sleep(0)  # let workers run, as informer handlers interleave with them

    started = time.perf_counter()
    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    await producer()
    await queue.shut_down_with_drain()
    queue.shut_down()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    return (handled / elapsed if elapsed else float("inf")), handled, elapsed


async def main(keys: int, repeat: int) -> None:
    print(f"workqueue throughput, {keys} adds per run, best and median of {repeat} runs (add → get → done)")
    for workers, distinct, named in ((4, keys, False), (4, keys, True), (4, 100, True), (1, keys, True)):
        rates = sorted(
            [
                (await run_scenario(keys=keys, workers=workers, distinct=distinct, named=named))[0]
                for _ in range(repeat)
            ]
        )
        metrics = "metrics on " if named else "metrics off"
        print(
            f"  workers={workers} distinct_keys={distinct:>7} {metrics}: "
            f"best {rates[-1]:>10,.0f} keys/s, median {statistics.median(rates):>10,.0f} keys/s"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.keys, args.repeat))
