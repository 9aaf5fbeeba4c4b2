#!/usr/bin/env python3
"""A real Kubernetes control plane on loopback, for tests and `make run`; standard library only.

etcd -> kube-apiserver -> (CRDs) -> kube-controller-manager + kube-scheduler -> kwok (fake kubelets
for N fake Nodes), all bound to 127.0.0.1 on ports chosen at run time, each logging to a file in the
state dir. Binaries come from hack/build-cluster-bins.sh. Simulated pod IPs come from each Node's
spec.podCIDR, which lies in 127.0.0.0/8, so whatever the operator dials on a pod IP stays on loopback.

Pods never finish on their own: annotate a Running pod `kwok.dynamo.test/phase: Succeeded` or
`Failed` (with `kwok.dynamo.test/message`) to finish it (hack/kwok/pod-phase-by-annotation.yaml), or
`kwok.dynamo.test/ready: "false"` to make it not Ready for good (hack/kwok/pod-not-ready-by-annotation.yaml).

Opt-in add-ons (hack/cluster_addons.py): `addons=("lws", "grove")` / `--addons lws,grove` also runs the
real LeaderWorkerSet controller with its CRD and webhooks on loopback, and installs Grove's CRDs; Grove's
operator runs too (with its webhooks) when GROVE_OPERATOR names a binary of it.

CLI: localcluster.py up|down|status|kubeconfig|reap [--name NAME] [--state-dir DIR] [--nodes N]
[--addons lws,grove] [--crds PATH ...]. CRDs (`crds=` / `--crds`, and the add-ons') are installed
before the controller-manager starts: its garbage collector learns kinds installed later only within
30 s, and until then leaves the dependents of their objects in place.
`up` prints the admin kubeconfig path on stdout (progress on stderr); `down` stops exactly the
recorded pids and removes the state dir. Both are idempotent. `reap` stops the clusters of test
sessions that died before their teardown. Only the stdlib is imported, so the
system python3 can run `down` without the project venv.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

HACK_DIR = Path(__file__).resolve().parent
# Run as a script under PYTHONSAFEPATH (the Makefile sets it) its own directory is not on sys.path.
if str(HACK_DIR) not in sys.path:
    sys.path.append(str(HACK_DIR))

import cluster_addons  # noqa: E402
from cluster_addons import ADDONS, AddonMissingError  # noqa: E402

ETCD = "etcd"
APISERVER = "kube-apiserver"
CONTROLLER_MANAGER = "kube-controller-manager"
SCHEDULER = "kube-scheduler"
KWOK = "kwok"
# Start order; stopping goes the other way round.
COMPONENTS = (ETCD, APISERVER, CONTROLLER_MANAGER, SCHEDULER, KWOK)
ALIASES = {
    "apiserver": APISERVER,
    "kcm": CONTROLLER_MANAGER,
    "controller-manager": CONTROLLER_MANAGER,
    "scheduler": SCHEDULER,
}

STATE_DIR_ENV = "DYNAMO_CLUSTER_STATE_DIR"
BIN_DIR_ENV = "DYNAMO_CLUSTER_BIN_DIR"
DEFAULT_NODES = 4
NODE_NAME_PREFIX = "kwok-node-"
# Pods of node i get IPs from 127.(65+i).0.0/16 (65k addresses, far above the 1000-pod capacity);
# a Node created without spec.podCIDR falls back to kwok's --cidr. All of it is loopback.
KWOK_FALLBACK_CIDR = "127.64.0.0/16"
NODE_CAPACITY = {
    "cpu": "256",
    "memory": "2Ti",
    "pods": "1000",
    "nvidia.com/gpu": "64",
    "ephemeral-storage": "10Ti",
}
SERVICE_CIDR = "10.96.0.0/16"  # never dialled: nothing implements Services here
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
# kwok's own stages (read from its module at run time) minus pod-complete, which is replaced by ours.
KWOK_STAGES = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)
OWN_STAGES = (
    HACK_DIR / "kwok" / "pod-phase-by-annotation.yaml",
    HACK_DIR / "kwok" / "pod-not-ready-by-annotation.yaml",
)

STOP_GRACE_SECONDS = 10.0  # SIGTERM first; SIGKILL whatever is still there after this
POLL_SECONDS = 0.2


class ClusterError(RuntimeError):
    """The local control plane could not be started, reached or changed."""


class BinariesMissingError(ClusterError):
    """The control-plane binaries are not built; `make cluster-bins` builds them."""


class AddonNotBuiltError(BinariesMissingError):
    """An add-on was asked for but is not built (the message says how to build it)."""


def log(message: str) -> None:
    """Progress goes to stderr so stdout carries only the kubeconfig path."""
    print(f"localcluster: {message}", file=sys.stderr, flush=True)


def default_state_dir(name: str) -> Path:
    """`${TMPDIR:-/tmp}/dynamo-operator-cluster/<name>`."""
    return Path(tempfile.gettempdir()) / "dynamo-operator-cluster" / name


def find_bin_dir() -> Path:
    """The version-keyed binary directory, as computed by hack/cluster-versions.sh."""
    if override := os.environ.get(BIN_DIR_ENV):
        return Path(override)
    out = subprocess.run(
        ["bash", "-c", '. "$1" && printf %s "$CLUSTER_BIN_DIR"', "_", str(HACK_DIR / "cluster-versions.sh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return Path(out.stdout)


def free_ports(count: int) -> list[int]:
    """Distinct free loopback ports: all sockets stay open until every port is chosen."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# --- processes -----------------------------------------------------------------------------------


