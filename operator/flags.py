"""Command-line flags, controller-runtime style, plus the subcommands `version` and `render`."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dynamo_operator.eventloop import EVENT_LOOPS, UVLOOP
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.grove.duration import canonical
from dynamo_operator.internal.optional_api_table import RENDER_APIS, capabilities

DEFAULT_LEADER_ELECTION_ID = "dynamo-operator-leader"
DEFAULT_METRICS_ADDRESS = ":8080"
DEFAULT_SECURE_METRICS_ADDRESS = ":8443"  # kubebuilder's port for the authenticated HTTPS endpoint
# Workers per controller. Measured with test/bench/bench_scale.py on a 2-core host (100 graphs): 8
# workers took 32-41 s, 16 and 32 took 17-27 s alike, 32 with ~25 MB more peak RSS; past ~16 the API
# server, not the operator, is what requests wait for (issue #13). Later, paired against the write
# floor (4 rounds a set, medians): at 100 graphs 12 workers took 1.10 and 1.16 against 16's 1.17 and
# 1.11 in the same sets, 8 took 1.09 against 1.17; at 1,000 12 took 1.21-1.25, 16 1.17-1.25: no
# difference beyond the noise, 12 with ~10 MB less peak RSS at 100. 32 workers for the DCD controller
# alone (--group-kind-concurrency) was slower at 100 (1.15 against 1.06); once reconciles stopped
# regenerating unchanged children, one 2-round set: 1.05 and 0.80 against 16's 1.00 and 0.95, its
# Deployments created no earlier beyond the noise.
DEFAULT_WORKERS = 16
# Requests (not watches) in flight at once; past it they go out by priority (internal/client/gate.py).
# Off by default: measured at 1,000 graphs (issue #13) a bound of 32 took 245.7 s against 210.3 s
# without; 48 (with 32 workers) 207.8 s, no faster, but 20 MB less peak memory.
DEFAULT_MAX_REQUESTS_IN_FLIGHT = 0
# New objects before re-syncs (workqueue first lane). Measured at 300 graphs (16 workers): 71 and 77 s
# without, 63 and 64 s with; at 100 graphs no difference beyond the host's noise (issue #13).
DEFAULT_CREATES_FIRST = True
# The cyclic garbage collector's thresholds (gc.set_threshold). With Python's (700, 10, 10) it ran
# hundreds of times a second while watch events were decoded, and each collection of the oldest
# generation walked every cached object: at 1,000 graphs 6.9-8.5 of the operator's 33-39 CPU s were
# collections. Measured with test/bench/bench_scale.py (issue #13), same cluster, this against
# Python's: at 1,000 graphs operator CPU 31.8 vs 33.9 s and 32.8 vs 39.0 s (GC 2.2 vs 7.2 s and 2.5 vs
# 8.5 s), peak RSS +4-6 MB; at 100 graphs (7 paired rounds) CPU within the noise (3.0-3.7 s either
# way) and +4-9 MB (106.9-116.2 MB in all). The cache
# holds trees without cycles (reference counting frees them), so collecting less often costs only
# the few MB of cyclic garbage the young generation then holds. `--gc-threshold=700,10,10` restores
# Python's.
DEFAULT_GC_THRESHOLD: tuple[int, int, int] = (50_000, 20, 10)
# The event loop (eventloop.py). Measured with test/bench/bench_scale.py (issue #13), uvloop against
# the standard loop on the same clusters: peak RSS at 100 graphs 88.6-90.3 MB against 110.3-120.6 MB
# (10 paired rounds), at 1,000 152.6-153.6 against 179.6-182.4 MB (2 clusters); time within the noise
# (100 graphs: median 17.3 s either way; 1,000: whichever ran second on a cluster was 4-6 % slower),
# operator CPU a little lower (100 graphs: median 3.2 against 3.4 s). The memory is the standard
# loop's TLS transport: a 256 KiB read buffer, zero-filled, for every connection, and the operator
# holds ~110 during a rollout (a watch each, plus its requests in flight).
DEFAULT_EVENT_LOOP = UVLOOP
DISCOVERY_BACKENDS = ("kubernetes", "etcd")
# The conversion webhook (issue #36): controller-runtime's port and certificate directory; the Service
# the CRDs' conversion stanza names (config/default's name for it: hack/gen_crds.py); the Secret of
# `self` mode.
DEFAULT_WEBHOOK_ADDRESS = ":9443"
DEFAULT_WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
DEFAULT_WEBHOOK_SERVICE = "dynamo-operator-webhook-service"
DEFAULT_WEBHOOK_SECRET = "dynamo-operator-webhook-cert"
DEFAULT_WEBHOOK_CERT_LIFETIME = 365 * 24 * 3600.0
WEBHOOK_CERT_MODES = ("self", "external")
DEFAULT_DISCOVERY_BACKEND = "kubernetes"
"""Workers per controller. controller-runtime defaults to 1, but here a worker is a coroutine and a
reconcile mostly waits on the API server: one worker would serialise all that waiting (at 1,000
graphs a DCD apply takes 0.3 s under load, so 3,000 components would need 15 minutes)."""
_SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def default_leader_election_namespace(
    environ: dict[str, str] | None = None, namespace_file: Path = _SERVICE_ACCOUNT_NAMESPACE
) -> str:
    """POD_NAMESPACE, else the in-cluster service account's namespace, else "default"."""
    env = os.environ if environ is None else environ
    if env.get("POD_NAMESPACE"):
        return env["POD_NAMESPACE"]
    try:
        return namespace_file.read_text().strip() or "default"
    except OSError:
        return "default"


