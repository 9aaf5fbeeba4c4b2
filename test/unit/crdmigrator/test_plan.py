"""What the migrator does with a CRD, decided from the CRD object alone: whether to migrate, where its
objects live, and when storedVersions may be trimmed."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.crdmigrator.plan import CrdShapeError, may_trim, plan_for, trim_patch


def crd(
    *,
    storage: str = "v2",
    stored: list[str] | None = None,
    generation: int = 3,
    scope: str = "Namespaced",
    versions: tuple[str, ...] = ("v1", "v2"),
    resource_version: str = "100",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {
            "name": "widgets.example.test",
            "generation": generation,
            "resourceVersion": resource_version,
        },
        "spec": {
            "group": "example.test",
            "scope": scope,
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [{"name": v, "served": True, "storage": v == storage} for v in versions],
        },
    }
    if stored is not None:
        obj["status"] = {"storedVersions": stored}
    return obj


def test_only_the_storage_version_stored_needs_no_migration() -> None:
    assert not plan_for(crd(stored=["v2"])).needs_migration


def test_an_older_stored_version_needs_migration() -> None:
    plan = plan_for(crd(stored=["v1", "v2"]))
    assert plan.needs_migration
    assert plan.stale_versions == ("v1",)


def test_stored_versions_without_the_storage_version_need_migration() -> None:
    assert plan_for(crd(stored=["v1"])).needs_migration


def test_a_crd_without_status_needs_migration() -> None:
    assert plan_for(crd(stored=None)).needs_migration


def test_objects_are_addressed_at_the_storage_version() -> None:
    resource = plan_for(crd(storage="v1", stored=["v1", "v2"])).resource
    assert (resource.group, resource.version, resource.plural, resource.kind) == (
        "example.test",
        "v1",
        "widgets",
        "Widget",
    )
    assert resource.namespaced


def test_a_cluster_scoped_crd_lists_across_the_cluster() -> None:
    assert not plan_for(crd(scope="Cluster", stored=["v2"])).resource.namespaced


def test_no_storage_version_is_refused() -> None:
    obj = crd(stored=["v2"])
    for version in obj["spec"]["versions"]:
        version["storage"] = False
    with pytest.raises(CrdShapeError, match="exactly one storage version"):
        plan_for(obj)


def test_two_storage_versions_are_refused() -> None:
    obj = crd(stored=["v2"])
    for version in obj["spec"]["versions"]:
        version["storage"] = True
    with pytest.raises(CrdShapeError):
        plan_for(obj)


def test_a_crd_without_names_is_refused() -> None:
    obj = crd(stored=["v2"])
    del obj["spec"]["names"]
    with pytest.raises(CrdShapeError, match="names"):
        plan_for(obj)


def test_trim_when_the_spec_did_not_change() -> None:
    started = plan_for(crd(stored=["v1", "v2"], resource_version="100"))
    # The status or the metadata changed meanwhile (a new resourceVersion), the spec did not.
    assert may_trim(started, plan_for(crd(stored=["v1", "v2"], resource_version="250")))


def test_no_trim_when_the_generation_changed() -> None:
    started = plan_for(crd(stored=["v1", "v2"]))
    assert not may_trim(started, plan_for(crd(stored=["v1", "v2"], generation=4)))


def test_no_trim_when_the_storage_version_changed() -> None:
    started = plan_for(crd(stored=["v1", "v2"]))
    # The same generation and a different storage version cannot come from one API server; refused anyway.
    assert not may_trim(started, plan_for(crd(storage="v1", stored=["v1", "v2"])))


def test_no_trim_when_already_trimmed() -> None:
    started = plan_for(crd(stored=["v1", "v2"]))
    assert not may_trim(started, plan_for(crd(stored=["v2"])))


def test_the_trim_patch_keeps_only_the_storage_version_under_a_precondition() -> None:
    assert trim_patch(plan_for(crd(stored=["v1", "v2"], resource_version="250"))) == {
        "metadata": {"resourceVersion": "250"},
        "status": {"storedVersions": ["v2"]},
    }
