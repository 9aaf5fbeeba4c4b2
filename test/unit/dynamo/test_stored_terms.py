"""A refusal names fields the way the stored version (v1beta1) spells them: every v1alpha1 path in
its message is rewritten, and nothing else in it changes."""

from __future__ import annotations

from dynamo_operator.internal.dynamo.common.stored_terms import dcd_message, graph_message
from hypothesis import given
from hypothesis import strategies as st


def test_a_graph_refusal_leading_with_a_service_field_names_the_component_field() -> None:
    message = "spec.services.Worker.extraPodSpec.mainContainer.image: required"
    assert graph_message(message, ["Worker"]) == (
        "spec.components[name=Worker].podTemplate.spec.containers[name=main].image: required"
    )


def test_every_path_inside_the_text_is_rewritten_and_a_closing_full_stop_stays() -> None:
    message = (
        "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: spec.services.W.failover needs "
        "per-container discovery; see spec.services.W.extraPodSpec.volumes."
    )
    assert graph_message(message, ["W"]) == (
        "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: "
        "spec.components[name=W].experimental.failover needs per-container discovery; "
        "see spec.components[name=W].podTemplate.spec.volumes."
    )


def test_a_service_name_with_dots_is_kept_whole() -> None:
    message = "spec.services.my.worker.multinode.nodeCount: must be at least 2"
    assert graph_message(message, ["my.worker"]) == (
        "spec.components[name=my.worker].multinode.nodeCount: must be at least 2"
    )


def test_a_message_already_in_v1beta1_terms_is_unchanged() -> None:
    message = "spec.components[name=W].podTemplate.spec.containers[name=main].image: required"
    assert graph_message(message, ["W"]) == message


def test_a_dcd_refusal_names_its_field_from_the_object_root() -> None:
    assert dcd_message("extraPodSpec.mainContainer.image", "required") == (
        "spec.podTemplate.spec.containers[name=main].image: required"
    )
    assert dcd_message("spec.gpuMemoryService.mode", "not implemented") == (
        "spec.experimental.gpuMemoryService.mode: not implemented"
    )


@given(st.text(alphabet=st.sampled_from("ab :.,'()[]=-_0123456789\n"), max_size=60))
def test_text_without_a_v1alpha1_path_passes_through(text: str) -> None:
    assert graph_message(text, ["a", "b"]) == text


@given(st.sampled_from(["envs", "extraPodSpec.mainContainer.command", "resources.limits.gpu", "failover"]))
def test_rewriting_twice_is_rewriting_once(field: str) -> None:
    once = graph_message(f"spec.services.W.{field}: bad, see spec.services.W.{field}.", ["W"])
    assert graph_message(once, ["W"]) == once
