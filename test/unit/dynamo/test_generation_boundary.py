"""Generation's entry points take typed views (api/views), not `dict[str, Any]`: what they read of a
graph or a component is checked by mypy against the API models. Hashing helpers, which take any
Kubernetes object, are not entry points of generation."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest
from dynamo_operator.api.views import scalars
from dynamo_operator.internal import dynamo
from dynamo_operator.internal.dynamo.common import inputs
from dynamo_operator.internal.dynamo.graph import generate, mpisecret, workernames
from dynamo_operator.internal.dynamo.grove import podcliqueset, provider
from dynamo_operator.internal.dynamo.rollout import workerhash_v2

HASHING = {"content_hash", "pod_template_hash", "recorded_hash", "stamp_hash"}
ENTRY_POINTS: list[Callable[..., Any]] = [
    *(getattr(dynamo, name) for name in dynamo.__all__ if inspect.isfunction(getattr(dynamo, name))),
    podcliqueset.desired_grove_objects,
    podcliqueset.uses_grove,
    podcliqueset.takes_grove,
    podcliqueset.pod_clique_set_name,
    generate.services_of,
    generate.service_to_dcd_spec,
    generate.dcd_names,
    mpisecret.desired_mpi_ssh_secrets,
    workernames.first_worker_generation,
    provider.recorded_provider,
    workerhash_v2.worker_hash_v2,
    workerhash_v2.hash_input,
]


def _mentions_any(tp: Any) -> bool:
    if tp is Any:
        return True
    if typing.is_typeddict(tp) or isinstance(tp, str | typing.ForwardRef):
        return False  # a view, or a JSON value a view leaves as written
    return any(_mentions_any(arg) for arg in typing.get_args(tp))


@pytest.mark.parametrize(
    "entry", [f for f in ENTRY_POINTS if f.__name__ not in HASHING], ids=lambda f: f.__name__
)
def test_a_generation_entry_point_takes_no_parameter_typed_any(entry: Callable[..., Any]) -> None:
    hints = typing.get_type_hints(entry, localns=vars(scalars))
    untyped = {name: tp for name, tp in hints.items() if name != "return" and _mentions_any(tp)}
    assert untyped == {}


def test_a_graph_is_handed_to_generation_as_its_view() -> None:
    hints = typing.get_type_hints(dynamo.desired_graph_objects, localns=vars(scalars))
    assert hints["dgd"] is inputs.Graph


def test_a_component_is_handed_to_generation_as_its_view() -> None:
    hints = typing.get_type_hints(dynamo.desired_component_objects, localns=vars(scalars))
    assert hints["dcd"] is inputs.ComponentDeployment
