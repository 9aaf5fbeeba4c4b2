"""Run the operator with a heap probe: on SIGUSR2 it writes what its Python heap holds to a file.

`bench_scale --heap DIR` starts every operator process through this module (`python heap_probe.py
DIR <operator args>`), and signals it at the moments worth looking at (all graphs Ready, after the
quiet window). Each dump, `DIR/heap-<pid>-<n>.txt`, lists
- the process's RSS and peak RSS (VmRSS, VmHWM);
- live objects by type (gc-tracked containers, counted and sized with sys.getsizeof), after a full
  collection (the cyclic garbage it freed is counted on its own line);
- with tracemalloc on (HEAP_PROBE_FRAMES=N, N > 0), the allocation sites holding the most bytes;
- with HEAP_PROBE_SHAPES=1, dicts by shape (their first keys, sorted): which kind of JSON object or
  record the dicts are, when the count by type says only "more dicts".

tracemalloc costs memory and CPU of its own, so a run with frames is for finding where memory
goes, never for the figures; frames 0 (the default) only counts objects.
"""

from __future__ import annotations

import gc
import io
import os
import runpy
import signal
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType

TOP = 60
SHAPE_KEYS = 5


def _proc_status() -> str:
    lines = Path("/proc/self/status").read_text().splitlines()
    return "  ".join(x.replace("\t", " ") for x in lines if x.startswith(("VmRSS", "VmHWM")))


def _objects_by_type() -> str:
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for obj in gc.get_objects():
        name = type(obj).__name__
        counts[name] += 1
        sizes[name] += sys.getsizeof(obj)
    out = io.StringIO()
    out.write(f"gc-tracked objects: {sum(counts.values())}, {sum(sizes.values()) / 2**20:.1f} MiB shallow\n")
    for name, size in sizes.most_common(TOP):
        out.write(f"  {name:40} {counts[name]:9} objects {size / 2**20:8.1f} MiB shallow\n")
    return out.getvalue()


def _dicts_by_shape() -> str:
    if os.environ.get("HEAP_PROBE_SHAPES") != "1":
        return ""
    counts: Counter[tuple[str, ...]] = Counter()
    for obj in gc.get_objects():
        if type(obj) is dict:
            counts[tuple(sorted(str(k) for k in obj)[:SHAPE_KEYS])] += 1
    out = io.StringIO()
    out.write("dicts by shape (first keys, sorted):\n")
    for shape, count in counts.most_common(TOP):
        out.write(f"  {count:9}  {', '.join(shape)[:150]}\n")
    return out.getvalue()


def _allocation_sites() -> str:
    if not tracemalloc.is_tracing():
        return ""
    snapshot = tracemalloc.take_snapshot().filter_traces(
        (tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib*"))
    )
    stats = snapshot.statistics("traceback")
    total = sum(s.size for s in stats)
    out = io.StringIO()
    out.write(f"tracemalloc: {total / 2**20:.1f} MiB live in {sum(s.count for s in stats)} blocks\n")
    for stat in stats[:TOP]:
        out.write(f"  {stat.size / 2**20:8.2f} MiB {stat.count:9} blocks\n")
        for frame in stat.traceback.format()[-2 * 4 :]:
            out.write(f"      {frame.strip()}\n")
    return out.getvalue()


def install(out_dir: Path) -> None:
    dumps = 0

    def dump(_sig: int, _frame: FrameType | None) -> None:
        nonlocal dumps
        dumps += 1
        path = out_dir / f"heap-{os.getpid()}-{dumps}.txt"
        # Counted after a full collection, so the figures are what is held, not cyclic garbage that
        # the next collection of the oldest generation would free (the operator collects rarely:
        # --gc-threshold); how much that was is said too.
        before = _proc_status()
        runs = [stat["collections"] for stat in gc.get_stats()]
        garbage = gc.collect()
        text = (
            f"{before}\n"
            f"gc: {garbage} unreachable objects collected for this dump; collections by generation {runs}\n"
            + _objects_by_type()
            + _dicts_by_shape()
            + _allocation_sites()
        )
        path.write_text(text)

    signal.signal(signal.SIGUSR2, dump)


def main() -> None:
    out_dir = Path(sys.argv[1])
    frames = int(os.environ.get("HEAP_PROBE_FRAMES", "0"))
    out_dir.mkdir(parents=True, exist_ok=True)
    if frames:
        tracemalloc.start(frames)
    install(out_dir)
    sys.argv = ["dynamo-operator", *sys.argv[2:]]
    runpy.run_module("dynamo_operator", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
