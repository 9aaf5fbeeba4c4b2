"""The benchmark's heap probe: SIGUSR2 writes what the process's Python heap holds to a file."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from bench import heap_probe


def test_a_signal_writes_a_dump_with_rss_and_objects_by_type(tmp_path: Path) -> None:
    previous = signal.getsignal(signal.SIGUSR2)
    try:
        heap_probe.install(tmp_path)
        os.kill(os.getpid(), signal.SIGUSR2)
        os.kill(os.getpid(), signal.SIGUSR2)
    finally:
        signal.signal(signal.SIGUSR2, previous)
    dumps = sorted(p.name for p in tmp_path.iterdir())
    assert dumps == [f"heap-{os.getpid()}-1.txt", f"heap-{os.getpid()}-2.txt"]
    text = (tmp_path / dumps[0]).read_text()
    assert "VmHWM" in text
    assert "gc-tracked objects" in text
    assert " dict " in text
