"""What starting the operator imports: packages only some configurations need stay unloaded.

Every imported module stays resident for the life of the process (a few MB each for the large
ones), so a package used by one code path is imported inside that path, not at module level.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ENTRY_POINT_MODULES = ("dynamo_operator.app", "dynamo_operator.wiring", "dynamo_operator.registration")


def run_python(code: str) -> object:
    """The JSON `code` prints, run in a fresh interpreter (nothing imported yet)."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        cwd="/",
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def modules_after_importing(*modules: str) -> set[str]:
    code = "\n".join(
        [*(f"import {m}" for m in modules), "import sys, json", "print(json.dumps(sorted(sys.modules)))"]
    )
    loaded = run_python(code)
    assert isinstance(loaded, list)
    return set(loaded)


# cryptography is no longer on this list: every replica serves the conversion webhook from start-up,
# and its certificates (internal/cert: its own CA, rotation, the CRDs' CA bundle) are read and checked
# with it in the default mode, so deferring the import would only move the same cost a second later.
@pytest.mark.parametrize(
    "package",
    [
        pytest.param("kubernetes", id="kubernetes: the operator has its own client"),
        pytest.param("kubernetes_asyncio", id="kubernetes_asyncio: the operator has its own client"),
        pytest.param("pydantic", id="pydantic: the API models are for generators, tools and tests"),
    ],
)
def test_starting_the_operator_does_not_import(package: str) -> None:
    loaded = modules_after_importing(*ENTRY_POINT_MODULES)
    assert not {m for m in loaded if m == package or m.startswith(f"{package}.")}


def test_the_mpi_key_generator_still_draws_keys() -> None:
    """The deferred import still works where it is needed."""
    from dynamo_operator.internal.secrets.sshkeys import generate_rsa_key_pair

    pair = generate_rsa_key_pair()
    assert pair.private_key.startswith(b"-----BEGIN RSA PRIVATE KEY-----")
    assert pair.public_key.startswith(b"ssh-rsa ")


# One object of each converted kind in v1alpha1, the form every conversion path starts from or ends in.
_OBJECTS = {
    "DynamoGraphDeployment": {
        "services": {"w": {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "x"}}}}
    },
    "DynamoComponentDeployment": {"componentType": "frontend", "envs": [{"name": "A", "value": "1"}]},
    "DynamoGraphDeploymentScalingAdapter": {"replicas": 1, "dgdRef": {"name": "g", "serviceName": "w"}},
    "DynamoGraphDeploymentRequest": {"model": "m", "backend": "vllm", "profilingConfig": {"config": {}}},
}


def test_converting_every_kind_and_answering_a_review_loads_no_api_model() -> None:
    """The webhook and the operator's storage codecs convert with the schemas kept as data
    (api/conversion/schemas.json), not with the pydantic models (about 9 MB and a quarter of a second
    at start-up, for every replica)."""
    code = f"""
import json, sys
import dynamo_operator.wiring
from dynamo_operator.api.conversion import convert
from dynamo_operator.internal.webhook import review
objects = [
    {{"apiVersion": "nvidia.com/v1alpha1", "kind": kind, "metadata": {{"name": "a"}}, "spec": spec}}
    for kind, spec in {_OBJECTS!r}.items()
]
for obj in objects:
    back = convert(convert(obj, "nvidia.com/v1beta1"), "nvidia.com/v1alpha1")
    assert back["apiVersion"] == "nvidia.com/v1alpha1" and back["spec"], obj["kind"]
body = json.dumps({{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
    "request": {{"uid": "r", "desiredAPIVersion": "nvidia.com/v1beta1", "objects": objects}}}}).encode()
answer = json.loads(review.handle(body, convert))
assert answer["response"]["result"]["status"] == "Success", answer
models = ("dynamo_operator.api.v1alpha1.models", "dynamo_operator.api.v1beta1.models")
print(json.dumps(sorted(m for m in sys.modules if m == "pydantic" or m in models)))
"""
    assert run_python(code) == []
