"""ValidatingAdmissionPolicies for tests, each bound to one namespace for the block: one refusing chosen
operations (`refusing`), or a policy the project ships (`shipped`, `bound`)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import Resource

from testsupport.api import eventually
from testsupport.operator import TEST_FIELD_MANAGER

POLICY = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicies",
    "ValidatingAdmissionPolicy",
    namespaced=False,
)
BINDING = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "validatingadmissionpolicybindings",
    "ValidatingAdmissionPolicyBinding",
    namespaced=False,
)


def namespace_binding(name: str, namespace: str) -> dict[str, Any]:
    """A binding of the policy `name` (under the same name) that denies in `namespace` only."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
            },
        },
    }


@contextlib.asynccontextmanager
async def refusing(
    api: Client,
    name: str,
    *,
    namespace: str,
    rules: Sequence[dict[str, Any]],
    message: str,
    in_force: Callable[[], Awaitable[bool]],
) -> AsyncIterator[None]:
    """A policy refusing every request matching `rules` in `namespace` (and only there) with
    `message`, in force (as `in_force` probes) once entered, removed on exit."""
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": list(rules)},
            "validations": [{"expression": "false", "message": message}],
        },
    }
    binding = namespace_binding(name, namespace)
    await api.apply(POLICY, policy, field_manager=TEST_FIELD_MANAGER)
    await api.apply(BINDING, binding, field_manager=TEST_FIELD_MANAGER)
    try:
        await eventually(in_force, until=bool, timeout=30)
        yield
    finally:
        for resource in (BINDING, POLICY):
            with contextlib.suppress(NotFound):
                await api.delete(resource, name)


ADMISSION_DIR = Path(__file__).resolve().parents[2] / "config" / "admission"


def shipped(file: str) -> dict[str, Any]:
    """A ValidatingAdmissionPolicy of config/admission, as the file holds it."""
    policy: dict[str, Any] = yaml.safe_load((ADMISSION_DIR / file).read_text())
    return policy


@contextlib.asynccontextmanager
async def bound(
    api: Client,
    policy: Mapping[str, Any],
    *,
    namespace: str,
    in_force: Callable[[], Awaitable[bool]],
    param_ref: Mapping[str, Any] | None = None,
) -> AsyncIterator[str]:
    """`policy` under a name of its own (yielded), bound to `namespace` only (so no other test is
    subject to it), in force (as `in_force` probes) once entered, removed on exit."""
    name = f"{policy['metadata']['name']}-{namespace}"[:63].rstrip("-.")
    renamed = copy.deepcopy(dict(policy))
    renamed["metadata"] = {**renamed["metadata"], "name": name}
    binding = namespace_binding(name, namespace)
    if param_ref is not None:
        binding["spec"]["paramRef"] = dict(param_ref)
    await api.apply(POLICY, renamed, field_manager=TEST_FIELD_MANAGER)
    await api.apply(BINDING, binding, field_manager=TEST_FIELD_MANAGER)
    try:
        await eventually(in_force, until=bool, timeout=30)
        yield name
    finally:
        for resource in (BINDING, POLICY):
            with contextlib.suppress(NotFound):
                await api.delete(resource, name)
