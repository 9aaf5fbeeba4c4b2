"""Event handlers: keys per event deduplicated; updates map old and new; owners by controller ref."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal.client.resource import DEPLOYMENT, NAMESPACE, Resource
from dynamo_operator.internal.controller import generation_changed
from dynamo_operator.internal.controller.handlers import EnqueueMapped, controller_owner_keys, own_key

DGD = Resource("nvidia.com", "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")


class ListQueue:
    def __init__(self) -> None:
        self.added: list[str] = []
        self.added_first: list[str] = []
        self.added_urgent: list[str] = []

    def add(self, key: str) -> None:
        self.added.append(key)

    def add_first(self, key: str) -> None:
        self.added_first.append(key)

    def add_urgent(self, key: str) -> None:
        self.added_urgent.append(key)


def child(
    owner: str | None, *, kind: str = "DynamoGraphDeployment", controller: bool = True
) -> dict[str, Any]:
    refs = (
        [
            {
                "apiVersion": "nvidia.com/v1beta1",
                "kind": kind,
                "name": owner,
                "controller": controller,
                "uid": "u",
            }
        ]
        if owner
        else []
    )
    return {"metadata": {"name": "c", "namespace": "ns", "ownerReferences": refs, "generation": 1}}


def test_for_handler_enqueues_own_key_once_per_update() -> None:
    """An update of one object enqueues its key once, not twice."""
    q = ListQueue()
    handler = EnqueueMapped(q, own_key)  # type: ignore[arg-type]
    handler.on_update(child(None), child(None))
    handler.on_add(child(None))
    handler.on_delete(child(None))
    assert q.added == ["ns/c", "ns/c", "ns/c"]
    assert len(q.added) == 3


def test_owner_change_enqueues_old_and_new_owner() -> None:
    """Moving a child from owner a to owner b re-triggers both."""
    q = ListQueue()
    handler = EnqueueMapped(q, controller_owner_keys(DGD))  # type: ignore[arg-type]
    handler.on_update(child("a"), child("b"))
    assert q.added == ["ns/a", "ns/b"]


def test_owner_mapper_ignores_non_controller_and_other_kinds() -> None:
    """Only the controller ref of the For group/kind counts; its version is ignored."""
    mapper = controller_owner_keys(DGD)
    assert mapper(child("a")) == ["ns/a"]
    assert mapper(child("a", controller=False)) == []
    assert mapper(child("a", kind="Other")) == []
    assert mapper(child(None)) == []
    apps_child = {
        "metadata": {
            "namespace": "ns",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "controller": True}
            ],
        }
    }
    assert controller_owner_keys(DEPLOYMENT)(apps_child) == ["ns/d"]


def test_cluster_scoped_owner_key_has_no_namespace() -> None:
    """A cluster-scoped owner's key is its bare name."""
    ref = {"apiVersion": "v1", "kind": "Namespace", "name": "team", "controller": True}
    assert controller_owner_keys(NAMESPACE)(
        {"metadata": {"namespace": "team", "ownerReferences": [ref]}}
    ) == ["team"]


def test_mapper_duplicates_collapse_per_event() -> None:
    """A mapper returning repeated keys enqueues each once per event."""
    q = ListQueue()
    handler = EnqueueMapped(q, lambda _o: ["ns/x", "ns/y", "ns/x"])  # type: ignore[arg-type]
    handler.on_add(child(None))
    assert q.added == ["ns/x", "ns/y"]


def test_predicates_filter_events() -> None:
    """A blocked update enqueues nothing; creates still pass."""
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, [generation_changed])  # type: ignore[arg-type]
    handler.on_update(child(None), child(None))
    assert q.added == []
    handler.on_add(child(None))
    assert q.added == ["ns/c"]


def test_adds_first_sends_an_add_events_keys_to_the_first_lane_once_each() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, lambda _o: ["ns/x", "ns/y", "ns/x"], adds_first=True)  # type: ignore[arg-type]
    handler.on_add(child(None))
    assert (q.added_first, q.added) == (["ns/x", "ns/y"], [])


def test_adds_first_leaves_updates_and_deletes_in_the_plain_lane() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, adds_first=True)  # type: ignore[arg-type]
    handler.on_update(child(None), child(None))
    handler.on_delete(child(None))
    assert (q.added_first, q.added) == ([], ["ns/c", "ns/c"])


def test_adds_first_still_filters_adds_through_the_predicates() -> None:
    q = ListQueue()

    class Never:
        def create(self, obj: Any) -> bool:
            return False

    handler = EnqueueMapped(q, own_key, [Never()], adds_first=True)  # type: ignore[arg-type, list-item]
    handler.on_add(child(None))
    assert (q.added_first, q.added) == ([], [])


def test_without_adds_first_an_add_uses_the_plain_lane() -> None:
    q = ListQueue()
    EnqueueMapped(q, own_key).on_add(child(None))  # type: ignore[arg-type]
    assert (q.added_first, q.added) == ([], ["ns/c"])


class PassesWhen:
    """An `urgent` predicate that passes updates whose new object carries label urgent=yes."""

    def update(self, old: Any, new: Any) -> bool:
        return bool((new["metadata"].get("labels") or {}).get("urgent") == "yes")


def labelled(owner: str | None, **labels: str) -> dict[str, Any]:
    obj = child(owner)
    obj["metadata"]["labels"] = labels
    return obj


def test_an_update_passing_urgent_queues_the_new_objects_keys_urgently() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, urgent=PassesWhen())  # type: ignore[arg-type]
    handler.on_update(child(None), labelled(None, urgent="yes"))
    assert q.added_urgent == ["ns/c"]


def test_an_update_not_passing_urgent_uses_the_plain_lane() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, urgent=PassesWhen())  # type: ignore[arg-type]
    handler.on_update(child(None), labelled(None, urgent="no"))
    assert (q.added_urgent, q.added) == ([], ["ns/c"])


def test_urgent_is_only_asked_about_updates_the_predicates_let_through() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, [generation_changed], urgent=PassesWhen())  # type: ignore[arg-type]
    handler.on_update(child(None), labelled(None, urgent="yes"))  # same generation: filtered out
    assert (q.added_urgent, q.added) == ([], [])


def test_adds_and_deletes_never_go_to_the_urgent_lane() -> None:
    q = ListQueue()
    handler = EnqueueMapped(q, own_key, urgent=PassesWhen())  # type: ignore[arg-type]
    handler.on_add(labelled(None, urgent="yes"))
    handler.on_delete(labelled(None, urgent="yes"))
    assert (q.added_urgent, q.added) == ([], ["ns/c", "ns/c"])
