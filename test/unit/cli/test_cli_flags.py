"""The CLI: flag defaults, parsing, subcommands and --help."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import subprocess
import sys
from pathlib import Path

import pytest
from dynamo_operator.__main__ import main, package_version
from dynamo_operator.app import manager_options, run_operator
from dynamo_operator.flags import (
    DEFAULT_GC_THRESHOLD,
    DEFAULT_LEADER_ELECTION_ID,
    UPSTREAM_RELEASE,
    OperatorOptions,
    build_parser,
    default_leader_election_namespace,
    options_from_args,
)
from dynamo_operator.internal.consts import ANNOTATION_ORIGIN_VERSION
from dynamo_operator.internal.dynamo.component.backends import vllm_executor


def parse(*argv: str) -> OperatorOptions:
    return options_from_args(build_parser().parse_args(list(argv)), environ={})


def test_defaults_match_controller_runtime_scaffold() -> None:
    """No flags: secure metrics on :8443 (issue #34), :8081 probes, no election, JSON logs; sixteen
    workers per controller (not controller-runtime's one: a worker here is a coroutine waiting on the
    API server)."""
    opts = parse()
    assert (opts.metrics_bind_address, opts.health_probe_bind_address) == (":8443", ":8081")
    assert not opts.leader_elect
    assert opts.leader_election_id == DEFAULT_LEADER_ELECTION_ID
    assert (opts.max_concurrent_reconciles, opts.log_level, opts.log_format) == (16, "info", "json")
    assert opts.creates_first
    assert opts.namespace is None
    assert (opts.metrics_secure, opts.metrics_cert_path) == (True, "")


@pytest.mark.parametrize(
    ("argv", "address", "secure"),
    [
        pytest.param(["--metrics-secure"], ":8443", True, id="secure-bare-8443"),
        pytest.param(["--metrics-secure=true"], ":8443", True, id="secure-true-8443"),
        pytest.param(["--metrics-secure=false"], ":8080", False, id="plain-8080"),
        pytest.param(
            ["--metrics-secure", "--metrics-bind-address=:9443"], ":9443", True, id="secure-own-port"
        ),
        pytest.param(
            ["--metrics-bind-address=127.0.0.1:8443"], "127.0.0.1:8443", True, id="secure-own-port-default"
        ),
        pytest.param(
            ["--metrics-secure=false", "--metrics-bind-address=127.0.0.1:8080"],
            "127.0.0.1:8080",
            False,
            id="plain-own-port",
        ),
        pytest.param([], ":8443", True, id="secure-by-default"),
    ],
)
def test_secure_metrics_default_to_kubebuilders_port(argv: list[str], address: str, secure: bool) -> None:
    """Secure metrics are the default, on :8443; --metrics-secure=false moves the default address to
    :8080; an explicit address always wins."""
    opts = parse(*argv)
    assert (opts.metrics_bind_address, opts.metrics_secure) == (address, secure)


def test_secure_metrics_reach_the_manager_with_their_certificate_directory() -> None:
    """--metrics-cert-path becomes the manager's certificate directory; without it none (self-signed)."""
    opts = manager_options(parse("--metrics-secure", "--metrics-cert-path", "/tmp/k8s-metrics-server/certs"))
    assert (opts.metrics_secure, opts.metrics_cert_dir) == (True, "/tmp/k8s-metrics-server/certs")
    assert manager_options(parse("--metrics-secure")).metrics_cert_dir is None


@pytest.mark.parametrize(
    ("argv", "field", "value"),
    [
        pytest.param(["--leader-elect"], "leader_elect", True, id="leader-elect-bare"),
        pytest.param(["--leader-elect=false"], "leader_elect", False, id="leader-elect-false"),
        pytest.param(["--metrics-bind-address", "0"], "metrics_bind_address", "0", id="metrics-off"),
        pytest.param(["--namespace", "team"], "namespace", "team", id="restricted"),
        pytest.param(["--restrictedNamespace=team"], "namespace", "team", id="upstream-spelling"),
        pytest.param(["--max-concurrent-reconciles", "4"], "max_concurrent_reconciles", 4, id="workers"),
        pytest.param(["--creates-first"], "creates_first", True, id="creates-first"),
        pytest.param(["--no-creates-first"], "creates_first", False, id="no-creates-first"),
        pytest.param(["--log-format", "console"], "log_format", "console", id="console-logs"),
        pytest.param(
            ["--leader-election-retry-period", "500ms"], "leader_election_retry_period", 0.5, id="duration-ms"
        ),
        pytest.param(
            ["--graceful-shutdown-timeout", "1m"], "graceful_shutdown_timeout", 60.0, id="duration-m"
        ),
        pytest.param(
            ["--leader-election-namespace", "ops"], "leader_election_namespace", "ops", id="lease-ns"
        ),
        pytest.param(["--nats-address", "nats://n:4222"], "nats_address", "nats://n:4222", id="nats"),
        pytest.param(["--natsAddr=nats://n:4222"], "nats_address", "nats://n:4222", id="nats-upstream"),
        pytest.param(["--etcd-address", "e:2379"], "etcd_address", "e:2379", id="etcd"),
        pytest.param(["--etcdAddr=e:2379"], "etcd_address", "e:2379", id="etcd-upstream"),
        pytest.param(["--operator-version", "1.0.0"], "operator_version", "1.0.0", id="operator-version"),
        pytest.param(["--lora-unload-grace", "2m"], "lora_unload_grace", 120.0, id="lora-unload-grace"),
        pytest.param([], "lora_unload_grace", 60.0, id="lora-unload-grace-default"),
        pytest.param([], "event_loop", "uvloop", id="event-loop-default"),
        pytest.param(["--event-loop", "uvloop"], "event_loop", "uvloop", id="event-loop-uvloop"),
        pytest.param(["--event-loop=asyncio"], "event_loop", "asyncio", id="event-loop-asyncio"),
    ],
)
def test_flag_parsing(argv: list[str], field: str, value: object) -> None:
    """Each flag lands in its option."""
    assert getattr(parse(*argv), field) == value


def test_group_kind_concurrency_collects_one_count_per_kind() -> None:
    """Repeated --group-kind-concurrency flags build one mapping; the last count of a kind wins."""
    opts = parse(
        "--group-kind-concurrency",
        "DynamoComponentDeployment.nvidia.com=24",
        "--group-kind-concurrency=Pod=2",
        "--group-kind-concurrency",
        "Pod=3",
    )
    assert opts.group_kind_concurrency == {"DynamoComponentDeployment.nvidia.com": 24, "Pod": 3}
    assert manager_options(opts).group_kind_concurrency == opts.group_kind_concurrency


def test_group_kind_concurrency_is_empty_by_default() -> None:
    """Without the flag every controller runs --max-concurrent-reconciles workers."""
    assert manager_options(parse()).group_kind_concurrency == {}


def test_operator_version_defaults_to_the_upstream_release_generated_as() -> None:
    """Without --operator-version, new graphs are stamped with a version of upstream's line (not this
    package's 0.x), so a new vLLM multinode graph gets multiprocessing workers, as upstream's."""
    assert parse().operator_version == UPSTREAM_RELEASE
    assert vllm_executor({ANNOTATION_ORIGIN_VERSION: parse().operator_version}) == "mp"


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--max-concurrent-reconciles", "0"], id="zero-workers"),
        pytest.param(["--log-format", "xml"], id="unknown-format"),
        pytest.param(["--log-level", "loud"], id="unknown-level"),
        pytest.param(["--group-kind-concurrency", "Deployment.apps"], id="kind-workers-without-count"),
        pytest.param(["--group-kind-concurrency", "Deployment.apps=0"], id="kind-workers-zero"),
        pytest.param(["--group-kind-concurrency", "Deployment.apps=many"], id="kind-workers-not-a-number"),
        pytest.param(["--group-kind-concurrency", "=4"], id="kind-workers-without-kind"),
        pytest.param(["--group-kind-concurrency", "deployments.apps=4"], id="kind-workers-plural-not-kind"),
        pytest.param(["--event-loop", "trio"], id="unknown-event-loop"),
        pytest.param(["--event-loop", "UVLOOP"], id="event-loop-is-case-sensitive"),
        pytest.param(["--event-loop="], id="empty-event-loop"),
        pytest.param(["--event-loop", "uvloop,asyncio"], id="two-event-loops"),
    ],
)
def test_bad_flags_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """argparse rejects bad values with exit code 2 and names the flag."""
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    assert argv[0].partition("=")[0] in capsys.readouterr().err


