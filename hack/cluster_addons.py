"""Opt-in add-ons of the local control plane: real controllers that run beside kcm and kwok.

    lws    the LeaderWorkerSet controller (sigs.k8s.io/lws)
    grove  Grove's CRDs (grove.io from Grove's API module; PodGang a labelled stand-in), and Grove's
           operator (PodCliqueSet -> PodCliques/PodGangs -> pods) only when GROVE_OPERATOR names a
           binary of it: no package registry serves that operator, so nothing here builds it

Prepared by hack/build-cluster-addons.sh in version-keyed directories (bin/<controller>, crds/*.yaml);
hack/localcluster.py installs their CRDs, starts their controllers as processes of the cluster (admin
kubeconfig, leader election off, every server on 127.0.0.1) and registers their webhooks by URL on
loopback. Without GROVE_OPERATOR the grove add-on is its CRDs alone; the tests then play Grove's
operator with a simulation (test/testsupport/grove_standin.py).

Webhooks, per add-on:
- lws: only the Pod webhooks are registered. They label each group's pods (group index, worker index,
  unique group key) and the controller needs those labels to make the worker StatefulSets; without
  them a LeaderWorkerSet never gets workers. The LeaderWorkerSet defaulting/validating webhooks are
  left off on purpose: an operator must set every field LWS requires itself (upstream's goldens show
  an object the API refuses without LWS defaulting), and the tests prove ours does.
- grove: its operator always serves its PodCliqueSet defaulting and validating webhooks; both are
  registered while it runs, as Grove's own chart does.

Standard library only (localcluster.py's rule).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HACK_DIR = Path(__file__).resolve().parent
ADDON_DIR_ENV = "DYNAMO_CLUSTER_ADDON_DIR_{}"  # e.g. DYNAMO_CLUSTER_ADDON_DIR_LWS overrides the cache


@dataclass(frozen=True, slots=True)
class Addon:
    """What localcluster.py needs to know to run one add-on."""

    name: str  # as given to --addons
    component: str  # process name (the binary in bin/, the log file, the state entry)
    version_var: str  # the variable of hack/cluster-versions.sh holding its version
    dir_var: str  # ... and its cache directory
    build_hint: str  # how to get it built, for the error when it is missing
    # The controller's binary is the user's, named by this environment variable (optional: unset,
    # the add-on is its CRDs alone), instead of bin/<component>.
    binary_env: str | None = None


LWS = Addon(
    "lws",
    "lws-controller",
    "LWS_VERSION",
    "LWS_ADDON_DIR",
    "run `make cluster-bins` (builds the LeaderWorkerSet controller, about 3 min cold)",
)
GROVE = Addon(
    "grove",
    "grove-operator",
    "GROVE_VERSION",
    "GROVE_ADDON_DIR",
    "run `make cluster-bins` (fetches Grove's API module, whose CRDs it installs, with `go mod download`)",
    binary_env="GROVE_OPERATOR",
)
# One per optional API whose entry in internal/optional_api_table.py names an `addon` (this file is
# standard library only and cannot read the table: test/unit/controllers/test_optional_api_table.py
# checks that the two name the same add-ons).
ADDONS: dict[str, Addon] = {a.name: a for a in (LWS, GROVE)}
# Every add-on listens on these, each on its own loopback port.
PORT_ROLES = ("webhook", "health", "metrics")

LWS_POD_LABEL = "leaderworkerset.sigs.k8s.io/name"
GROVE_INIT_IMAGE = "registry.invalid/grove-initc:local"  # kwok never pulls it


class AddonMissingError(RuntimeError):
    """An add-on is asked for but not built."""


def parse(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """ "lws,grove" or ["lws", "grove"] -> ("lws", "grove") in the canonical order; unknown names refused."""
    if value is None:
        return ()
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value) if n.strip()]
    if unknown := sorted(set(names) - set(ADDONS)):
        raise ValueError(f"unknown add-on(s) {unknown}; known: {', '.join(ADDONS)}")
    return tuple(n for n in ADDONS if n in names)


def _versions_var(var: str) -> str:
    out = subprocess.run(
        ["bash", "-c", f'. "$1" && printf %s "${var}"', "_", str(HACK_DIR / "cluster-versions.sh")],
        check=True,
        capture_output=True,
        text=True,
        timeout=30,
    )
    return out.stdout


def addon_dir(addon: Addon) -> Path:
    """The add-on's cache directory (env DYNAMO_CLUSTER_ADDON_DIR_<NAME> overrides it)."""
    if override := os.environ.get(ADDON_DIR_ENV.format(addon.name.upper())):
        return Path(override)
    return Path(_versions_var(addon.dir_var))


def version(addon: Addon) -> str:
    """The pinned version of the add-on (from hack/cluster-versions.sh)."""
    return _versions_var(addon.version_var)


def user_binary(addon: Addon) -> Path | None:
    """The controller binary the user names for an add-on whose operator is theirs (None: not named);
    AddonMissingError when the name is not an executable file."""
    if addon.binary_env is None or not (value := os.environ.get(addon.binary_env)):
        return None
    exe = Path(value).expanduser()
    if not (exe.is_file() and os.access(exe, os.X_OK)):
        raise AddonMissingError(f"{addon.binary_env}={value} is not an executable file")
    return exe


