"""The first build as a newcomer meets it: without Go the build stops with what to install, how long the
build takes and how much disk it needs (not at `go: command not found`); the cache is keyed by what is
built, never by the Go that builds it, so a present cache needs no Go at all."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
HACK = REPO / "hack"
BINARIES = ("etcd", "kwok", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
# A PATH with the usual tools (bash, flock, coreutils) but no Go (which lives in /usr/local/go/bin).
NO_GO_PATH = "/usr/bin:/bin"


def no_go_on(path: str) -> bool:
    return not any((Path(d) / "go").exists() for d in path.split(":"))


def run(argv: list[str], *, cache: Path, path: str = NO_GO_PATH) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": str(cache.parent), "DYNAMO_CLUSTER_CACHE": str(cache)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, check=False)


def bin_dir(cache: Path, path: str = NO_GO_PATH) -> str:
    script = f'. "{HACK}/cluster-versions.sh" && printf %s "$CLUSTER_BIN_DIR"'
    return run(["bash", "-c", script], cache=cache, path=path).stdout


def fill(directory: Path) -> None:
    """Stand-in binaries: the scripts only check that they are executable files."""
    directory.mkdir(parents=True)
    for name in BINARIES:
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755)
    (directory / "kwok-module-dir").write_text("/nonexistent\n")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    assert no_go_on(NO_GO_PATH), "the test needs a PATH without go"
    return tmp_path / "cluster-cache"


def test_cache_key_does_not_depend_on_the_go_version(tmp_path: Path, cache: Path) -> None:
    """Another Go on PATH (here one that says go1.99.9), or none: the same binary directory."""
    fake = tmp_path / "fakego"
    fake.mkdir()
    (fake / "go").write_text('#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo go1.99.9\n')
    (fake / "go").chmod(0o755)
    with_fake = bin_dir(cache, f"{fake}:{NO_GO_PATH}")
    assert with_fake == bin_dir(cache) != ""
    assert "go1" not in with_fake and "unknown" not in with_fake


def test_without_go_the_first_build_says_what_to_install_and_what_it_costs(cache: Path) -> None:
    done = run([str(HACK / "build-cluster-bins.sh")], cache=cache)
    assert done.returncode == 1
    assert "command not found" not in done.stderr
    assert "missing prerequisite: go" in done.stderr
    assert "https://go.dev/dl/" in done.stderr
    assert "min on 2 cores" in done.stderr and "GB" in done.stderr


def test_present_binaries_need_no_go(cache: Path) -> None:
    """With every binary in the cache the script prints its directory and builds nothing."""
    fill(Path(bin_dir(cache)))
    done = run([str(HACK / "build-cluster-bins.sh")], cache=cache)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == bin_dir(cache)
    assert "building" not in done.stderr


def test_a_cache_keyed_by_an_older_go_is_reused_not_rebuilt(cache: Path) -> None:
    """Binaries under the former key (…_go1.x.y/bin) are linked into the new one, without Go."""
    new = Path(bin_dir(cache))
    old = new.parent.with_name(new.parent.name + "_go1.21.0") / "bin"
    fill(old)
    done = run([str(HACK / "build-cluster-bins.sh")], cache=cache)
    assert done.returncode == 0, done.stderr
    for name in BINARIES:
        assert os.access(new / name, os.X_OK)
        assert (new / name).read_bytes() == (old / name).read_bytes()
    assert (old / "kube-apiserver").exists(), "the old cache is left in place for whoever still uses it"


def test_doctor_names_a_missing_prerequisite_with_its_install_hint(cache: Path) -> None:
    done = run([str(HACK / "doctor.sh"), "--need", "go"], cache=cache)
    assert done.returncode == 1
    assert "install:" in done.stderr and "'make doctor'" in done.stderr


def test_doctor_passes_a_present_prerequisite(cache: Path) -> None:
    done = run([str(HACK / "doctor.sh"), "--need", "kubectl"], cache=cache, path=os.environ["PATH"])
    assert done.returncode == 0, done.stderr
