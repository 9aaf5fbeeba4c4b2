"""operator/storage_migration.py: which CRDs the operator migrates, that the role grants what that
takes, and that a namespace-restricted operator leaves migration alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import yaml
from dynamo_operator import storage_migration
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.manager.options import ManagerOptions

ROOT = Path(__file__).resolve().parents[3]
ROLES = (ROOT / "config/rbac/role.yaml", ROOT / "deploy/helm/dynamo-operator/files/manager-role.yaml")


class OfflineClient:
    """All registration asks of the client: the version a kind is written in (as stored here)."""

    def wire_version(self, resource: Resource) -> str:
        return resource.api_version


def manager(namespace: str | None = None) -> Manager:
    return Manager(
        cast(Client, OfflineClient()),  # registration sends no request
        options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", namespace=namespace),
    )


def granted(rules: list[dict[str, Any]], group: str, resource: str, name: str | None = None) -> set[str]:
    verbs: set[str] = set()
    for rule in rules:
        names = rule.get("resourceNames")
        if group in rule["apiGroups"] and resource in rule["resources"] and (not names or name in names):
            verbs |= set(rule["verbs"])
    return verbs


def test_the_four_kinds_served_at_two_versions_are_migrated() -> None:
    migrator = storage_migration.register(manager())
    assert migrator is not None
    assert sorted(migrator.crd_names) == sorted(
        f"{r.plural}.nvidia.com" for r in (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)
    )


def test_a_namespace_restricted_operator_does_not_migrate() -> None:
    assert storage_migration.register(manager("team-a")) is None


def test_both_roles_grant_what_the_migrator_needs() -> None:
    by_plural = {f"{r.plural}.{r.group}": r.plural for r in (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)}
    for path in ROLES:
        rules = yaml.safe_load(path.read_text())["rules"]
        for crd in storage_migration.MIGRATED_CRDS:
            assert "get" in granted(rules, "apiextensions.k8s.io", "customresourcedefinitions", crd), path
            assert "patch" in granted(
                rules, "apiextensions.k8s.io", "customresourcedefinitions/status", crd
            ), path
            assert {"list", "get", "update"} <= granted(rules, "nvidia.com", by_plural[crd]), path
