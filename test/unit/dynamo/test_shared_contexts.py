"""`SharedContexts`: one generation context per namespace while it stays equal (pure logic)."""

from __future__ import annotations

from types import MappingProxyType

from dynamo_operator.internal.dynamo.common.context import GenContext, SharedContexts


def test_an_equal_context_is_the_namespace_previous_one() -> None:
    contexts = SharedContexts(lambda ns: GenContext(namespace=ns))
    first = contexts("a")
    assert contexts("a") is first


def test_a_changed_context_replaces_the_previous_one() -> None:
    secrets: dict[str, list[str]] = {}
    contexts = SharedContexts(
        lambda ns: GenContext(namespace=ns, docker_secrets=MappingProxyType(dict(secrets)))
    )
    before = contexts("a")
    secrets["registry.example"] = ["regcred"]
    after = contexts("a")
    assert after is not before
    assert after.docker_secrets == {"registry.example": ["regcred"]}
    assert contexts("a") is after


def test_each_namespace_has_its_own() -> None:
    contexts = SharedContexts(lambda ns: GenContext(namespace=ns))
    assert contexts("a").namespace == "a"
    assert contexts("b").namespace == "b"
    assert len(contexts) == 2


def test_past_the_limit_the_oldest_namespace_is_dropped_and_answers_stay_right() -> None:
    contexts = SharedContexts(lambda ns: GenContext(namespace=ns), limit=2)
    first_a = contexts("a")
    contexts("b")
    contexts("c")
    assert len(contexts) == 2
    again = contexts("a")
    assert again == first_a and again is not first_a  # a fresh, equal copy
    assert len(contexts) == 2
