"""Generation's entry points take typed views (api/views), not `dict[str, Any]`: what they read of a
graph or a component is checked by mypy against the API models. Hashing helpers, which take any
Kubernetes object, are not entry points of generation."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.api.views import scalars
from dynamo_operator.internal import dynamo
from dynamo_operator.internal.dynamo.common import inputs
from dynamo_operator.internal.dynamo.graph import generate, mpisecret, workernames
from dynamo_operator.internal.dynamo.grove import podcliqueset, provider
from dynamo_operator.internal.dynamo.rollout import workerhash_v2
from testsupport import generation_boundary

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
    """As stored (v1beta1), or as `render` makes it for upstream's older goldens (v1alpha1)."""
    hints = typing.get_type_hints(dynamo.desired_component_objects, localns=vars(scalars))
    assert hints["dcd"] == inputs.ComponentDeployment | inputs.AlphaComponentDeployment


# --- the boundary as the other layers see it: what they import from internal/dynamo --------------
#
# testsupport/generation_boundary.py reads it from the source. Every function there is typed by the
# views (api/views, common/inputs.py, small views of other projects' kinds) or by plain JSON
# (JsonObject: the objects generation hands out, a read point's raw object): none mentions Any.

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def boundary() -> generation_boundary.Boundary:
    return generation_boundary.scan(REPO)


def test_no_boundary_function_is_annotated_with_any(boundary: generation_boundary.Boundary) -> None:
    assert sorted(boundary.with_any) == []


def test_the_boundary_is_read_from_the_callers_imports(boundary: generation_boundary.Boundary) -> None:
    # By name (the DCD controller's), and through a module (the adapter controller's `readiness.`).
    assert {"status.readiness.deployment_readiness", "scalingadapter.readiness.warrants_warning"} <= (
        boundary.functions - boundary.with_any
    )


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


GEN = "from dynamo_operator.internal.dynamo"


def test_a_function_a_caller_imports_is_flagged_for_any_in_a_parameter(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "internal/dynamo/m.py": "from typing import Any\ndef f(x: dict[str, Any]) -> int: ...\n",
            "controllers/c.py": f"{GEN}.m import f\n",
        },
    )
    assert generation_boundary.scan(root) == generation_boundary.Boundary(
        frozenset({"m.f"}), frozenset({"m.f"})
    )


def test_an_alias_of_any_imported_from_another_module_counts_as_any(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "internal/dynamo/objects.py": "from typing import Any\nObj = dict[str, Any]\n",
            "internal/dynamo/m.py": f"{GEN}.objects import Obj as Thing\ndef f() -> 'list[Thing]': ...\n",
            "operator/o.py": f"{GEN}.m import f\n",
        },
    )
    assert generation_boundary.scan(root).with_any == {"m.f"}


def test_a_function_reached_through_its_module_is_on_the_boundary(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "internal/dynamo/pkg/__init__.py": "",
            # g, never used through the module, is not on the boundary.
            "internal/dynamo/pkg/m.py": (
                "from typing import Any\ndef f(x: Any) -> None: ...\ndef g(x: Any) -> None: ...\n"
            ),
            "internal/other.py": f"{GEN}.pkg import m\nm.f(1)\n",
        },
    )
    assert generation_boundary.scan(root).with_any == {"pkg.m.f"}


def test_typed_functions_and_functions_no_caller_imports_are_not_flagged(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "internal/dynamo/m.py": (
                "from collections.abc import Mapping\nfrom typing import Any\n"
                "View = Mapping[str, object]\n"
                "def typed(x: View) -> int: ...\n"
                "def unused(x: Any) -> None: ...\n"
            ),
            # internal/dynamo's own imports are not the boundary.
            "internal/dynamo/n.py": f"{GEN}.m import unused\n",
            "controllers/c.py": f"{GEN}.m import typed\n",
        },
    )
    assert generation_boundary.scan(root) == generation_boundary.Boundary(frozenset({"m.typed"}), frozenset())
