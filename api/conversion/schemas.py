"""The converted kinds' schemas, as `hack/gen_conversion_schemas.py` wrote them (schemas.json).

Read once, on the first conversion that needs one: the JSON takes a few milliseconds to parse,
where building the schemas from the pydantic models took a quarter of a second and loaded every
model of the API into the operator. `test_the_committed_schemas_are_what_the_models_say` keeps the
file equal to what the models say.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

Json = dict[str, Any]


@functools.cache
def _all() -> dict[str, Json]:
    text = resources.files(__package__).joinpath("schemas.json").read_text(encoding="utf-8")
    loaded: dict[str, Json] = json.loads(text)
    return loaded


def root(api_version: str, kind: str) -> Json:
    """The openAPIV3Schema of `kind` in `api_version` (`nvidia.com/v1beta1`), descriptions left out.
    Shared: callers read it, never change it."""
    return _all()[f"{api_version}/{kind}"]
