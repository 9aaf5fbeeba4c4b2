"""Upstream's example graphs of both eras (`../shared`), as the tests that read each of them two
ways take them: each graph as the API server hands it over, and the DCDs generated from it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from compat import generate as compat
from compat.goldens import SET_2A6DA14C, SET_DF888F68, Example, discover
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds

Obj = dict[str, Any]

EXAMPLES = [
    pytest.param(ex, id=f"{golden_set.name}:{ex.name}")
    for golden_set in (SET_DF888F68, SET_2A6DA14C)
    for ex in discover(("golden",), golden_set)
]


def example_graphs(example: Example) -> list[Obj]:
    """Each graph of an example as generation reads it (v1alpha1, defaulted, with a uid)."""
    out = []
    for doc in yaml.safe_load_all(example.yaml_path.read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
            read = compat._as_read(doc, compat.Generated())
            out.append(compat._stored(read, "dynamographdeployments"))
    return out


def example_dcds(example: Example, ctx: GenContext) -> list[Obj]:
    """The DCDs the example's graphs generate in `ctx`, each with a uid to be owned by (a graph
    refused in `ctx`, for a shape the context lacks, has none)."""
    out: list[Obj] = []
    for graph in example_graphs(example):
        try:
            out += desired_dcds(graph, ctx)
        except GenerationError:
            continue
    for dcd in out:
        dcd["metadata"]["uid"] = "dcd-uid"
    return out
