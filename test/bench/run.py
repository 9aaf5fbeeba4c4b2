#!/usr/bin/env python3
"""`make bench`: run every test/bench/bench_*.py in turn, each as its own process with a time bound,
stream what it prints (its figures), and end with a one-line summary per benchmark.

Usage: .venv/bin/python test/bench/run.py [--only scale,graph] [--timeout 2400] [-- extra args]
Extra arguments after `--` go to every benchmark (e.g. `-- --graphs 100` for bench_scale).
Exit 1 when any benchmark failed or ran out of time; the others still run.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
# Per benchmark; bench_scale at 1,000 DGDs is by far the longest.
DEFAULT_TIMEOUT = 2400.0


def discover(only: set[str]) -> list[Path]:
    found = sorted(BENCH_DIR.glob("bench_*.py"))
    if only:
        found = [p for p in found if p.stem.removeprefix("bench_") in only or p.stem in only]
    return found


def run_one(path: Path, *, timeout: float, extra: list[str]) -> tuple[str, float]:
    """Run one benchmark in its own session (so a timeout stops its whole process group)."""
    print(f"===== {path.stem} (bound {timeout:.0f} s)", flush=True)
    started = time.monotonic()
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    proc = subprocess.Popen([sys.executable, str(path), *extra], env=env, start_new_session=True)
    try:
        code = proc.wait(timeout=timeout)
        outcome = "ok" if code == 0 else f"exit {code}"
    except subprocess.TimeoutExpired:
        # The benchmark's own finally blocks stop its cluster on SIGTERM; SIGKILL is the backstop.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        outcome = "timed out"
    took = time.monotonic() - started
    print(f"===== {path.stem}: {outcome} in {took:.0f} s", flush=True)
    return outcome, took


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1 :]
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated names (cache, graph, scale, ...)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="bound per benchmark, seconds")
    args = parser.parse_args(argv)
    benches = discover({x for x in args.only.split(",") if x})
    if not benches:
        print("no benchmark matched", file=sys.stderr)
        return 1
    results = {p.stem: run_one(p, timeout=args.timeout, extra=extra) for p in benches}
    print("===== summary", flush=True)
    for name, (outcome, took) in results.items():
        print(f"  {name:20} {outcome:10} {took:7.0f} s")
    return 0 if all(outcome == "ok" for outcome, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
