#!/usr/bin/env python3
"""Draw config/prometheus/dashboard.json's own panels into a PNG, from a real Prometheus scraping a real
operator during a short run (docs/operating/dashboard.md shows the result and says how it is made).

    make cluster-up && eval $(make kubeconfig)
    .venv/bin/python hack/render_dashboard.py [--out docs/images/dashboard.png] [--graphs 12]

What it does, all on loopback:
1. starts the operator as `make run` does (hack/run-local.sh), but with its conversion webhook on a
   loopback address of its own (127.x.y.z: another `make run` on the host may hold 127.0.0.1:9443),
   leader election on, plain-HTTP metrics on a free port;
2. starts Prometheus (built from its Go module by `hack/promtool.sh prometheus`) scraping it every 2 s,
   with the job label `dynamo-operator`;
3. drives a small workload in a namespace of its own: graphs created one by one, a worker edit that
   rolls some of them, a few deleted, a bounded number of steps each;
4. asks Prometheus for every panel's expressions over the run (query_range, Grafana's variables
   replaced: $job and $controller by `.*`, $__rate_interval by four scrape intervals) and draws the
   panels where the dashboard's gridPos puts them, with matplotlib;
5. stops everything it started and deletes its namespace.

Nothing here is faked: an empty panel means the operator served nothing for it during the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))  # testsupport: the graphs the tests and benchmarks share
sys.path.insert(0, str(REPO / "hack"))  # local_webhook: routes the CRDs' conversion webhook

from testsupport.graphs import two_service_graph  # noqa: E402

DASHBOARD = REPO / "config" / "prometheus" / "dashboard.json"
SCRAPE_SECONDS = 2
RATE_INTERVAL = f"{4 * SCRAPE_SECONDS}s"
JOB = "dynamo-operator"
START_TIMEOUT = 120.0
RESOURCE_COUNT_SECONDS = 30  # operator/operator_metrics.py's COUNT_INTERVAL_SECONDS


def say(msg: str) -> None:
    print(f"render_dashboard: {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_get(url: str, timeout: float = 10.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return str(resp.read().decode())


def wait_for(url: str, what: str, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"render_dashboard: {what} exited ({proc.returncode}) before it answered")
        with contextlib.suppress(OSError):
            http_get(url, timeout=2)
            return
        time.sleep(0.5)
    raise SystemExit(f"render_dashboard: {what} did not answer on {url}")


@contextlib.contextmanager
def process(
    args: list[str], log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A child in a session of its own, stopped with SIGTERM (then SIGKILL) when the block ends."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def webhook_route() -> tuple[str, str]:
    """(bind address, namespace): a loopback address of this run's whose webhook port is free, given to
    the CRDs' Service by hack/local_webhook.py (its docstring says why a Service and not a URL)."""
    import local_webhook  # hack/, beside this script

    crds = str(REPO / "config" / "crd" / "bases")
    [ref] = local_webhook.service_refs(local_webhook._docs([crds]))
    for _ in range(50):
        address = f"127.{secrets.randbelow(50) + 200}.{secrets.randbelow(256)}.{secrets.randbelow(254) + 1}"
        with socket.socket() as s:
            try:
                s.bind((address, ref.port))
            except OSError:
                continue
        if local_webhook.main(["--address", address, crds]) != 0:
            raise SystemExit("render_dashboard: cannot route the CRDs' conversion webhook")
        return f"{address}:{ref.port}", ref.namespace
    raise SystemExit("render_dashboard: no free loopback address for the webhook")


def kubectl(*args: str, stdin: str | None = None, tries: int = 1) -> None:
    """kubectl with `args`; up to `tries` times, 2 s apart, while the conversion webhook refuses (the
    API server may still hold a CRD's previous CA for a moment after the operator is ready)."""
    for attempt in range(tries):
        done = subprocess.run(
            ["kubectl", *args], input=stdin, text=True, capture_output=True, timeout=60, check=False
        )
        if done.returncode == 0:
            return
        if "conversion webhook" not in done.stderr or attempt == tries - 1:
            break
        time.sleep(2)
    raise SystemExit(f"render_dashboard: kubectl {' '.join(args)}: {done.stderr.strip()}")


