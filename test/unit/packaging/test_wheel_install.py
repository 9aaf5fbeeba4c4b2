"""The image recipe without Docker: build the wheel from exactly what the Dockerfile copies, install it
into a clean venv the way the runtime stage does (the dependencies from requirements-image.txt with
`--require-hashes --no-deps`, then the operator's wheel offline), and run the entry point.

Docker cannot run on the development machines, so this is how the Dockerfile's two stages are checked.
The hashed install is the one step that needs the package index; pip's own cache serves reruns.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"
BUILD_TIMEOUT = 180.0  # seconds
INSTALL_TIMEOUT = 300.0  # seconds; the first run downloads the dependencies from the package index
REQUIREMENTS = REPO / "requirements-image.txt"


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


def _pins(path: Path) -> dict[str, str]:
    """`name==version` lines of a requirements or constraints file, by normalised name."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if match := re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", line):
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


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
    # The venv gets no pip of its own and this venv's pip installs into it (`--python`), without
    # compiling bytecode: what lands in site-packages is the same, for a fifth of the time (ensurepip
    # and compiling some thirty packages were two thirds of this fixture).
    _run(sys.executable, "-m", "venv", "--without-pip", venv, timeout=60)
    pip = (sys.executable, "-m", "pip", "--python", venv / "bin" / "python")
    quiet = ("--quiet", "--disable-pip-version-check", "--no-compile")
    _run(
        *pip,
        "install",
        *quiet,
        "--require-hashes",
        "--no-deps",
        "--only-binary=:all:",
        "-r",
        REQUIREMENTS,
        timeout=INSTALL_TIMEOUT,
    )
    [wheel] = wheels.glob("dynamo_operator-*.whl")
    _run(*pip, "install", *quiet, "--no-deps", "--no-index", wheel, timeout=INSTALL_TIMEOUT)
    return venv / "bin"


def test_dockerfile_copies_the_packaging_files_and_every_source_folder() -> None:
    assert set(_copied_paths()) == {
        "pyproject.toml",
        "setup.py",
        "README.md",
        "LICENSE",
        "NOTICE",
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


def test_runtime_stage_installs_the_hashed_pins_without_resolving() -> None:
    """The image gets exactly requirements-image.txt: hashes required, no dependency resolution."""
    text = DOCKERFILE.read_text()
    assert "--require-hashes --no-deps --only-binary=:all:" in text
    assert "-r /requirements-image.txt" in text
    assert "!requirements-image.txt" in (REPO / ".dockerignore").read_text().splitlines()


def test_image_pins_are_the_tested_pins() -> None:
    """Every version the image installs is the one constraints.txt pins (what the tests ran with), and
    every runtime dependency pyproject.toml declares is among them, with at least one hash each."""
    image, tested = _pins(REQUIREMENTS), _pins(REPO / "constraints.txt")
    assert image, "requirements-image.txt pins something"
    assert {name: tested.get(name) for name in image} == image
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0]).lower() for d in declared}
    assert names <= set(image)
    text = REQUIREMENTS.read_text()
    assert text.count("--hash=sha256:") >= len(image)


def test_installed_set_is_complete(installed: Path) -> None:
    """`pip check` in the image's venv: the hashed pins satisfy every requirement of every package."""
    _run(sys.executable, "-m", "pip", "--python", installed / "python", "check", timeout=60)


def test_wheel_ships_the_package_data(installed: Path) -> None:
    """Generated data the operator reads at run time is inside the wheel."""
    [wheel] = (installed.parent.parent / "wheels").glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "dynamo_operator/api/v1alpha1/k8s_schemas.json" in names
    assert "dynamo_operator/api/conversion/schemas.json" in names
    assert "dynamo_operator/py.typed" in names
    # The license files travel with the package (setuptools' license files, Apache-2.0's NOTICE).
    licenses = {n.split("/", 1)[1] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    assert {"licenses/LICENSE", "licenses/NOTICE"} <= licenses


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


def test_installed_operator_converts_a_manifest(installed: Path, tmp_path: Path) -> None:
    """The conversion reads its schemas from the package data (no model, no repo path at run time)."""
    manifest = tmp_path / "graph.yaml"
    manifest.write_text(
        "apiVersion: nvidia.com/v1alpha1\n"
        "kind: DynamoGraphDeployment\n"
        "metadata: {name: g}\n"
        "spec:\n"
        "  services:\n"
        "    Frontend: {componentType: frontend, extraPodSpec: {mainContainer: {image: x}}}\n"
    )
    out = _run(installed / "dynamo-operator", "convert", "-f", manifest, "--to", "v1beta1", timeout=60)
    assert "apiVersion: nvidia.com/v1beta1" in out and "name: Frontend" in out, out
