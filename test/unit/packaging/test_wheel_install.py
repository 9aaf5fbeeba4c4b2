"""The image recipe without Docker: build the wheel from exactly what the Dockerfile copies, install it
into a clean venv, and run the entry point.

Docker cannot run on the development machines, so this is how the Dockerfile's two stages are checked.
Dependency wheels are built once from the package index (the one step that needs the network) and kept in
~/.cache/dynamo-operator/wheelhouse; the install itself is offline, as in the runtime stage.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"
BUILD_TIMEOUT = 180.0  # seconds
INSTALL_TIMEOUT = 300.0  # seconds; the first run downloads the dependencies from the package index
WHEELHOUSE_CACHE = Path.home() / ".cache" / "dynamo-operator" / "wheelhouse"


def _copied_paths() -> list[str]:
    """The sources the Dockerfile's build stage copies (`COPY <src...> <dest>`)."""
    paths: list[str] = []
    for line in DOCKERFILE.read_text().splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            paths += line.split()[1:-1]
    return paths


def _run(*argv: str | Path, timeout: float, cwd: Path | None = None) -> str:
    # The source tree has a folder named "operator": never let Python put the cwd on sys.path.
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    done = subprocess.run(
        [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env, check=False
    )
    assert done.returncode == 0, f"{argv} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _dependency_wheelhouse(wheel: Path) -> Path:
    """Wheels of all dependencies (the build stage's second `pip wheel`), cached outside the repo.

    Keyed by the declared dependencies and the interpreter, so only the first run downloads.
    """
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    key = hashlib.sha256(json.dumps([sorted(declared), sys.version_info[:2]]).encode()).hexdigest()[:16]
    house = WHEELHOUSE_CACHE / key
    if not house.is_dir():
        staging = Path(tempfile.mkdtemp(prefix="wheelhouse-", dir=WHEELHOUSE_CACHE.parent))
        _run(
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--wheel-dir",
            staging,
            wheel,
            timeout=INSTALL_TIMEOUT,
        )
        for own in staging.glob("dynamo_operator-*.whl"):
            own.unlink()
        WHEELHOUSE_CACHE.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # another session may have won the race
            staging.rename(house)
        shutil.rmtree(staging, ignore_errors=True)
    return house


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The venv the runtime stage would contain (offline install from wheels): returns its `bin` folder."""
    root = tmp_path_factory.mktemp("image")
    src, wheels, venv = root / "src", root / "wheels", root / "venv"
    src.mkdir()
    for rel in _copied_paths():
        source = REPO / rel
        if source.is_dir():
            shutil.copytree(source, src / rel, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, src / rel)
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--wheel-dir",
        wheels,
        ".",
        cwd=src,
        timeout=BUILD_TIMEOUT,
    )
    [wheel] = wheels.glob("dynamo_operator-*.whl")
    house = _dependency_wheelhouse(wheel)
    _run(sys.executable, "-m", "venv", venv, timeout=60)
    pip = venv / "bin" / "pip"
    _run(
        pip,
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        wheels,
        "--find-links",
        house,
        "dynamo-operator",
        timeout=INSTALL_TIMEOUT,
    )
    return venv / "bin"


def test_dockerfile_copies_the_packaging_files_and_every_source_folder() -> None:
    assert set(_copied_paths()) == {
        "pyproject.toml",
        "setup.py",
        "README.md",
        "operator",
        "api",
        "controllers",
        "internal",
    }


def test_runtime_stage_is_non_root_with_the_operator_entry_point() -> None:
    text = DOCKERFILE.read_text()
    assert re.search(r"^USER 65532:65532$", text, re.M)
    assert re.search(r'^ENTRYPOINT \["dynamo-operator"\]$', text, re.M)
    assert len(re.findall(r"^FROM ", text, re.M)) == 2


def test_wheel_ships_the_package_data(installed: Path) -> None:
    """Generated data the operator reads at run time is inside the wheel."""
    [wheel] = (installed.parent.parent / "wheels").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dynamo_operator/api/v1alpha1/k8s_schemas.json" in names
    assert "dynamo_operator/py.typed" in names


def test_entry_point_prints_help(installed: Path) -> None:
    out = _run(installed / "dynamo-operator", "--help", timeout=60)
    assert "--leader-elect" in out and "--health-probe-bind-address" in out


def test_entry_point_prints_version(installed: Path) -> None:
    out = _run(installed / "dynamo-operator", "version", timeout=60)
    assert re.search(r"\d+\.\d+\.\d+", out), out


def test_installed_package_builds_the_crds(installed: Path) -> None:
    """The models and vendored schemas work outside the source tree (no repo paths at run time)."""
    code = (
        "from dynamo_operator.api.v1alpha1 import KINDS\n"
        "from dynamo_operator.api.v1alpha1.crd import build_crd\n"
        "print(len([build_crd(k) for k in KINDS]))"
    )
    assert _run(installed / "python", "-c", code, timeout=60, cwd=installed).strip() == "5"