# The release of upstream's operator whose output this operator generates (make compat, the 2a6da14c
# set). New graphs are stamped with it: the origin version keys upstream's behaviour gates (vLLM
# multinode's executor, the worker-hash era), so it must be a version of upstream's line. The
# package's own version (0.x) would make every new vLLM multinode graph take Ray, the pre-1.0 default.
UPSTREAM_RELEASE = "1.5.0"


def default_operator_version() -> str:
    """The origin version new graphs are stamped with by default: `UPSTREAM_RELEASE`."""
    return UPSTREAM_RELEASE


@dataclass(frozen=True, slots=True)
class OperatorOptions:
    """Everything the flags decide for the `run` path (the default command)."""

    # Secure by default (issue #34), as upstream's operator now is: HTTPS on :8443 for authorized
    # scrapers only; `make run` asks for plain HTTP on loopback (hack/run-local.sh).
    metrics_bind_address: str = ":8443"
    metrics_secure: bool = True
    metrics_cert_path: str = ""
    health_probe_bind_address: str = ":8081"
    leader_elect: bool = False
    leader_election_id: str = DEFAULT_LEADER_ELECTION_ID
    leader_election_namespace: str = "default"
    leader_election_lease_duration: float = 15.0
    leader_election_renew_deadline: float = 10.0
    leader_election_retry_period: float = 2.0
    graceful_shutdown_timeout: float = 30.0
    namespace: str | None = None
    max_concurrent_reconciles: int = DEFAULT_WORKERS
    group_kind_concurrency: Mapping[str, int] = field(default_factory=dict)
    max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT
    creates_first: bool = DEFAULT_CREATES_FIRST
    gc_threshold: tuple[int, int, int] = DEFAULT_GC_THRESHOLD
    event_loop: str = DEFAULT_EVENT_LOOP
    log_level: str = "info"
    log_format: str = "json"
    kubeconfig: str | None = None
    # Dynamo's own operator settings (upstream flag names), consumed by the controllers' wiring.
    istio_virtual_service_gateway: str = ""
    virtual_service_supports_https: bool = False
    ingress_controller_class_name: str = ""
    ingress_controller_tls_secret_name: str = ""
    ingress_host_suffix: str = ""
    prometheus_endpoint: str = ""
    model_express_url: str = ""
    planner_cluster_role_name: str = ""
    dgdr_profiling_cluster_role_name: str = ""
    epp_cluster_role_name: str = ""
    mpi_run_ssh_secret_name: str = ""
    mpi_run_ssh_secret_namespace: str = ""
    operator_version: str = field(default_factory=default_operator_version)
    # Issue #17 / #11: infrastructure addresses injected into every component's env.
    nats_address: str = ""
    etcd_address: str = ""
    discovery_backend: str = DEFAULT_DISCOVERY_BACKEND
    # Issue #11 item 3: whether graphs may take the Grove pathway (see `--enable-grove`).
    enable_grove: str = "false"
    # Issue #39: Grove's pods scheduled by Volcano (see `--volcano-scheduler`).
    volcano_scheduler: bool = False
    # Issue #39: a PodCliqueSet's terminationDelay, in Go's form (see `--grove-termination-delay`).
    grove_termination_delay: str = consts.DEFAULT_GROVE_TERMINATION_DELAY
    # How long a deleted LoRA model keeps its finalizer while unloads fail (controllers/dynamomodel.py).
    lora_unload_grace: float = 60.0
    # Issue #36: the conversion webhook (operator/webhook_setup.py).
    webhook_bind_address: str = DEFAULT_WEBHOOK_ADDRESS
    webhook_cert_mode: str = "self"
    webhook_cert_dir: str = DEFAULT_WEBHOOK_CERT_DIR
    webhook_service_name: str = DEFAULT_WEBHOOK_SERVICE
    webhook_secret_name: str = DEFAULT_WEBHOOK_SECRET
    webhook_cert_lifetime: float = DEFAULT_WEBHOOK_CERT_LIFETIME


