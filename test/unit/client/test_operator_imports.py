"""The operator process never imports the Kubernetes client libraries (issue #13: ~38 MB of RSS)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ENTRY_MODULES = ("dynamo_operator.app", "dynamo_operator.wiring", "dynamo_operator.__main__")
PROBE = f"""
import json, sys
import {", ".join(ENTRY_MODULES)}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "kubernetes_asyncio"))))
"""


@pytest.mark.parametrize("library", ["kubernetes_asyncio", "kubernetes"])
def test_entry_modules_do_not_import_kubernetes_client_libraries(tmp_path: Path, library: str) -> None:
    # A fresh interpreter (cwd away from the repo: its operator/ folder would shadow the stdlib module).
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120
    )
    imported = json.loads(out.stdout)
    assert [m for m in imported if m.split(".")[0] == library] == []
