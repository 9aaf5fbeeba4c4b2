"""The profiling pods' ServiceAccount and RoleBinding, generated in internal/dynamo/dgdr, as the real
API server takes them: created once, a second creation changes nothing."""

from __future__ import annotations

import pytest
from dynamo_operator.controllers.dynamographdeploymentrequest import create_profiling_rbac
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import ROLE_BINDING, SERVICE_ACCOUNT
from dynamo_operator.internal.dynamo.dgdr.names import PROFILING_ROLE_BINDING, PROFILING_SERVICE_ACCOUNT
from dynamo_operator.internal.dynamo.dgdr.rbac import profiling_rbac

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

# A ClusterRole every kube-apiserver bootstraps: the binding needs no role of the test's own.
CLUSTER_ROLE = "view"


async def test_a_cluster_wide_install_binds_the_profiling_service_account_once(api: Client, ns: str) -> None:
    wanted = profiling_rbac(ns, cluster_role=CLUSTER_ROLE, namespace_restricted=False)
    await create_profiling_rbac(api, wanted)
    first = await api.get(ROLE_BINDING, PROFILING_ROLE_BINDING, namespace=ns)
    await create_profiling_rbac(api, wanted)  # the next request's Pending step: AlreadyExists, kept
    again = await api.get(ROLE_BINDING, PROFILING_ROLE_BINDING, namespace=ns)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert again["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "view",
    }
    assert again["subjects"] == [
        {"kind": "ServiceAccount", "name": PROFILING_SERVICE_ACCOUNT, "namespace": ns}
    ]
    account = await api.get(SERVICE_ACCOUNT, PROFILING_SERVICE_ACCOUNT, namespace=ns)
    assert account["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"


async def test_a_restricted_install_creates_the_service_account_and_no_binding(api: Client, ns: str) -> None:
    await create_profiling_rbac(api, profiling_rbac(ns, cluster_role=CLUSTER_ROLE, namespace_restricted=True))
    assert await api.get(SERVICE_ACCOUNT, PROFILING_SERVICE_ACCOUNT, namespace=ns)
    assert await api.list(ROLE_BINDING, namespace=ns) == []
