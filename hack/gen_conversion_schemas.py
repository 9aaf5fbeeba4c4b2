#!/usr/bin/env python3
"""Generate `api/conversion/schemas.json`: the schemas the conversion prunes and defaults with.

The conversion (`api/conversion`) reads each converted kind's openAPIV3Schema in both versions, the
same schema the CRDs carry. They used to be built from the pydantic models at the first conversion,
which made the running operator import pydantic and every model of the API (about 9 MB and a
quarter of a second) to serve a conversion. Written here as data, by the same function that writes
the CRDs (`api/v1alpha1/crd.root_schema`), the operator and the webhook read them without any model.
Descriptions are left out: no conversion reads them.

`make manifests` writes the file; `--check` (in `make lint`, and a unit test) fails when it is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.v1alpha1.crd import root_schema

if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))
import generated_files

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "api" / "conversion" / "schemas.json"
# The kinds with two versions whose conversion reads a schema (the scaling adapter's reads none).
KINDS = (
    (v1alpha1.DynamoGraphDeployment, v1beta1.DynamoGraphDeployment),
    (v1alpha1.DynamoComponentDeployment, v1beta1.DynamoComponentDeployment),
    (v1alpha1.DynamoGraphDeploymentRequest, v1beta1.DynamoGraphDeploymentRequest),
)


def structural(node: Any, *, names: bool = False) -> Any:
    """`node` without its schemas' descriptions. `names`: `node` is a `properties` map, whose keys
    are field names (a field may be called "description") and whose values are schemas."""
    if isinstance(node, dict):
        return {
            key: structural(value, names=key == "properties" and not names)
            for key, value in node.items()
            if names or key != "description"
        }
    if isinstance(node, list):
        return [structural(item) for item in node]
    return node


def schemas() -> dict[str, Any]:
    """`<apiVersion>/<kind>` → its root schema, structural part only."""
    out: dict[str, Any] = {}
    for pair in KINDS:
        for model in pair:
            version = "v1alpha1" if model.__module__.startswith(v1alpha1.__name__) else "v1beta1"
            kind = model.model_fields["kind"].default
            out[f"{v1alpha1.GROUP}/{version}/{kind}"] = structural(root_schema(model))
    return out


def text() -> str:
    # One line per kind: a change shows as the kinds it touches, and the file stays compact.
    body = ",\n".join(
        f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}" for key, value in schemas().items()
    )
    return "{\n" + body + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when the committed file differs")
    args = parser.parse_args(argv)
    return generated_files.sync({OUT: text()}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