GROVE_MODES = ("true", "auto", "false")


def _grove_duration(text: str) -> str:
    try:
        return canonical(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _gc_threshold(text: str) -> tuple[int, int, int]:
    """`G0[,G1[,G2]]` as `gc.set_threshold` takes them; unnamed generations keep Python's 10. A young
    threshold of 0 would switch the collector off, and reference cycles would then never be freed."""
    parts = [p.strip() for p in text.split(",")]
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() for p in parts):
        raise argparse.ArgumentTypeError(f"expected G0[,G1[,G2]] of non-negative integers, got {text!r}")
    values = [int(p) for p in parts] + [10] * (3 - len(parts))
    if values[0] < 1:
        raise argparse.ArgumentTypeError(
            "the young generation's threshold must be >= 1 (0 disables collection)"
        )
    return values[0], values[1], values[2]


def _kind_workers(text: str) -> tuple[str, int]:
    """`Kind.group=N` (`Kind=N` for the core API) → ("Kind.group", N)."""
    kind, sep, count = text.partition("=")
    if not sep or not kind.strip() or not kind.strip()[:1].isupper():
        raise argparse.ArgumentTypeError(f"expected KIND.GROUP=N (e.g. Deployment.apps=4), got {text!r}")
    return kind.strip(), _positive_int(count.strip())


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _seconds(text: str) -> float:
    """Accepts `15`, `15s`, `1.5s`, `2m` (Go duration-ish, the subset operators use)."""
    units = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
    for suffix in ("ms", "s", "m", "h"):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * units[suffix]
    return float(text)


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected a boolean, got {text!r}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dynamo-operator",
        description="Kubernetes operator for NVIDIA Dynamo inference graphs. "
        "Without a subcommand it runs the operator against the cluster in --kubeconfig / KUBECONFIG "
        "(or in-cluster).",
    )
    run = parser.add_argument_group("manager")
    run.add_argument(
        "--metrics-bind-address",
        default=None,
        help='address of the /metrics endpoint; "0" disables it (default '
        f"{DEFAULT_SECURE_METRICS_ADDRESS}, or {DEFAULT_METRICS_ADDRESS} with --metrics-secure=false)",
    )
    run.add_argument(
        "--metrics-secure",
        nargs="?",
        const=True,
        default=True,
        type=_bool,
        help="serve /metrics over HTTPS, only to callers whose bearer token the API server accepts "
        "(TokenReview) and who may get the non-resource URL /metrics (SubjectAccessReview); "
        "=false serves plain HTTP without authentication, as `make run` does on loopback "
        "(default %(default)s)",
    )
    run.add_argument(
        "--metrics-cert-path",
        default="",
        help="with --metrics-secure: directory with tls.crt and tls.key (e.g. a mounted cert-manager "
        "Secret), reloaded when they change; without it a self-signed certificate is generated at start-up",
    )
    run.add_argument(
        "--health-probe-bind-address",
        default=":8081",
        help="address of /healthz and /readyz (default %(default)s)",
    )
    run.add_argument(
        "--leader-elect",
        nargs="?",
        const=True,
        default=False,
        type=_bool,
        help="elect a leader through a coordination.k8s.io Lease; only the leader reconciles",
    )
    run.add_argument(
        "--leader-election-id",
        default=DEFAULT_LEADER_ELECTION_ID,
        help="name of the Lease (default %(default)s)",
    )
    run.add_argument(
        "--leader-election-namespace",
        default=None,
        help="namespace of the Lease (default: POD_NAMESPACE, the in-cluster namespace, or default)",
    )
    run.add_argument(
        "--leader-election-lease-duration",
        type=_seconds,
        default=15.0,
        help="how long a Lease holds without renewal before a standby may take it (default 15s)",
    )
    run.add_argument(
        "--leader-election-renew-deadline",
        type=_seconds,
        default=10.0,
        help="the leader gives up (and exits) when it could not renew for this long (default 10s)",
    )
    run.add_argument(
        "--leader-election-retry-period",
        type=_seconds,
        default=2.0,
        help="interval between tries to acquire or renew the Lease (default 2s)",
    )
    run.add_argument(
        "--graceful-shutdown-timeout",
        type=_seconds,
        default=30.0,
        help="bound on finishing in-flight reconciles at stop (default %(default)ss)",
    )
    run.add_argument(
        "--namespace",
        "--restrictedNamespace",
        dest="namespace",
        default=None,
        help="restricted mode: watch and manage only this namespace",
    )
    run.add_argument(
        "--max-concurrent-reconciles",
        type=_positive_int,
        default=DEFAULT_WORKERS,
        help="workers per controller (default %(default)s)",
    )
    run.add_argument(
        "--group-kind-concurrency",
        type=_kind_workers,
        action="append",
        default=[],
        metavar="KIND.GROUP=N",
        help="workers of the controller for one kind, over --max-concurrent-reconciles "
        "(repeatable), e.g. DynamoComponentDeployment.nvidia.com=24",
    )
    run.add_argument(
        "--max-requests-in-flight",
        type=_non_negative_int,
        default=DEFAULT_MAX_REQUESTS_IN_FLIGHT,
        help="API requests in flight at once (watches aside); the rest wait, status writes and "
        "workloads first, Events last; 0: no bound (default %(default)s)",
    )
    run.add_argument(
        "--creates-first",
        action=argparse.BooleanOptionalAction,
        default=DEFAULT_CREATES_FIRST,
        help="hand newly created (or, at start-up, listed) objects to workers before re-syncs of "
        "objects already reconciled (default %(default)s)",
    )
    run.add_argument(
        "--gc-threshold",
        type=_gc_threshold,
        default=DEFAULT_GC_THRESHOLD,
        metavar="G0[,G1[,G2]]",
        help="the cyclic garbage collector's thresholds, as Python's gc.set_threshold takes them "
        f"(default {','.join(map(str, DEFAULT_GC_THRESHOLD))})",
    )
    run.add_argument(
        "--event-loop",
        choices=EVENT_LOOPS,
        default=DEFAULT_EVENT_LOOP,
        help="the asyncio event loop implementation (default %(default)s)",
    )
    run.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error", "critical"],
        help="lowest level logged (default %(default)s)",
    )
    run.add_argument(
        "--log-format",
        default="json",
        choices=["json", "console"],
        help="json: one object per line, for log collectors; console: readable lines (make run) "
        "(default %(default)s)",
    )
    run.add_argument(
        "--kubeconfig", default=None, help="path to a kubeconfig (default: KUBECONFIG or in-cluster)"
    )
    hook = parser.add_argument_group(
        "conversion webhook", "served by every replica (docs/operating/conversion-webhook.md)"
    )
    hook.add_argument(
        "--webhook-bind-address",
        default=DEFAULT_WEBHOOK_ADDRESS,
        help='address of the HTTPS conversion webhook (/convert); "0" disables it (default %(default)s)',
    )
    hook.add_argument(
        "--webhook-cert-mode",
        default="self",
        choices=WEBHOOK_CERT_MODES,
        help="self: the operator keeps its own CA and certificate in a Secret of its namespace and puts "
        "the CA into its CRDs; external: serve tls.crt/tls.key of --webhook-cert-dir (cert-manager), "
        "reloaded when they change (default %(default)s)",
    )
    hook.add_argument(
        "--webhook-cert-dir",
        default=DEFAULT_WEBHOOK_CERT_DIR,
        help="with --webhook-cert-mode=external: directory with tls.crt and tls.key (default %(default)s)",
    )
    hook.add_argument(
        "--webhook-service-name",
        default=DEFAULT_WEBHOOK_SERVICE,
        help="the Service the CRDs' conversion config names; the certificate is issued for "
        "<name>.<namespace>.svc (default %(default)s)",
    )
    hook.add_argument(
        "--webhook-secret-name",
        default=DEFAULT_WEBHOOK_SECRET,
        help="with --webhook-cert-mode=self: the Secret holding the CA bundle and serving pair "
        "(default %(default)s)",
    )
    hook.add_argument(
        "--webhook-cert-lifetime",
        type=_seconds,
        default=DEFAULT_WEBHOOK_CERT_LIFETIME,
        help="with --webhook-cert-mode=self: validity of each CA and certificate in seconds; rotation "
        "starts at two thirds of it (default one year)",
    )

    dynamo = parser.add_argument_group("dynamo", "settings of upstream Dynamo's operator, same names")
    for flag, text in (
        (
            "--istio-virtual-service-gateway",
            "Istio Gateway (namespace/name) for the VirtualService of an exposed frontend; "
            "set, VirtualServices are generated instead of Ingresses",
        ),
        ("--ingress-controller-class-name", "ingressClassName of generated Ingresses"),
        ("--ingress-controller-tls-secret-name", "TLS Secret of generated Ingresses"),
        (
            "--ingress-host-suffix",
            "host suffix of generated Ingresses and VirtualServices (<graph>.<suffix>)",
        ),
        ("--prometheus-endpoint", "given to every component as PROMETHEUS_ENDPOINT"),
        ("--model-express-url", "given to every component as MODEL_EXPRESS_URL"),
        (
            "--planner-cluster-role-name",
            "ClusterRole bound to each graph's planner ServiceAccount (the operator needs `bind` on it)",
        ),
        (
            "--dgdr-profiling-cluster-role-name",
            "ClusterRole bound to the profiling Job of each DynamoGraphDeploymentRequest "
            "(cluster-wide mode; the operator needs `bind` on it)",
        ),
        (
            "--epp-cluster-role-name",
            "ClusterRole bound to the epp-serviceaccount of each namespace with an endpoint picker (EPP) "
            "service (the operator needs `bind` on it); unset, the ServiceAccount is created unbound",
        ),
        (
            "--mpi-run-ssh-secret-name",
            "SSH key Secret of multinode workers (mpirun), created once per namespace and never "
            "rotated (default mpi-run-ssh-secret)",
        ),
        (
            "--mpi-run-ssh-secret-namespace",
            "namespace holding the one key pair copied into every namespace that needs it (made there "
            "first when absent); unset, each namespace gets a key pair of its own",
        ),
    ):
        dynamo.add_argument(flag, default="", help=text)
    dynamo.add_argument(
        "--lora-unload-grace",
        type=_seconds,
        default=60.0,
        metavar="DURATION",
        help="a deleted LoRA DynamoModel keeps its finalizer this long while unloading fails on some "
        "endpoint, retrying every 10 s, then goes with a LoRAUnloadFailed Warning (e.g. 60s, 2m; "
        "default %(default)ss)",
    )
    dynamo.add_argument(
        "--virtual-service-supports-https",
        nargs="?",
        const=True,
        default=False,
        type=_bool,
        help="the gateway terminates HTTPS; accepted for upstream compatibility, no effect yet",
    )
    # -- graph generation settings of issue #17 (kept together) --
    dynamo.add_argument(
        "--operator-version",
        default=default_operator_version(),
        help="stamped on new graphs as nvidia.com/dynamo-operator-origin-version, a version of "
        "upstream's operator whose behaviour gates it keys: vLLM multinode workers of graphs stamped "
        ">= 1.0.0 default to multiprocessing, others to Ray (default: the upstream release this "
        "operator generates as, %(default)s)",
    )
    dynamo.add_argument(
        "--nats-address",
        "--natsAddr",
        dest="nats_address",
        default="",
        help="NATS address given to every component as NATS_SERVER (a component's own env wins)",
    )
    dynamo.add_argument(
        "--etcd-address",
        "--etcdAddr",
        dest="etcd_address",
        default="",
        help="etcd address given to every component as ETCD_ENDPOINTS (a component's own env wins)",
    )
    dynamo.add_argument(
        "--enable-grove",
        dest="enable_grove",
        choices=GROVE_MODES,
        nargs="?",
        const="true",
        default="false",
        help="run graphs as Grove PodCliqueSets (upstream's orchestrators.grove.enabled): true = use "
        "Grove and refuse to start without its API, auto = use it whenever its API is served, false "
        "= never; a graph annotated nvidia.com/enable-grove=false stays on DynamoComponentDeployments "
        "(default %(default)s)",
    )
    dynamo.add_argument(
        "--volcano-scheduler",
        dest="volcano_scheduler",
        nargs="?",
        const=True,
        default=False,
        type=_bool,
        help="schedule the pods of Grove graphs with Volcano (upstream's orchestrators.volcanoScheduler."
        "enabled): schedulerName volcano on every clique a user left unset, a graph's "
        "nvidia.com/volcano-queue annotation as the set's Volcano queue; while Volcano's API is served, "
        "and not together with KAI-Scheduler (default %(default)s)",
    )
    dynamo.add_argument(
        "--grove-termination-delay",
        dest="grove_termination_delay",
        type=_grove_duration,
        default=consts.DEFAULT_GROVE_TERMINATION_DELAY,
        help="how long Grove waits, once a PodCliqueSet's gang has fewer pods than its minAvailable, "
        "before it terminates the gang (upstream's orchestrators.grove.terminationDelay; its platform "
        "chart sets 4h): a duration like 4h, 15m or 1h30m, 0 for Grove's own default "
        "(default %(default)s)",
    )
    dynamo.add_argument(
        "--discovery-backend",
        default=DEFAULT_DISCOVERY_BACKEND,
        choices=DISCOVERY_BACKENDS,
        help="how components find each other, given to every component as DYN_DISCOVERY_BACKEND: "
        "kubernetes (Services, EndpointSlices) or etcd (needs --etcd-address); a graph's or "
        "component's nvidia.com/dynamo-discovery-backend annotation wins (default %(default)s)",
    )
    parser.add_argument(
        "--version",
        action="store_true",
        help="print the version (and the git commit it was built from, when known) and exit",
    )

    sub = parser.add_subparsers(dest="command", metavar="{version,render,completion}")
    sub.add_parser("version", help="print the operator version and exit")
    render = sub.add_parser("render", help="print the objects a DynamoGraphDeployment would create (offline)")
    render.add_argument("-f", "--filename", required=True, help='YAML file with the DGD(s); "-" reads stdin')
    render.add_argument(
        "--namespace",
        "-n",
        dest="render_namespace",
        default="default",
        help="namespace for objects without one (default %(default)s)",
    )
    render.add_argument(
        "--secrets",
        dest="render_secrets",
        metavar="FILE",
        help="YAML file of kubernetes.io/dockerconfigjson Secrets: image pull secrets are discovered from"
        " them as the operator discovers them in the cluster",
    )
    for api in RENDER_APIS:
        assert api.render is not None
        render.add_argument(api.render.flag, dest=api.render_dest, action="store_true", help=api.render.help)
    completion = sub.add_parser(
        "completion",
        help="print a shell completion script: source <(dynamo-operator completion bash)",
    )
    completion.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")
    return parser


