"""context.settings_from + Settings.gen_context: operator flags become the generation context."""

from __future__ import annotations

from dynamo_operator.context import settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext


def context_for(*argv: str) -> GenContext:
    options = options_from_args(build_parser().parse_args(list(argv)), environ={})
    return settings_from(options, Capabilities()).gen_context("team")


def test_infrastructure_addresses_become_component_env() -> None:
    """NATS, etcd, Prometheus and Model Express addresses are given to every component."""
    ctx = context_for(
        "--nats-address=nats://n:4222",
        "--etcd-address=e:2379",
        "--prometheus-endpoint=http://p:9090",
        "--model-express-url=http://m:8001",
    )
    assert dict(ctx.infrastructure_env) == {
        "NATS_SERVER": "nats://n:4222",
        "ETCD_ENDPOINTS": "e:2379",
        "PROMETHEUS_ENDPOINT": "http://p:9090",
        "MODEL_EXPRESS_URL": "http://m:8001",
    }


def test_unset_addresses_inject_nothing() -> None:
    """Without the flags no infrastructure env is injected."""
    assert dict(context_for().infrastructure_env) == {}


def test_operator_version_reaches_generation() -> None:
    """--operator-version is the version new graphs are stamped with; "unknown" stamps nothing."""
    assert context_for("--operator-version=1.0.0").operator_version == "1.0.0"
    assert context_for("--operator-version=unknown").operator_version == ""


def test_epp_cluster_role_reaches_generation() -> None:
    """--epp-cluster-role-name is the ClusterRole the EPP ServiceAccount is bound to."""
    assert context_for("--epp-cluster-role-name=epp").epp_cluster_role == "epp"
    assert context_for().epp_cluster_role == ""


def test_mpi_secret_settings_reach_generation() -> None:
    """The Secret's name and source namespace; unset: upstream's name, a key pair per namespace."""
    ctx = context_for("--mpi-run-ssh-secret-name=ssh", "--mpi-run-ssh-secret-namespace=dynamo-system")
    assert (ctx.mpi_ssh_secret_name, ctx.mpi_ssh_secret_namespace) == ("ssh", "dynamo-system")
    assert (context_for().mpi_ssh_secret_name, context_for().mpi_ssh_secret_namespace) == (
        "mpi-run-ssh-secret",
        "",
    )


def test_discovery_backend_reaches_generation() -> None:
    """--discovery-backend is every component's default backend (kubernetes unless set)."""
    assert context_for("--discovery-backend=etcd").discovery_backend == "etcd"
    assert context_for().discovery_backend == "kubernetes"


def test_discovery_backend_flag_refuses_other_values() -> None:
    """Only kubernetes and etcd exist, as upstream: anything else stops at the command line."""
    import pytest

    with pytest.raises(SystemExit):
        build_parser().parse_args(["--discovery-backend=consul"])