def apply(obj: dict[str, Any]) -> None:
    args = ("apply", "--server-side", "--field-manager=render-dashboard", "-f", "-")
    kubectl(*args, stdin=json.dumps(obj), tries=30)


def workload(ns: str, graphs: int, pause: float) -> None:
    """Graphs created one by one, then half of them rolled by a worker edit, then a quarter deleted;
    `pause` seconds between steps, so the panels show the phases apart."""
    names = [f"demo-{i:02d}" for i in range(graphs)]
    for name in names:
        apply(two_service_graph(name, ns))
        time.sleep(pause)
    time.sleep(6 * pause)
    for name in names[::2]:
        apply(two_service_graph(name, ns, worker_env="v2"))
        time.sleep(pause)
    time.sleep(6 * pause)
    for name in names[: max(1, graphs // 4)]:
        kubectl("delete", "dynamographdeployments.v1alpha1.nvidia.com", name, "-n", ns, "--wait=false")
        time.sleep(pause)
    # Long enough for one more count of graphs by state (the operator counts every 30 s).
    time.sleep(max(6 * pause, RESOURCE_COUNT_SECONDS + 5))


def prometheus_config(path: Path, metrics_port: int) -> None:
    path.write_text(
        json.dumps(
            {
                "global": {
                    "scrape_interval": f"{SCRAPE_SECONDS}s",
                    "evaluation_interval": f"{SCRAPE_SECONDS}s",
                },
                "scrape_configs": [
                    {"job_name": JOB, "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}
                ],
            }
        )
    )


def substitute(expr: str) -> str:
    """Grafana's variables as the panel would send them with "All" selected."""
    return (
        expr.replace("$__rate_interval", RATE_INTERVAL)
        .replace('job=~"$job"', 'job=~".*"')
        .replace('"$controller"', '".*"')
    )


def legend(fmt: str, labels: dict[str, str]) -> str:
    """Grafana's legend format: {{label}} replaced by its value, by nothing when the series has no such
    label (Prometheus drops empty ones: a new graph's empty state)."""
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt).strip() or "(empty)"


def query_range(prom: str, expr: str, start: float, end: float) -> list[tuple[str, list[float], list[float]]]:
    params = urllib.parse.urlencode(
        {"query": substitute(expr), "start": start, "end": end, "step": SCRAPE_SECONDS}
    )
    body = json.loads(http_get(f"{prom}/api/v1/query_range?{params}", timeout=30))
    if body.get("status") != "success":
        raise SystemExit(f"render_dashboard: Prometheus refused {expr!r}: {body}")
    out = []
    for result in body["data"]["result"]:
        xs = [float(t) - start for t, _ in result["values"]]
        ys = [float(v) for _, v in result["values"]]
        out.append((json.dumps(result["metric"], sort_keys=True), xs, ys))
    return out


def draw(dashboard: dict[str, Any], prom: str, start: float, end: float, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.gridspec import GridSpec

    items = dashboard["panels"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in items)
    fig = plt.figure(figsize=(16, rows * 0.3), dpi=80)
    grid = GridSpec(rows, 24, figure=fig, hspace=0.9, wspace=1.2, top=0.96, bottom=0.02)
    fig.suptitle(
        f"{dashboard['title']}: a {int(end - start)} s run against the local control plane"
        f" (Prometheus, {SCRAPE_SECONDS} s scrapes; x axis: seconds into the run)",
        fontsize=13,
        y=0.99,
    )
    drawn = empty = series_total = 0
    for p in items:
        g = p["gridPos"]
        if p["type"] == "row":
            ax = fig.add_subplot(grid[g["y"], :])
            ax.axis("off")
            ax.text(0, 0.2, p["title"], fontsize=12, fontweight="bold")
            continue
        # One grid unit above for the title, one below for the tick labels.
        ax = fig.add_subplot(grid[g["y"] + 1 : g["y"] + g["h"] - 1, g["x"] : g["x"] + g["w"]])
        ax.set_title(p["title"], fontsize=10, loc="left")
        ax.tick_params(labelsize=7)
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        lines = 0
        for t in p["targets"]:
            for metric, xs, ys in query_range(prom, t["expr"], start, end):
                label = legend(t.get("legendFormat", ""), json.loads(metric))
                if p["type"] == "stat":
                    ax.text(
                        0.5,
                        0.45,
                        f"{ys[-1]:g}",
                        fontsize=30,
                        ha="center",
                        va="center",
                        transform=ax.transAxes,
                    )
                    ax.text(0.5, 0.1, label, fontsize=8, ha="center", transform=ax.transAxes)
                else:
                    ax.plot(xs, ys, linewidth=1.2, label=label)
                lines += 1
        drawn, series_total, empty = drawn + 1, series_total + lines, empty + (lines == 0)
        if p["type"] == "stat":
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_facecolor("#d9f2d9" if lines else "#f2d9d9")
            continue
        if unit:
            ax.set_ylabel(unit, fontsize=7)
        if lines == 0:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="grey")
        elif lines <= 8:
            ax.legend(fontsize=6, loc="upper left")
        else:
            ax.text(0.99, 0.97, f"{lines} series", ha="right", va="top", fontsize=7, transform=ax.transAxes)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight")
    size = out.stat().st_size // 1024
    say(f"wrote {out} ({size} KiB): {drawn} panels, {series_total} series, {empty} without data")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images" / "dashboard.png")
    parser.add_argument("--graphs", type=int, default=12, help="graphs to create (default %(default)s)")
    parser.add_argument("--pause", type=float, default=2.0, help="seconds between workload steps")
    opts = parser.parse_args()
    if not os.environ.get("KUBECONFIG"):
        raise SystemExit("render_dashboard: set KUBECONFIG (make cluster-up; eval $(make kubeconfig))")
    prometheus = (
        subprocess.run(
            [str(REPO / "hack" / "promtool.sh"), "prometheus"], check=True, capture_output=True, text=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    ns = f"dashboard-demo-{secrets.token_hex(3)}"
    kubectl("create", "namespace", ns)
    metrics_port, prom_port, health_port = free_port(), free_port(), free_port()
    with tempfile.TemporaryDirectory(prefix="dynamo-dashboard-") as tmp:
        work = Path(tmp)
        prometheus_config(work / "prometheus.yml", metrics_port)
        kubectl("apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "crd"))
        bind, webhook_ns = webhook_route()
        # The operator runs "in" the webhook Service's namespace: its certificate names that Service.
        env = {**os.environ, "POD_NAMESPACE": webhook_ns, "PYTHONSAFEPATH": "1"}
        operator_args = [
            str(Path(sys.executable).with_name("dynamo-operator")),
            "--log-format=console",
            f"--health-probe-bind-address=127.0.0.1:{health_port}",
            "--metrics-secure=false",
            f"--metrics-bind-address=127.0.0.1:{metrics_port}",
            f"--webhook-bind-address={bind}",
            # The Lease goes into POD_NAMESPACE: the webhook's certificate names the Service of the
            # namespace the leader election uses.
            "--leader-elect",
        ]
        deadline = time.monotonic() + START_TIMEOUT
        try:
            with (
                process(operator_args, work / "operator.log", env) as operator,
                process(
                    [
                        prometheus,
                        f"--config.file={work / 'prometheus.yml'}",
                        f"--storage.tsdb.path={work / 'tsdb'}",
                        f"--web.listen-address=127.0.0.1:{prom_port}",
                    ],
                    work / "prometheus.log",
                ) as prom_proc,
            ):
                # Ready: caches synced and the webhook serving with its CA in every CRD.
                wait_for(f"http://127.0.0.1:{health_port}/readyz", "the operator", operator, deadline)
                prom = f"http://127.0.0.1:{prom_port}"
                wait_for(f"{prom}/-/ready", "Prometheus", prom_proc, deadline)
                start = time.time()
                say(f"operator and Prometheus up; workload in namespace {ns}")
                workload(ns, opts.graphs, opts.pause)
                end = time.time()
                draw(json.loads(DASHBOARD.read_text()), prom, start, end, opts.out)
        finally:
            subprocess.run(
                ["kubectl", "delete", "namespace", ns, "--wait=false"], check=False, capture_output=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