def _proc_state(pid: int) -> str | None:
    """The one-letter state from /proc/<pid>/stat, None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def process_alive(pid: int, exe: str | None = None) -> bool:
    """True if pid runs (zombies count as gone) and, when exe is given, runs that binary.

    Checking argv[0] keeps `down` from signalling an unrelated process that reused a recorded pid.
    """
    state = _proc_state(pid)
    if state is None or state in ("Z", "X"):
        return False
    if exe is None:
        return True
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode()
    except OSError:
        return False
    return argv0 == exe


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def terminate(
    targets: Mapping[int, str],
    procs: Iterable[subprocess.Popen[bytes]] = (),
    *,
    grace: float = STOP_GRACE_SECONDS,
) -> None:
    """Stop exactly these pids (pid -> binary path): SIGTERM, then SIGKILL after `grace` seconds.

    `procs` are the Popen handles of any of them that are our own children, so they get reaped.
    """
    by_pid = {p.pid: p for p in procs}

    def gone(pid: int) -> bool:
        # Our own children are judged by waitpid (which also reaps them): /proc reads can fail
        # transiently while a process is exiting.
        if (proc := by_pid.get(pid)) is not None:
            return proc.poll() is not None
        return not process_alive(pid, live[pid])

    live = {pid: exe for pid, exe in targets.items() if process_alive(pid, exe)}
    for pid in live:
        _signal(pid, signal.SIGTERM if grace > 0 else signal.SIGKILL)
    for sig, wait in ((signal.SIGKILL, grace), (None, 5.0)):
        deadline = time.monotonic() + wait
        while live and time.monotonic() < deadline:
            for pid in list(live):
                if gone(pid):
                    del live[pid]
            if live:
                time.sleep(0.05)
        if not live or sig is None:
            break
        for pid in live:
            _signal(pid, sig)
    if live:
        raise ClusterError(f"processes survived SIGKILL: {sorted(live)}")


# --- HTTP ----------------------------------------------------------------------------------------


def http(
    url: str,
    *,
    method: str = "GET",
    body: Any = None,
    context: ssl.SSLContext | None = None,
    timeout: float = 5.0,
) -> tuple[int, bytes]:
    """One request; returns (status, body) for any HTTP status, raises OSError when unreachable."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _healthy(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        status, _ = http(url, context=context, timeout=2.0)
    except OSError:
        return False
    return status == 200


def _insecure_context() -> ssl.SSLContext:
    # Only for the kcm/scheduler health endpoints, which serve self-signed certificates.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


# --- certificates and kubeconfigs ----------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_pki(pki: Path) -> None:
    """CA, apiserver serving cert, admin client cert (system:masters), SA signing key; EC P-256."""
    pki.mkdir(parents=True, exist_ok=True)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
        "-subj", "/CN=dynamo-local-ca",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        cwd=pki,
    )  # fmt: skip
    sans = (
        "DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,"
        "DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.96.0.1"
    )
    leaves = {
        "apiserver": ("/CN=kube-apiserver", f"extendedKeyUsage=serverAuth\nsubjectAltName={sans}\n"),
        "admin": ("/O=system:masters/CN=dynamo-local-admin", "extendedKeyUsage=clientAuth\n"),
    }
    for name, (subject, ext) in leaves.items():
        (pki / f"{name}.ext").write_text(
            f"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n{ext}"
        )
        _openssl(
            "req", "-new", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=pki
        )
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "3650", "-extfile", f"{name}.ext", "-out", f"{name}.crt",
            cwd=pki,
        )  # fmt: skip
    _openssl(
        "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "sa.key", cwd=pki
    )
    _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)


def make_serving_cert(pki: Path, dest: Path) -> None:
    """`dest/tls.crt` + `tls.key` for a webhook server on 127.0.0.1, signed by the cluster's CA (the
    file names controller-runtime's webhook server reads)."""
    dest.mkdir(parents=True, exist_ok=True)
    (pki / "webhook.ext").write_text(
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n"
    )
    _openssl(
        "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(dest / "tls.key"), "-out", "webhook.csr", "-subj", "/CN=127.0.0.1", cwd=pki,
    )  # fmt: skip
    _openssl(
        "x509", "-req", "-in", "webhook.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "3650", "-extfile", "webhook.ext", "-out", str(dest / "tls.crt"),
        cwd=pki,
    )  # fmt: skip


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def kubeconfig_text(*, name: str, server: str, ca: Path, user: Mapping[str, str]) -> str:
    """A one-context kubeconfig (YAML) with the CA and credentials embedded."""
    user_lines = "".join(f"    {k}: {v}\n" for k, v in user.items())
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {name}\n  cluster:\n    server: {server}\n"
        f"    certificate-authority-data: {_b64(ca)}\n"
        f"users:\n- name: {name}\n  user:\n{user_lines}"
        f"contexts:\n- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n"
        f"current-context: {name}\n"
    )


