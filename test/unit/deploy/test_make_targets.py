"""Offline make targets as users call them: `make render F=x.yaml > out.yaml` writes YAML and nothing else;
`make build-installer IMG=...` writes one installer with that image and never edits the tree."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "config" / "samples" / "nvidia.com_v1alpha1_dynamographdeployment_vllm_agg.yaml"


def make(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def tree_digest() -> str:
    """A digest of every file under config/ (what a kustomize edit would have touched)."""
    h = hashlib.sha256()
    for path in sorted((REPO / "config").rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(REPO)).encode() + path.read_bytes())
    return h.hexdigest()


def documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def test_render_to_a_file_is_pure_yaml() -> None:
    """stdout of `make render` is the rendered objects only: no echoed recipe line before them."""
    done = make("render", f"F={SAMPLE}")
    assert done.returncode == 0, done.stderr
    assert not done.stdout.startswith(".venv"), done.stdout.splitlines()[0]
    docs = documents(done.stdout)
    assert docs and all(isinstance(d, dict) and d.get("kind") and d.get("apiVersion") for d in docs)
    assert "DynamoComponentDeployment" in {d["kind"] for d in docs}


def test_render_without_a_file_prints_its_usage() -> None:
    done = make("render")
    assert done.returncode != 0
    assert "usage: make render F=" in done.stderr
    assert done.stdout == ""


def deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    [dep] = [d for d in docs if d["kind"] == "Deployment"]
    return dep


@pytest.mark.parametrize(
    ("img", "image"),
    [
        pytest.param(
            "registry.example:5000/team/dynamo-operator:v1.2.3",
            "registry.example:5000/team/dynamo-operator:v1.2.3",
            id="registry-port-and-tag",
        ),
        pytest.param(
            "registry.example/dynamo-operator", "registry.example/dynamo-operator:latest", id="no-tag"
        ),
        pytest.param(
            "registry.example/dynamo-operator@sha256:" + "ab" * 32,
            "registry.example/dynamo-operator@sha256:" + "ab" * 32,
            id="digest",
        ),
    ],
)
def test_build_installer_writes_one_file_with_the_image(tmp_path: Path, img: str, image: str) -> None:
    """One multi-document file: the Namespace, the CRDs, RBAC and the Deployment running IMG."""
    before = tree_digest()
    out = tmp_path / "dist" / "install.yaml"
    done = make("build-installer", f"IMG={img}", f"INSTALLER={out}")
    assert done.returncode == 0, done.stderr
    docs = documents(out.read_text())
    [container] = deployment(docs)["spec"]["template"]["spec"]["containers"]
    assert container["image"] == image
    kinds = {d["kind"] for d in docs}
    assert {"Namespace", "CustomResourceDefinition", "ClusterRole", "Deployment", "Service"} <= kinds
    assert sum(d["kind"] == "CustomResourceDefinition" for d in docs) == 5
    assert tree_digest() == before, "the committed tree was edited"


def test_deploy_renders_the_image_it_is_given() -> None:
    """`make deploy IMG=x` applies what `hack/deploy.sh render` prints: IMG, not dynamo-operator:dev."""
    env = {**os.environ, "IMG": "registry.example/team/dynamo-operator:e2e"}
    done = subprocess.run(
        [str(REPO / "hack" / "deploy.sh"), "render"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    [container] = deployment(documents(done.stdout))["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "registry.example/team/dynamo-operator:e2e"


def test_dist_is_not_committed() -> None:
    """dist/install.yaml is a build output: ignored by git."""
    done = subprocess.run(
        ["git", "-C", str(REPO), "check-ignore", "-q", "dist/install.yaml"], timeout=30, check=False
    )
    assert done.returncode == 0
