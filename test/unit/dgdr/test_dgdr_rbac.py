"""The profiling pods' ServiceAccount and its RoleBinding, as generated for a request's namespace."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.dynamo.dgdr.names import PROFILING_ROLE_BINDING, PROFILING_SERVICE_ACCOUNT
from dynamo_operator.internal.dynamo.dgdr.rbac import profiling_rbac


def test_the_service_account_lands_in_the_request_namespace_with_the_operator_labels() -> None:
    sa = profiling_rbac("team-a", cluster_role="profiler", namespace_restricted=False).service_account
    assert (sa["kind"], sa["metadata"]["name"], sa["metadata"]["namespace"]) == (
        "ServiceAccount",
        PROFILING_SERVICE_ACCOUNT,
        "team-a",
    )
    assert sa["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "dynamo-operator"


def test_a_cluster_wide_install_binds_the_service_account_to_the_profiling_cluster_role() -> None:
    binding = profiling_rbac("team-a", cluster_role="profiler", namespace_restricted=False).role_binding
    assert binding is not None
    assert (binding["metadata"]["name"], binding["metadata"]["namespace"]) == (
        PROFILING_ROLE_BINDING,
        "team-a",
    )
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": PROFILING_SERVICE_ACCOUNT, "namespace": "team-a"}
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "profiler",
    }


@pytest.mark.parametrize(
    ("cluster_role", "restricted"),
    [
        pytest.param("profiler", True, id="restricted-install-ships-its-own"),
        pytest.param(None, False, id="no-cluster-role-configured"),
        pytest.param("", False, id="empty-cluster-role"),
    ],
)
def test_no_role_binding_without_a_cluster_role_to_bind(cluster_role: str | None, restricted: bool) -> None:
    assert (
        profiling_rbac("team-a", cluster_role=cluster_role, namespace_restricted=restricted).role_binding
        is None
    )