def render_capabilities(args: argparse.Namespace) -> Capabilities:
    """The optional APIs `render` assumes served: those whose `--with-...` flag is given."""
    return capabilities(api for api in RENDER_APIS if getattr(args, api.render_dest))


def options_from_args(args: argparse.Namespace, environ: dict[str, str] | None = None) -> OperatorOptions:
    metrics_address = args.metrics_bind_address
    if metrics_address is None:
        metrics_address = DEFAULT_SECURE_METRICS_ADDRESS if args.metrics_secure else DEFAULT_METRICS_ADDRESS
    return OperatorOptions(
        metrics_bind_address=metrics_address,
        metrics_secure=args.metrics_secure,
        metrics_cert_path=args.metrics_cert_path,
        health_probe_bind_address=args.health_probe_bind_address,
        leader_elect=args.leader_elect,
        leader_election_id=args.leader_election_id,
        leader_election_namespace=args.leader_election_namespace
        or default_leader_election_namespace(environ),
        leader_election_lease_duration=args.leader_election_lease_duration,
        leader_election_renew_deadline=args.leader_election_renew_deadline,
        leader_election_retry_period=args.leader_election_retry_period,
        graceful_shutdown_timeout=args.graceful_shutdown_timeout,
        namespace=args.namespace or None,
        max_concurrent_reconciles=args.max_concurrent_reconciles,
        group_kind_concurrency=dict(args.group_kind_concurrency),
        max_requests_in_flight=args.max_requests_in_flight,
        creates_first=args.creates_first,
        gc_threshold=args.gc_threshold,
        event_loop=args.event_loop,
        log_level=args.log_level,
        log_format=args.log_format,
        kubeconfig=args.kubeconfig,
        istio_virtual_service_gateway=args.istio_virtual_service_gateway,
        virtual_service_supports_https=args.virtual_service_supports_https,
        ingress_controller_class_name=args.ingress_controller_class_name,
        ingress_controller_tls_secret_name=args.ingress_controller_tls_secret_name,
        ingress_host_suffix=args.ingress_host_suffix,
        prometheus_endpoint=args.prometheus_endpoint,
        model_express_url=args.model_express_url,
        planner_cluster_role_name=args.planner_cluster_role_name,
        dgdr_profiling_cluster_role_name=args.dgdr_profiling_cluster_role_name,
        epp_cluster_role_name=args.epp_cluster_role_name,
        mpi_run_ssh_secret_name=args.mpi_run_ssh_secret_name,
        mpi_run_ssh_secret_namespace=args.mpi_run_ssh_secret_namespace,
        lora_unload_grace=args.lora_unload_grace,
        operator_version=args.operator_version,
        nats_address=args.nats_address,
        etcd_address=args.etcd_address,
        enable_grove=args.enable_grove,
        grove_termination_delay=args.grove_termination_delay,
        volcano_scheduler=args.volcano_scheduler,
        discovery_backend=args.discovery_backend,
        webhook_bind_address=args.webhook_bind_address,
        webhook_cert_mode=args.webhook_cert_mode,
        webhook_cert_dir=args.webhook_cert_dir,
        webhook_service_name=args.webhook_service_name,
        webhook_secret_name=args.webhook_secret_name,
        webhook_cert_lifetime=args.webhook_cert_lifetime,
    )
