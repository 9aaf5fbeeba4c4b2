"""The manifests users install, rendered the way they render them: `helm template` of the chart (the helm
that hack/build-helm.sh builds) and `kubectl kustomize` of a config/ directory.

The deployment tests render the same few variants dozens of times, and parsing the megabyte of CRDs in
each render cost more than the rendering. Each distinct render is therefore run and parsed once per
session; every call gets its own deep copy, so a test may change what it got.
"""

from __future__ import annotations

import copy
import re
import subprocess
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it

Obj = dict[str, Any]


@cache
def helm() -> str:
    """The helm binary of hack/build-helm.sh; a test using it fails (never skips) without it."""
    done = subprocess.run(
        ["bash", "-c", f'. "{REPO}/hack/cluster-versions.sh" && printf %s "$HELM_BIN_DIR/helm"'],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    if not Path(done.stdout).is_file():
        pytest.fail(f"helm is not built ({done.stdout}): run `make helm` (once)", pytrace=False)
    return done.stdout


def _fresh(docs: Sequence[Obj]) -> list[Obj]:
    try:  # a JSON round trip copies plain YAML data ten times faster than deepcopy
        copied: list[Obj] = orjson.loads(orjson.dumps(list(docs)))
    except TypeError:  # a YAML value JSON has no type for (a timestamp)
        copied = copy.deepcopy(list(docs))
    return copied


# A line of three dashes at column 0 separates documents: inside a block scalar it would be indented.
_SEPARATOR = re.compile(r"^---[ \t]*$", re.M)


@cache
def _document(text: str) -> Obj | None:
    doc: Obj | None = yaml.load(text, Loader=LOADER)
    return doc


def parse(text: str) -> list[Obj]:
    """The documents of a YAML stream (empty ones dropped). Each distinct document is parsed once: the
    renders differ in a few objects and share the megabyte of CRDs."""
    return _fresh([doc for part in _SEPARATOR.split(text) if (doc := _document(part))])


@cache
def helm_text(
    values: tuple[str, ...], release: str, namespace: str, show_only: str | None = None
) -> str | None:
    """`helm template` output with these --set values; None when `show_only` rendered to nothing."""
    args = [helm(), "template", release, str(CHART), "-n", namespace]
    if show_only:
        args += ["--show-only", show_only]
    for value in values:
        args += ["--set", value]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    if show_only and done.returncode != 0 and "could not find template" in done.stderr:
        return None
    assert done.returncode == 0, done.stderr
    return done.stdout


def helm_template(
    *values: str,
    release: str = "dynamo-operator",
    namespace: str = "dynamo-system",
    show_only: str | None = None,
) -> list[Obj]:
    """The chart's objects with these --set values (fresh copies)."""
    text = helm_text(tuple(values), release, namespace, show_only)
    return [] if text is None else parse(text)


@cache
def kustomize_text(directory: Path) -> str:
    done = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


def kustomize(directory: Path) -> list[Obj]:
    """`kubectl kustomize <directory>`'s objects (fresh copies)."""
    return parse(kustomize_text(directory))