def node_manifest(index: int) -> dict[str, Any]:
    """Fake Node `kwok-node-<index>` with a loopback pod CIDR and room for big test workloads."""
    name = f"{NODE_NAME_PREFIX}{index}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "type": "kwok",
            },
        },
        "spec": {"podCIDR": f"127.{65 + index}.0.0/16", "podCIDRs": [f"127.{65 + index}.0.0/16"]},
        "status": {"capacity": dict(NODE_CAPACITY), "allocatable": dict(NODE_CAPACITY)},
    }


# --- the cluster ---------------------------------------------------------------------------------


class LocalCluster:
    """One control plane, described by `<state_dir>/state.json`; any process can stop it from there.

    Every method is bounded in time. `up()`/`down()` are idempotent. The fault hooks
    (`stop_component`, `start_component`, `restart_apiserver`, `compact_etcd`) are for tests.
    """

    def __init__(
        self,
        name: str = "default",
        *,
        state_dir: Path | str | None = None,
        bin_dir: Path | str | None = None,
        nodes: int = DEFAULT_NODES,
        owner_pid: int | None = None,
        addons: Sequence[str] = (),
        crds: Sequence[Path | str] = (),
    ) -> None:
        self.name = name
        self.addons = cluster_addons.parse(addons)
        # CRD manifests (files or directories) installed before the controller-manager starts (`up`).
        self.crds = tuple(Path(c) for c in crds)
        self.state_dir = Path(state_dir) if state_dir else default_state_dir(name)
        self._bin_dir = Path(bin_dir) if bin_dir else None
        self.nodes = nodes
        # Set for clusters owned by a test session: once that pid is gone, reap_orphans() may stop it.
        self.owner_pid = owner_pid
        self.usable_after: float | None = None  # seconds from up() to usable, for reports
        self._procs: dict[str, subprocess.Popen[bytes]] = {}  # component -> our child process
        self._admin_ctx: ssl.SSLContext | None = None

    # -- paths and recorded state

    @property
    def kubeconfig(self) -> str:
        """Path of the admin (system:masters) kubeconfig."""
        return str(self.state_dir / "admin.kubeconfig")

    @property
    def server(self) -> str:
        """https://127.0.0.1:<port> of the kube-apiserver."""
        return f"https://127.0.0.1:{self._state()['ports'][APISERVER]}"

    @property
    def _state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def _pki(self) -> Path:
        return self.state_dir / "pki"

    def _state(self) -> dict[str, Any]:
        try:
            state: dict[str, Any] = json.loads(self._state_file.read_text())
        except FileNotFoundError:
            raise ClusterError(f"no cluster state in {self.state_dir} (not up)") from None
        return state

    def _save(self, state: Mapping[str, Any]) -> None:
        # Written atomically: a concurrent `down` must never read half a pid list.
        tmp = self._state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self._state_file)

    def bin_dir(self) -> Path:
        """The directory holding the five binaries and `kwok-module-dir` (BinariesMissingError if not)."""
        if self._bin_dir is None:
            self._bin_dir = find_bin_dir()
        missing = [c for c in COMPONENTS if not os.access(self._bin_dir / c, os.X_OK)]
        if not (self._bin_dir / "kwok-module-dir").is_file():
            missing.append("kwok-module-dir")
        if missing:
            raise BinariesMissingError(
                f"control-plane binaries missing in {self._bin_dir}: {', '.join(missing)}; "
                "run `make cluster-bins` (a cold build takes several minutes)"
            )
        return self._bin_dir

    def pids(self) -> dict[str, int]:
        """Component name -> pid, for the components whose process is running."""
        if not self._state_file.exists():
            return {}
        state = self._state()
        return {
            name: entry["pid"]
            for name, entry in state["components"].items()
            if entry.get("pid") and process_alive(entry["pid"], entry["exe"])
        }

    def is_up(self) -> bool:
        """Every component's recorded process is running (add-ons included)."""
        if not self._state_file.exists():
            return False
        return set(self.pids()) == set(self._state()["components"])

    def components(self) -> tuple[str, ...]:
        """The processes of this cluster in start order: the control plane, then the add-ons'."""
        with contextlib.suppress(ClusterError, ValueError):
            return tuple(self._state()["components"])
        return COMPONENTS + tuple(ADDONS[a].component for a in self.addons)

    def addon_dirs(self) -> dict[str, Path]:
        """Add-on name -> its built directory (AddonNotBuiltError, with how to build, if one is not)."""
        dirs = {}
        for name in self.addons:
            addon = ADDONS[name]
            directory = cluster_addons.addon_dir(addon)
            try:
                cluster_addons.built(addon, directory)
            except AddonMissingError as e:
                raise AddonNotBuiltError(str(e)) from None
            dirs[name] = directory
        return dirs

    # -- lifecycle

    def up(self, *, timeout: float = 240.0) -> str:
        """Start everything and wait until usable; returns the kubeconfig path. No-op when up."""
        if self.is_up():
            return self.kubeconfig
        if self.state_dir.exists():
            log(f"removing stale state in {self.state_dir}")
            self.down()
        started = time.monotonic()
        deadline = started + timeout
        bin_dir = self.bin_dir()
        addon_dirs = self.addon_dirs()
        kwok_module = Path((bin_dir / "kwok-module-dir").read_text().strip())
        stages = [kwok_module / s for s in KWOK_STAGES] + list(OWN_STAGES)
        if missing := [str(s) for s in stages if not s.is_file()]:
            raise BinariesMissingError(f"kwok stage files missing: {missing}; run `make cluster-bins`")
        self.state_dir.mkdir(parents=True)
        (self.state_dir / "logs").mkdir()
        try:
            make_pki(self._pki)
            names = [ETCD, "etcd-peer", APISERVER, CONTROLLER_MANAGER, SCHEDULER, KWOK]
            names += [f"{a}-{role}" for a in self.addons for role in cluster_addons.PORT_ROLES]
            components = {c: {"exe": str(bin_dir / c), "pid": None} for c in COMPONENTS}
            for a, directory in addon_dirs.items():
                exe, _ = cluster_addons.built(ADDONS[a], directory)
                if exe is not None:  # None: the add-on is its CRDs alone
                    components[ADDONS[a].component] = {"exe": str(exe), "pid": None, "addon": a}
            self._save(
                {
                    "name": self.name,
                    "owner_pid": self.owner_pid,
                    "nodes": self.nodes,
                    "bin_dir": str(bin_dir),
                    "stages": [str(s) for s in stages],
                    "ports": dict(zip(names, free_ports(len(names)), strict=True)),
                    "apiserver_extra_args": [],
                    "components": components,
                    "addons": list(self.addons),
                    "addon_dirs": {a: str(d) for a, d in addon_dirs.items()},
                }
            )
            self._write_admin_kubeconfig()
            self.start_component(ETCD, deadline=deadline)
            self.start_component(APISERVER, deadline=deadline)
            self._create_nodes()
            # Every CRD before the controller-manager: its garbage collector maps kinds from the
            # discovery it read at start and re-reads that only every 30 s, so the dependents of an
            # object whose kind was installed after it starts wait up to 30 s to be collected.
            if self.crds:
                self._install_crds(self.crds, what="the CRDs asked for", deadline=deadline)
            for addon in self.addons:
                crd_dir = Path(self._state()["addon_dirs"][addon]) / "crds"
                self._install_crds([crd_dir], what=f"add-on {addon}'s CRDs", deadline=deadline)
            for name in (CONTROLLER_MANAGER, SCHEDULER, KWOK):
                self.start_component(name, wait=False)
            self.wait_usable(deadline=deadline)
            for addon in self.addons:
                if self.addon_has_process(addon):
                    self._start_addon(addon, deadline=deadline)
        except BaseException as e:
            tails = self.log_tails()
            with contextlib.suppress(Exception):
                self.down()
            if isinstance(e, Exception):
                raise ClusterError(f"cluster {self.name} failed to come up: {e}\n{tails}") from e
            raise
        self.usable_after = time.monotonic() - started
        log(f"cluster {self.name!r} usable after {self.usable_after:.1f} s; kubeconfig {self.kubeconfig}")
        return self.kubeconfig

    def down(self) -> None:
        """Stop exactly the recorded pids and remove the state dir. No-op when already down."""
        if self._state_file.exists():
            try:
                components = self._state()["components"]
            except (ClusterError, ValueError):
                components = {}
            targets = {e["pid"]: e["exe"] for e in components.values() if e.get("pid")}
            terminate(targets, self._procs.values())
        self._procs.clear()
        self._admin_ctx = None  # the next up() makes new certificates
        shutil.rmtree(self.state_dir, ignore_errors=True)

    def wait_usable(self, *, deadline: float) -> None:
        """Until /readyz is ok, `default/default` ServiceAccount exists, every fake Node is Ready and
        schedulable, and kcm, scheduler and kwok answer their health checks."""
        state = self._state()
        ports = state["ports"]
        checks: dict[str, Callable[[], bool]] = {
            "apiserver /readyz": lambda: self._api_ok("/readyz"),
            "ServiceAccount default/default": lambda: self._api_ok(
                "/api/v1/namespaces/default/serviceaccounts/default"
            ),
            f"{state['nodes']} fake Nodes Ready": lambda: self._ready_nodes() >= state["nodes"],
            "kcm /healthz": lambda: _healthy(
                f"https://127.0.0.1:{ports[CONTROLLER_MANAGER]}/healthz", _insecure_context()
            ),
            "scheduler /healthz": lambda: _healthy(
                f"https://127.0.0.1:{ports[SCHEDULER]}/healthz", _insecure_context()
            ),
            "kwok /healthz": lambda: _healthy(f"http://127.0.0.1:{ports[KWOK]}/healthz"),
        }
        pending = dict(checks)
        while True:
            self._raise_if_exited()
            for what, check in list(pending.items()):
                if check():
                    del pending[what]
            if not pending:
                return
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for: {', '.join(pending)}")
            time.sleep(POLL_SECONDS)

    # -- add-ons

    def _addon_ports(self, addon: str, state: Mapping[str, Any]) -> dict[str, int]:
        return {role: state["ports"][f"{addon}-{role}"] for role in cluster_addons.PORT_ROLES}

    def _addon_work_dir(self, addon: str) -> Path:
        return self.state_dir / "addons" / addon

    def _install_crds(self, paths: Sequence[Path], *, what: str, deadline: float) -> None:
        """Server-side apply the CRD manifests in `paths` (files or directories) and wait until each
        is Established."""
        # kubectl parses the YAML (this module stays stdlib-only); server-side, as the LWS CRD is too
        # big for the last-applied annotation of a client-side apply.
        files = [arg for path in paths for arg in ("-f", str(path))]
        done = subprocess.run(
            ["kubectl", f"--kubeconfig={self.kubeconfig}", "apply", "--server-side", "--force-conflicts",
             "--field-manager=dynamo-localcluster", "-o", "name", *files],
            capture_output=True, text=True, timeout=90, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ClusterError(f"installing {what} failed: {done.stderr.strip()}")
        for crd in done.stdout.split():
            path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.rsplit('/', 1)[1]}"
            while not self._established(path):
                if time.monotonic() > deadline:
                    raise ClusterError(f"{crd} ({what}) not Established in time")
                time.sleep(POLL_SECONDS)

    def _start_addon(self, name: str, *, deadline: float) -> None:
        """Serving certificate, config, process (healthy), then its webhooks (its CRDs are in since
        before the controller-manager started, see `up`): in that order, so no request is sent to a
        webhook whose server is not up yet."""
        addon = ADDONS[name]
        state = self._state()
        work = self._addon_work_dir(name)
        make_serving_cert(self._pki, work / "certs")
        cluster_addons.write_config(addon, work, self._addon_ports(name, state), work / "certs")
        self.start_component(addon.component, deadline=deadline)
        ca = _b64(self._pki / "ca.crt")
        for config in cluster_addons.webhook_configurations(addon, state["ports"][f"{name}-webhook"], ca):
            kind = "mutatingwebhookconfigurations"
            if config["kind"] == "ValidatingWebhookConfiguration":
                kind = "validatingwebhookconfigurations"
            status, body = self._api(
                f"/apis/admissionregistration.k8s.io/v1/{kind}", method="POST", body=config
            )
            if status not in (201, 409):
                raise ClusterError(f"registering {name}'s webhooks failed: {status} {body[:300]!r}")
        port = state["ports"][f"{name}-webhook"]
        log(f"add-on {name} {cluster_addons.version(addon)} runs (webhooks on 127.0.0.1:{port})")

    def addon_has_process(self, name: str) -> bool:
        """The add-on has a controller process in this cluster (a grove add-on without GROVE_OPERATOR
        has none: it is Grove's CRDs alone)."""
        return ADDONS[name].component in self._state()["components"]

    def stop_addon(self, name: str) -> None:
        """Unregister the add-on's webhooks, then stop its process (start_addon brings both back):
        for tests that play its controller with a simulation for a while."""
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            path = f"/apis/admissionregistration.k8s.io/v1/{kind}/dynamo-local-{name}"
            status, body = self._api(path, method="DELETE")
            if status not in (200, 202, 404):
                raise ClusterError(f"unregistering {name}'s webhooks failed: {status} {body[:300]!r}")
        self.stop_component(ADDONS[name].component)

    def start_addon(self, name: str, *, timeout: float = 120.0) -> None:
        """Start the add-on's process (healthy) and register its webhooks, unless it runs."""
        if ADDONS[name].component not in self.pids():
            self._start_addon(name, deadline=time.monotonic() + timeout)

    def _established(self, crd_path: str) -> bool:
        status, body = self._api(crd_path)
        conditions = (json.loads(body).get("status") or {}).get("conditions") or [] if status == 200 else []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    # -- components

    def _argv(self, name: str, state: Mapping[str, Any]) -> list[str]:
        ports = state["ports"]
        exe = state["components"][name]["exe"]
        if addon_name := state["components"][name].get("addon"):
            addon = ADDONS[addon_name]
            work = self._addon_work_dir(addon_name)
            config = work / f"{addon_name}-config.json"
            return cluster_addons.argv(addon, exe, config, self._addon_ports(addon_name, state))
        pki, kubeconfig = self._pki, self.kubeconfig
        peer = f"http://127.0.0.1:{ports['etcd-peer']}"
        client = f"http://127.0.0.1:{ports[ETCD]}"
        delegated = [f"--kubeconfig={kubeconfig}", f"--authentication-kubeconfig={kubeconfig}"]
        delegated += [f"--authorization-kubeconfig={kubeconfig}", "--bind-address=127.0.0.1"]
        match name:
            case "etcd":
                args = [
                    "--name=node0", f"--data-dir={self.state_dir / 'etcd'}",
                    f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
                    f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                    f"--initial-cluster=node0={peer}", "--initial-cluster-state=new",
                    # Test data is disposable: skipping fsync makes etcd writes ~10x cheaper.
                    "--unsafe-no-fsync=true", "--quota-backend-bytes=8589934592", "--log-level=warn",
                ]  # fmt: skip
            case "kube-apiserver":
                args = [
                    f"--etcd-servers={client}",
                    "--bind-address=127.0.0.1", f"--secure-port={ports[APISERVER]}",
                    # Without it the apiserver derives an address from the default route (and exits
                    # on hosts without one); a loopback one also keeps every advertised address local.
                    "--advertise-address=127.0.0.1",
                    # Endpoints validation rejects loopback addresses, so don't reconcile `kubernetes`.
                    "--endpoint-reconciler-type=none",
                    f"--cert-dir={pki}",
                    f"--tls-cert-file={pki / 'apiserver.crt'}",
                    f"--tls-private-key-file={pki / 'apiserver.key'}",
                    f"--client-ca-file={pki / 'ca.crt'}",
                    f"--service-account-issuer={SA_ISSUER}",
                    f"--service-account-key-file={pki / 'sa.pub'}",
                    f"--service-account-signing-key-file={pki / 'sa.key'}",
                    f"--service-cluster-ip-range={SERVICE_CIDR}",
                    "--authorization-mode=RBAC", "--allow-privileged=true",
                    # Plain max-in-flight limits instead of APF: less background work on small
                    # machines, and --max-requests-inflight=N then throttles exactly (429 past N).
                    "--enable-priority-and-fairness=false",
                    # Nodes are born without the not-ready taint: kcm's node-lifecycle controller,
                    # which would lift it, is off (see kube-controller-manager below).
                    "--disable-admission-plugins=TaintNodesByCondition",
                    # Close watches on SIGTERM: otherwise shutdown waits 60 s for them to go idle.
                    "--shutdown-watch-termination-grace-period=2s",
                    *state["apiserver_extra_args"],
                ]  # fmt: skip
            case "kube-controller-manager":
                args = [
                    *delegated, f"--secure-port={ports[CONTROLLER_MANAGER]}",
                    "--leader-elect=false",
                    # No node-lifecycle controller: kwok's heartbeats are simulated, and on a starved
                    # 2-core machine they can lapse past the grace period. The controller would then
                    # mark every pod NotReady, which kwok (unlike a kubelet) never reverts, and a
                    # rollout would hang with its new pods not ready.
                    # No Endpoints/EndpointSlice controllers either: the API server refuses the
                    # loopback pod IPs in them, so they only failed, with a Warning Event per Service
                    # every few seconds that flooded `kubectl get events`. Nothing here routes by them;
                    # the DynamoModel controller falls back to reading the pods.
                    "--controllers=*,-node-lifecycle-controller,-endpoints-controller,"
                    "-endpointslice-controller,-endpointslice-mirroring-controller",
                    # Every controller acts as the admin identity: no per-controller RBAC needed.
                    "--use-service-account-credentials=false",
                    f"--service-account-private-key-file={pki / 'sa.key'}",
                    f"--root-ca-file={pki / 'ca.crt'}",
                    f"--cluster-signing-cert-file={pki / 'ca.crt'}",
                    f"--cluster-signing-key-file={pki / 'ca.key'}",
                    # Tests create hundreds of pods at once; the default 20 QPS would be the bottleneck.
                    "--kube-api-qps=200", "--kube-api-burst=400",
                ]  # fmt: skip
            case "kube-scheduler":
                args = [*delegated, f"--secure-port={ports[SCHEDULER]}", "--leader-elect=false"]
            case "kwok":
                args = [
                    f"--kubeconfig={kubeconfig}", "--manage-all-nodes=true",
                    "--node-ip=127.0.0.1", f"--node-port={ports[KWOK]}",
                    f"--server-address=127.0.0.1:{ports[KWOK]}",
                    f"--cidr={KWOK_FALLBACK_CIDR}", "--node-lease-duration-seconds=40",
                    *(f"--config={s}" for s in state["stages"]),
                ]  # fmt: skip
            case _:
                raise ValueError(name)
        return [exe, *args]

    def _health(self, name: str, ports: Mapping[str, int]) -> bool:
        if addon := next((a for a in ADDONS.values() if a.component == name), None):
            path = cluster_addons.health_path(addon)
            return _healthy(f"http://127.0.0.1:{ports[f'{addon.name}-health']}{path}")
        match name:
            case "etcd":
                return _healthy(f"http://127.0.0.1:{ports[ETCD]}/health")
            case "kube-apiserver":
                return self._api_ok("/readyz")
            case "kwok":
                return _healthy(f"http://127.0.0.1:{ports[KWOK]}/healthz")
            case _:
                return _healthy(f"https://127.0.0.1:{ports[name]}/healthz", _insecure_context())

    def start_component(self, name: str, *, wait: bool = True, deadline: float | None = None) -> int:
        """(Re)start a component on its recorded port with the same arguments; returns its pid.

        With wait, returns once its health check passes (default bound: 120 s).
        """
        name = ALIASES.get(name, name)
        state = self._state()
        entry = state["components"][name]
        if entry.get("pid") and process_alive(entry["pid"], entry["exe"]):
            raise ClusterError(f"{name} already runs as pid {entry['pid']}")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ETCD_", "KWOK_", "KUBECONFIG"))}
        # kwok would also load ~/.kwok/kwok.yaml; point its work dir into the state dir instead.
        env["KWOK_WORKDIR"] = str(self.state_dir / "kwok")
        # The Go runtime's collector at its default pace was about a quarter of the control plane's
        # CPU on a busy 2-core machine (the test suite runs three clusters side by side). Collect four
        # times less often, bounded by a soft memory limit per process; a caller's own setting wins.
        env.setdefault("GOGC", "400")
        env.setdefault("GOMEMLIMIT", "2GiB")
        if addon_name := entry.get("addon"):
            env.update(cluster_addons.environment(ADDONS[addon_name], self.kubeconfig))
        with (self.state_dir / "logs" / f"{name}.log").open("ab") as logfile:
            proc = subprocess.Popen(
                self._argv(name, state),
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=subprocess.STDOUT,
                cwd=self.state_dir,
                env=env,
                start_new_session=True,  # a Ctrl-C in the terminal must not hit the cluster
            )
        self._procs[name] = proc
        entry["pid"] = proc.pid
        self._save(state)
        if wait:
            deadline = deadline or time.monotonic() + 120.0
            while not self._health(name, state["ports"]):
                self._raise_if_exited()
                if time.monotonic() > deadline:
                    raise ClusterError(f"{name} not healthy in time; see {self.log_path(name)}")
                time.sleep(POLL_SECONDS)
        return proc.pid

    def stop_component(self, name: str, *, crash: bool = False) -> None:
        """Stop one component: SIGTERM, SIGKILL after a bound; with crash, SIGKILL at once.

        start_component() brings it back. A graceful etcd stop takes ~7 s while the apiserver holds
        watch streams on it (etcd's request timeout); crash=True avoids the wait.
        """
        name = ALIASES.get(name, name)
        state = self._state()
        entry = state["components"][name]
        proc = self._procs.pop(name, None)
        if entry.get("pid"):
            terminate(
                {entry["pid"]: entry["exe"]}, [proc] if proc else [], grace=0 if crash else STOP_GRACE_SECONDS
            )
        entry["pid"] = None
        self._save(state)

    def restart_apiserver(self, extra_args: Sequence[str] | None = None) -> None:
        """Restart kube-apiserver on the same port with extra flags (None: back to the defaults),
        e.g. ["--max-requests-inflight=5"]; returns once /readyz is ok again."""
        self.stop_component(APISERVER)
        state = self._state()
        state["apiserver_extra_args"] = list(extra_args or [])
        self._save(state)
        self.start_component(APISERVER)

    def compact_etcd(self) -> int:
        """Compact etcd's history up to its current revision (returned), through etcd's JSON gRPC
        gateway: POST /v3/kv/range reads the header revision, POST /v3/kv/compaction compacts.

        Watches that resume below that revision are then refused by etcd. The apiserver's watch
        cache may still serve recent resourceVersions; restart_apiserver() afterwards empties it, so
        every older resourceVersion then gets 410 Gone.
        """
        base = f"http://127.0.0.1:{self._state()['ports'][ETCD]}/v3"
        status, body = http(f"{base}/kv/range", method="POST", body={"key": base64.b64encode(b"\0").decode()})
        if status != 200:
            raise ClusterError(f"etcd range failed: {status} {body[:300]!r}")
        revision = int(json.loads(body)["header"]["revision"])
        status, body = http(
            f"{base}/kv/compaction", method="POST", body={"revision": revision, "physical": True}
        )
        # The apiserver's own compactor may have got there first; that is the same outcome.
        if status != 200 and b"compacted" not in body:
            raise ClusterError(f"etcd compaction failed: {status} {body[:300]!r}")
        return revision

    def token_kubeconfig(
        self, service_account: str, namespace: str, path: Path | str, *, duration: str = "2h"
    ) -> str:
        """Write a kubeconfig that authenticates as the ServiceAccount with a bound token from
        `kubectl create token`; returns its path."""
        token = subprocess.run(
            ["kubectl", f"--kubeconfig={self.kubeconfig}", "create", "token", service_account,
             "-n", namespace, f"--duration={duration}"],
            check=True, capture_output=True, text=True, timeout=60,
        ).stdout.strip()  # fmt: skip
        text = kubeconfig_text(
            name=f"{namespace}-{service_account}",
            server=self.server,
            ca=self._pki / "ca.crt",
            user={"token": token},
        )
        Path(path).write_text(text)
        return str(path)

    # -- helpers

    def log_path(self, name: str) -> Path:
        """Log file of a component."""
        return self.state_dir / "logs" / f"{ALIASES.get(name, name)}.log"

    def log_tails(self, lines: int = 15) -> str:
        """The last lines of every component log, for error messages."""
        out = []
        for name in self.components():
            with contextlib.suppress(OSError):
                tail = self.log_path(name).read_text(errors="replace").splitlines()[-lines:]
                out.append(f"--- {name} ({self.log_path(name)}):\n" + "\n".join(tail))
        return "\n".join(out)

    def _raise_if_exited(self) -> None:
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                raise ClusterError(f"{name} exited with {proc.returncode}; see {self.log_path(name)}")

    def _admin_context(self) -> ssl.SSLContext:
        if self._admin_ctx is None:
            ctx = ssl.create_default_context(cafile=str(self._pki / "ca.crt"))
            ctx.load_cert_chain(str(self._pki / "admin.crt"), str(self._pki / "admin.key"))
            self._admin_ctx = ctx
        return self._admin_ctx

    def _api(self, path: str, *, method: str = "GET", body: Any = None) -> tuple[int, bytes]:
        return http(self.server + path, method=method, body=body, context=self._admin_context())

    def _api_ok(self, path: str) -> bool:
        try:
            status, _ = self._api(path)
        except OSError:
            return False
        return status == 200

    def _write_admin_kubeconfig(self) -> None:
        pki = self._pki
        text = kubeconfig_text(
            name=f"dynamo-local-{self.name}",
            server=self.server,
            ca=pki / "ca.crt",
            user={
                "client-certificate-data": _b64(pki / "admin.crt"),
                "client-key-data": _b64(pki / "admin.key"),
            },
        )
        Path(self.kubeconfig).write_text(text)
        os.chmod(self.kubeconfig, 0o600)

    def _create_nodes(self) -> None:
        for i in range(self._state()["nodes"]):
            status, body = self._api("/api/v1/nodes", method="POST", body=node_manifest(i))
            if status not in (201, 409):
                raise ClusterError(f"creating node {i} failed: {status} {body[:300]!r}")

    def _ready_nodes(self) -> int:
        try:
            status, body = self._api("/api/v1/nodes")
        except OSError:
            return 0
        if status != 200:
            return 0
        ready = 0
        for node in json.loads(body)["items"]:
            conditions = node.get("status", {}).get("conditions", [])
            taints = node.get("spec", {}).get("taints", [])
            is_ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
            # Nothing schedules onto a Node tainted not-ready (none should be: see the admission flags).
            if is_ready and not any(t["key"] == "node.kubernetes.io/not-ready" for t in taints):
                ready += 1
        return ready