def built(addon: Addon, directory: Path) -> tuple[Path | None, list[Path]]:
    """(binary, CRD files) of a prepared add-on, the binary None for one that is its CRDs alone (the
    user named no binary); AddonMissingError with the build hint otherwise."""
    crds = sorted((directory / "crds").glob("*.yaml"))
    exe = user_binary(addon) if addon.binary_env else directory / "bin" / addon.component
    missing = exe is not None and addon.binary_env is None and not os.access(exe, os.X_OK)
    if missing or not crds:
        raise AddonMissingError(f"add-on {addon.name} is not built in {directory}; {addon.build_hint}")
    return exe, crds


def write_config(addon: Addon, config_dir: Path, ports: Mapping[str, int], cert_dir: Path) -> Path:
    """The add-on's configuration file (JSON, which both controllers' YAML decoders read)."""
    import json

    config_dir.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any]
    if addon is LWS:
        config = {
            "apiVersion": "config.lws.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            # Its own certificate management would write a Secret and patch webhook configurations of
            # an in-cluster install; here the serving certificate comes from the cluster's CA.
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": ports["webhook"], "certDir": str(cert_dir)},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{ports['health']}"},
            "metrics": {"bindAddress": "0"},
        }
    else:
        server = {"bindAddress": "127.0.0.1"}
        config = {
            "apiVersion": "operator.config.grove.io/v1alpha1",
            "kind": "OperatorConfiguration",
            "runtimeClientConnection": {"qps": 100, "burst": 150},
            "leaderElection": {"enabled": False},
            "server": {
                "webhooks": {
                    **server,
                    "port": ports["webhook"],
                    "serverCertDir": str(cert_dir),
                    "certProvisionMode": "manual",
                },
                "healthProbes": {**server, "port": ports["health"]},
                "metrics": {**server, "port": ports["metrics"]},
            },
            "controllers": {
                "podCliqueSet": {"concurrentSyncs": 2},
                "podClique": {"concurrentSyncs": 2},
                "podCliqueScalingGroup": {"concurrentSyncs": 2},
            },
            "logLevel": "info",
            "logFormat": "json",
            "authorizer": {"enabled": False},
            "topologyAwareScheduling": {"enabled": False},
        }
    path = config_dir / f"{addon.name}-config.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def argv(addon: Addon, exe: str, config: Path, ports: Mapping[str, int]) -> list[str]:
    """Command line of the add-on's process."""
    if addon is LWS:
        # The deprecated flags win over the file's defaults; both say the same.
        return [exe, f"--config={config}", "--leader-elect=false", "--metrics-bind-address=0",
                f"--health-probe-bind-address=127.0.0.1:{ports['health']}",
                "--kube-api-qps=200", "--kube-api-burst=400"]  # fmt: skip
    return [exe, f"--config={config}"]


def environment(addon: Addon, kubeconfig: str) -> dict[str, str]:
    """Extra environment of the add-on's process (both read KUBECONFIG through controller-runtime)."""
    env = {"KUBECONFIG": kubeconfig}
    if addon is GROVE:
        env["GROVE_INIT_CONTAINER_IMAGE"] = GROVE_INIT_IMAGE
    return env


def health_path(addon: Addon) -> str:
    """Grove's /readyz turns ok once its webhook server serves; LWS has no such check."""
    return "/readyz" if addon is GROVE else "/healthz"


def webhook_configurations(addon: Addon, port: int, ca_bundle_b64: str) -> list[dict[str, Any]]:
    """The add-on's admission webhooks, pointing at its loopback webhook server (see the docstring)."""
    url = f"https://127.0.0.1:{port}"

    def hook(name: str, path: str, rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        return {
            "name": name,
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": url + path, "caBundle": ca_bundle_b64},
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "timeoutSeconds": 10,
            "rules": rules,
            **extra,
        }

    if addon is LWS:
        pods = {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}
        # Only LWS pods: the rest of the cluster keeps working whatever the controller does.
        only_lws = {"objectSelector": {"matchExpressions": [{"key": LWS_POD_LABEL, "operator": "Exists"}]}}
        mutating = [
            hook("mpod.lws.local", "/mutate--v1-pod", [{**pods, "operations": ["CREATE"]}], **only_lws)
        ]
        validating = [
            hook(
                "vpod.lws.local",
                "/validate--v1-pod",
                [{**pods, "operations": ["CREATE", "UPDATE"]}],
                **only_lws,
            )
        ]
    else:
        pcs = {
            "apiGroups": ["grove.io"],
            "apiVersions": ["v1alpha1"],
            "resources": ["podcliquesets"],
            "operations": ["CREATE", "UPDATE"],
            "scope": "Namespaced",
        }
        mutating = [hook("pcs.defaulting.grove.local", "/webhooks/default-podcliqueset", [pcs])]
        validating = [hook("pcs.validating.grove.local", "/webhooks/validate-podcliqueset", [pcs])]
    name = f"dynamo-local-{addon.name}"
    return [
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": mutating,
        },
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": validating,
        },
    ]
