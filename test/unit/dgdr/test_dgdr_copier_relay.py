"""The profiling Job's sidecar script relays each new step of the profiler's status file into the
output ConfigMap (`phase`, `message`) while the profiler runs, and keeps the last step beside the
results. Run with /bin/sh against fake `kubectl` and `sleep` commands: each `sleep` is one tick of a
scripted profiler run (no waiting), and the fake kubectl records what would be published."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dynamo_operator.internal.dynamo.dgdr.job import _COPIER_SCRIPT

# The profiler's status file after each tick (tick 0: before the first sleep); the profiler
# container reads as terminated from the last tick on.
RUN = [
    'status: running\nphase: "Initializing"\nmessage: "loading the model"\n',
    "status: running\nphase: SweepingPrefill\nmessage: 'sweeping prefill: tp=1'\n",
    "status: running\nphase: SweepingPrefill\nmessage: 'sweeping prefill: tp=2'\n",
    "status: running\nphase: SweepingDecode\nmessage: sweeping decode\n",
    "status: success\nphase: Done\nmessage: profiling finished\n",
]

FAKE_SLEEP = """#!/bin/sh
n=$(($(cat "$T/ticks") + 1)); echo "$n" > "$T/ticks"
if [ -f "$T/status.$n" ]; then cp "$T/status.$n" "$T/data/profiler_status.yaml"; fi
"""
FAKE_KUBECTL = """#!/bin/sh
case "$1" in
  get) if [ "$(cat "$T/ticks")" -ge "$END" ]; then echo 0; fi ;;
  create) shift 2; printf '%s\\n' "$@" "--" >> "$T/published"; echo "kind: ConfigMap" ;;
  label) cat ;;
  apply) cat > /dev/null ;;
esac
"""


def _published(path: Path) -> list[dict[str, str]]:
    """Each ConfigMap the script published: its literal and file keys."""
    out: list[dict[str, str]] = []
    for chunk in path.read_text().split("--\n")[:-1]:
        keys: dict[str, str] = {}
        for arg in chunk.splitlines():
            for flag in ("--from-literal=", "--from-file="):
                if arg.startswith(flag):
                    key, _, value = arg[len(flag) :].partition("=")
                    keys[key] = value
        out.append(keys)
    return out


@pytest.fixture
def run(tmp_path: Path) -> list[dict[str, str]]:
    bin_dir, data = tmp_path / "bin", tmp_path / "data"
    bin_dir.mkdir()
    data.mkdir()
    for name, text in (("sleep", FAKE_SLEEP), ("kubectl", FAKE_KUBECTL)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    for tick, status in enumerate(RUN):
        (tmp_path / f"status.{tick}").write_text(status)
    (data / "profiler_status.yaml").write_text(RUN[0])
    (data / "config_with_planner.yaml").write_text("kind: DynamoGraphDeployment\n")
    (tmp_path / "ticks").write_text("0\n")
    script = _COPIER_SCRIPT.replace("out=/data\n", f"out={data}\n", 1)
    assert script != _COPIER_SCRIPT
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "T": str(tmp_path),
        "END": str(len(RUN) - 1),
        "HOSTNAME": "profile-r-abcde",
        "DGDR_NAME": "r",
        "DGDR_NAMESPACE": "ns",
        "OUTPUT_CONFIG_MAP": "dgdr-output-r",
    }
    done = subprocess.run(
        ["/bin/sh", "-c", script], check=False, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return _published(tmp_path / "published")


def test_each_new_step_is_relayed_once_with_its_message(run: list[dict[str, str]]) -> None:
    relayed = [(p["phase"], p["message"]) for p in run[:-1]]
    assert relayed == [
        ("Initializing", "loading the model"),
        ("SweepingPrefill", "sweeping prefill: tp=1"),
        ("SweepingDecode", "sweeping decode"),
        ("Done", "profiling finished"),
    ]
    assert all(set(p) == {"phase", "message"} for p in run[:-1])


def test_the_results_keep_the_last_step_beside_them(run: list[dict[str, str]]) -> None:
    final = run[-1]
    assert (final["phase"], final["message"]) == ("Done", "profiling finished")
    assert {"config_with_planner.yaml", "profiler_status.yaml"} <= set(final)