def reap_orphans(root: Path | None = None) -> list[str]:
    """Stop clusters under root whose owning process (a test session) is gone; returns their names."""
    root = root or default_state_dir("x").parent
    reaped = []
    for state_file in sorted(root.glob("*/state.json")):
        with contextlib.suppress(OSError, ValueError, KeyError):
            owner = json.loads(state_file.read_text()).get("owner_pid")
            if owner and not process_alive(owner):
                LocalCluster(state_file.parent.name, state_dir=state_file.parent).down()
                reaped.append(state_file.parent.name)
    return reaped


@contextlib.contextmanager
def running(cluster: LocalCluster, *, timeout: float = 240.0) -> Iterator[LocalCluster]:
    """Bring the cluster up for the duration of the block; always down afterwards."""
    try:
        cluster.up(timeout=timeout)
        yield cluster
    finally:
        cluster.down()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("command", choices=["up", "down", "status", "kubeconfig", "reap"])
    parser.add_argument("--name", default="default")
    parser.add_argument("--state-dir", default=os.environ.get(STATE_DIR_ENV), help=f"env: {STATE_DIR_ENV}")
    parser.add_argument("--nodes", type=int, default=DEFAULT_NODES)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--addons", default="", help=f"comma-separated, of: {', '.join(ADDONS)}")
    parser.add_argument(
        "--crds",
        action="append",
        default=[],
        metavar="PATH",
        help="up: CRD manifests (a file or directory; repeatable) to install before the "
        "controller-manager starts, so its garbage collector knows their kinds from the start",
    )
    args = parser.parse_args(argv)
    try:
        addons = cluster_addons.parse(args.addons)
    except ValueError as e:
        parser.error(str(e))
    cluster = LocalCluster(
        args.name, state_dir=args.state_dir, nodes=args.nodes, addons=addons, crds=args.crds
    )
    try:
        match args.command:
            case "up":
                was_up = cluster.is_up()
                print(cluster.up(timeout=args.timeout))
                if was_up:
                    log(f"already up: {cluster.server}")
            case "down":
                cluster.down()
                log(f"down; {cluster.state_dir} removed")
            case "status":
                if not cluster._state_file.exists():
                    print(f"{args.name}: down")
                    return 1
                pids = cluster.pids()
                ports = cluster._state()["ports"]
                for name in cluster.components():
                    addon = cluster._state()["components"][name].get("addon")
                    port = ports[f"{addon}-webhook"] if addon else ports[name]
                    print(f"{name:24} {pids.get(name, '-')!s:>8}  127.0.0.1:{port}")
                print(f"server     {cluster.server}\nkubeconfig {cluster.kubeconfig}")
                return 0 if cluster.is_up() else 1
            case "reap":
                for name in reap_orphans():
                    log(f"stopped orphaned cluster {name}")
            case "kubeconfig":
                if not cluster.is_up():
                    log(f"{args.name} is not up")
                    return 1
                print(cluster.kubeconfig)
    except ClusterError as e:
        log(str(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