def test_leader_election_namespace_fallbacks(tmp_path: Path) -> None:
    """POD_NAMESPACE, then the service-account file, then "default"."""
    ns_file = tmp_path / "namespace"
    assert default_leader_election_namespace({"POD_NAMESPACE": "pod-ns"}, ns_file) == "pod-ns"
    assert default_leader_election_namespace({}, ns_file) == "default"
    ns_file.write_text("sa-ns\n")
    assert default_leader_election_namespace({}, ns_file) == "sa-ns"


def test_manager_options_from_flags() -> None:
    """--leader-elect yields a validated Lease config with a hostname_uuid identity."""
    opts = manager_options(
        parse("--leader-elect", "--leader-election-namespace", "ops", "--namespace", "team")
    )
    assert opts.leader_election is not None
    assert (opts.leader_election.name, opts.leader_election.namespace) == (DEFAULT_LEADER_ELECTION_ID, "ops")
    assert "_" in opts.leader_election.identity
    assert opts.namespace == "team"
    assert manager_options(parse()).leader_election is None


def test_invalid_election_timings_are_refused() -> None:
    """Renew deadline >= lease duration is a configuration error."""
    with pytest.raises(ValueError):
        manager_options(parse("--leader-elect", "--leader-election-lease-duration", "5s"))


