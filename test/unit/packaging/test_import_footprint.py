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


def modules_after_importing(*modules: str) -> set[str]:
    code = "\n".join(
        [*(f"import {m}" for m in modules), "import sys, json", "print(json.dumps(sorted(sys.modules)))"]
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        cwd="/",
    )
    return set(json.loads(out.stdout))


# cryptography is no longer on this list: every replica serves the conversion webhook from start-up,
# and its certificates (internal/cert: its own CA, rotation, the CRDs' CA bundle) are read and checked
# with it in the default mode, so deferring the import would only move the same cost a second later.
@pytest.mark.parametrize(
    "package",
    [
        pytest.param("kubernetes", id="kubernetes: the operator has its own client"),
        pytest.param("kubernetes_asyncio", id="kubernetes_asyncio: the operator has its own client"),
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
