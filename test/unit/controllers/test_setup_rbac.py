"""config/rbac/role.yaml against what the operator registers: every informer may list and watch its
resource, and every optional kind may be written, with every optional API served."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, cast

import yaml
from dynamo_operator.context import settings_from
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.manager.options import ManagerOptions
from dynamo_operator.wiring import register_controllers

ROLE = Path(__file__).resolve().parents[3] / "config" / "rbac" / "role.yaml"
WRITE = {"create", "patch", "delete"}


class OfflineClient:
    """All registration asks of the client: the version a kind is written in (as stored here)."""

    def wire_version(self, resource: Resource) -> str:
        return resource.api_version


def allowed(rules: list[dict[str, Any]], resource: Resource, verbs: set[str]) -> set[str]:
    """The subset of `verbs` the ClusterRole grants on `resource`."""
    granted: set[str] = set()
    for rule in rules:
        if resource.group in rule.get("apiGroups", ()) and resource.plural in rule.get("resources", ()):
            granted |= set(rule.get("verbs", ()))
    return verbs & granted


async def operator_with_every_api() -> Manager:
    everything = Capabilities(**{f.name: True for f in dataclasses.fields(Capabilities)})
    options = OperatorOptions(istio_virtual_service_gateway="istio-system/gateway", enable_grove="true")
    mgr = Manager(
        cast(Client, OfflineClient()),  # registration sends no request
        options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"),
    )
    register_controllers(mgr, settings_from(options, everything))
    return mgr


async def test_role_grants_list_and_watch_on_every_informer_the_operator_registers() -> None:
    rules = yaml.safe_load(ROLE.read_text())["rules"]
    mgr = await operator_with_every_api()
    resources = {informer.scope.resource for informer in mgr.cache.informers()}
    assert CUSTOM_RESOURCE_DEFINITION in resources  # the optional-API watch
    missing = {
        f"{r.plural}.{r.group or 'core'}"
        for r in resources
        if allowed(rules, r, {"list", "watch"}) != {"list", "watch"}
    }
    assert not missing


async def test_role_grants_writes_on_every_optional_kind_and_reads_of_their_crds() -> None:
    rules = yaml.safe_load(ROLE.read_text())["rules"]
    mgr = await operator_with_every_api()
    optional = {
        r
        for r in (informer.scope.resource for informer in mgr.cache.informers())
        if r.group.endswith(("x-k8s.io", "volcano.sh", "istio.io", "inference.networking.k8s.io"))
    }
    assert len(optional) == 4  # LWS, PodGroup, VirtualService, InferencePool
    for resource in optional:
        assert allowed(rules, resource, WRITE) == WRITE, resource
    assert allowed(rules, CUSTOM_RESOURCE_DEFINITION, {"get"}) == {"get"}


def test_role_lets_the_operator_create_secrets_but_never_change_them() -> None:
    """The MPI SSH key Secret is created once per namespace and never written again (never rotated
    under running pods), so the role grants create on Secrets and no update, patch or delete."""
    from dynamo_operator.internal.client.resource import SECRET

    rules = yaml.safe_load(ROLE.read_text())["rules"]
    assert allowed(rules, SECRET, {"create", "update", "patch", "delete"}) == {"create"}
