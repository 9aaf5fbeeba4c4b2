"""What a profiling Job's pods run as: the `dgdr-profiling-job` ServiceAccount in the request's
namespace and, in a cluster-wide install, a RoleBinding of it to the profiling ClusterRole the
operator's chart ships. Pure: the reconciler creates them (create-only: an existing one is kept as
found) before the Job, whose pods cannot be created without the ServiceAccount.

A namespace-restricted install has no ClusterRole to bind: its chart ships the Role and RoleBinding
with the operator, so only the ServiceAccount is generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal.dynamo.dgdr.names import (
    MANAGED_BY_OPERATOR,
    PROFILING_ROLE_BINDING,
    PROFILING_SERVICE_ACCOUNT,
)

RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass(frozen=True, slots=True)
class ProfilingRbac:
    service_account: dict[str, Any]
    role_binding: dict[str, Any] | None  # None: nothing to bind (restricted, or no ClusterRole set)


def profiling_rbac(namespace: str, *, cluster_role: str | None, namespace_restricted: bool) -> ProfilingRbac:
    """The profiling pods' ServiceAccount in `namespace`, bound to `cluster_role` when one is given
    and the install is cluster-wide."""
    labels = {
        "app.kubernetes.io/managed-by": MANAGED_BY_OPERATOR,
        "app.kubernetes.io/component": "rbac",
        "app.kubernetes.io/name": PROFILING_SERVICE_ACCOUNT,
    }
    service_account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": PROFILING_SERVICE_ACCOUNT, "namespace": namespace, "labels": dict(labels)},
    }
    if namespace_restricted or not cluster_role:
        return ProfilingRbac(service_account, None)
    role_binding = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": PROFILING_ROLE_BINDING, "namespace": namespace, "labels": dict(labels)},
        "subjects": [{"kind": "ServiceAccount", "name": PROFILING_SERVICE_ACCOUNT, "namespace": namespace}],
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": cluster_role},
    }
    return ProfilingRbac(service_account, role_binding)
