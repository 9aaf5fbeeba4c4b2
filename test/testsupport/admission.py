"""ValidatingAdmissionPolicies for tests: refuse chosen operations in one namespace, for the block."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

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
    binding = {
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
    await api.apply(POLICY, policy, field_manager=TEST_FIELD_MANAGER)
    await api.apply(BINDING, binding, field_manager=TEST_FIELD_MANAGER)
    try:
        await eventually(in_force, until=bool, timeout=30)
        yield
    finally:
        for resource in (BINDING, POLICY):
            with contextlib.suppress(NotFound):
                await api.delete(resource, name)