def test_version_subcommand_prints_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`version` prints the installed version."""
    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == package_version() != ""


def test_help_lists_the_flags_and_subcommands() -> None:
    """`--help` through the console script exits 0 and documents the main flags."""
    exe = Path(sys.executable).with_name("dynamo-operator")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60, check=True).stdout
    for flag in (
        "--metrics-bind-address",
        "--metrics-secure",
        "--metrics-cert-path",
        "--health-probe-bind-address",
        "--leader-elect",
        "--namespace",
        "--max-concurrent-reconciles",
        "--log-format",
        "--kubeconfig",
        "render",
        "version",
    ):
        assert flag in out


def test_render_help() -> None:
    """`render --help` documents -f, --namespace and --with-lws."""
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["render", "--help"])
    assert exc.value.code == 0


def test_render_reports_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing input file is exit 1 with a message, not a traceback."""
    assert main(["render", "-f", str(tmp_path / "nope.yaml")]) == 1
    assert "dynamo-operator render" in capsys.readouterr().err


def test_run_without_a_cluster_exits_1_with_a_message(tmp_path: Path) -> None:
    """No usable kubeconfig: one error line and exit code 1, no traceback."""
    exe = Path(sys.executable).with_name("dynamo-operator")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONSAFEPATH": "1"}
    done = subprocess.run(
        [exe, "--kubeconfig", str(tmp_path / "missing"), "--metrics-bind-address", "0",
         "--health-probe-bind-address", "0"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Cannot configure the Kubernetes client" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("text", "thresholds"),
    [
        pytest.param("50000,20,10", (50000, 20, 10), id="all-three"),
        pytest.param("50000", (50000, 10, 10), id="young-only"),
        pytest.param("2000,5", (2000, 5, 10), id="two"),
        pytest.param(" 900 , 0 , 0 ", (900, 0, 0), id="spaces-and-zero-older"),
    ],
)
def test_gc_threshold_takes_one_to_three_generations(text: str, thresholds: tuple[int, int, int]) -> None:
    """--gc-threshold G0[,G1[,G2]]: generations left out keep Python's 10."""
    assert parse(f"--gc-threshold={text}").gc_threshold == thresholds


def test_gc_threshold_defaults_to_the_documented_value() -> None:
    assert parse().gc_threshold == DEFAULT_GC_THRESHOLD
    assert DEFAULT_GC_THRESHOLD[0] >= 1  # the collector stays on


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("0", id="young-zero-disables-the-collector"),
        pytest.param("0,10,10", id="young-zero-of-three"),
        pytest.param("-5", id="negative"),
        pytest.param("700,-1", id="negative-older"),
        pytest.param("many", id="word"),
        pytest.param("", id="empty"),
        pytest.param("700,,10", id="hole"),
        pytest.param("1,2,3,4", id="four"),
        pytest.param("1.5", id="fraction"),
    ],
)
def test_gc_threshold_refuses_what_gc_cannot_take_or_would_switch_it_off(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad threshold is a usage error naming the flag, never a collector silently switched off."""
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args([f"--gc-threshold={text}"])
    assert exit_info.value.code == 2
    assert "--gc-threshold" in capsys.readouterr().err


def test_the_run_path_sets_the_gc_thresholds_before_it_connects(tmp_path: Path) -> None:
    """The thresholds apply to the whole run: set before anything else, even a run that then fails
    to find its cluster."""
    before = gc.get_threshold()
    opts = dataclasses.replace(parse(), gc_threshold=(4321, 11, 12), kubeconfig=str(tmp_path / "absent"))
    try:
        assert asyncio.run(run_operator(opts)) == 1
        assert gc.get_threshold() == (4321, 11, 12)
    finally:
        gc.set_threshold(*before)
