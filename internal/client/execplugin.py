"""Credentials from a kubeconfig `exec` plugin (client.authentication.k8s.io v1 / v1beta1).

The plugin is a command that prints an ExecCredential: a bearer token, or a client certificate and
key, optionally with an `expirationTimestamp`. As client-go does, the result is cached until it
expires and the plugin is run again after the API server answers 401 (`refresh=True`). The operator
never has a terminal, so plugins always run non-interactively (stdin is /dev/null).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal.client.kubeconfig import ConfigError
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.timestamps import parse_rfc3339

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
EXEC_INFO_ENV = "KUBERNETES_EXEC_INFO"
CLUSTER_EXTENSION = "client.authentication.k8s.io/exec"  # cluster extension handed to the plugin
# client-go waits forever; a plugin that hangs would hang start-up and every 401 retry, so we bound it
# well above what real plugins (cloud CLIs fetching a token) take.
RUN_TIMEOUT_SECONDS = 120.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class ExecResult:
    """One run's output: a token and/or a PEM certificate+key, valid until `expires_at` (epoch s)."""

    token: str | None
    client_certificate: str | None
    client_key: str | None
    expires_at: float | None  # None: valid until the server refuses it


@dataclass(frozen=True)
class ExecPlugin:
    """A validated `user.exec` section, ready to run."""

    user: str  # the kubeconfig user, for error messages
    api_version: str
    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    install_hint: str
    cluster_info: Mapping[str, Any] | None  # spec.cluster when provideClusterInfo is set

    @classmethod
    def from_kubeconfig(
        cls, user: str, spec: Mapping[str, Any], *, cluster: Mapping[str, Any], ca_data: bytes | None
    ) -> ExecPlugin:
        """Validate `spec`; `cluster` and `ca_data` feed spec.cluster when the plugin asks for it."""
        where = f"exec plugin of user {user!r}"
        api_version = spec.get("apiVersion")
        if not api_version:
            raise ConfigError(f"{where}: apiVersion is required ({' or '.join(API_VERSIONS)})")
        if api_version not in API_VERSIONS:
            raise ConfigError(
                f"{where}: apiVersion {api_version!r} is not supported (use {' or '.join(API_VERSIONS)})"
            )
        command = spec.get("command")
        if not isinstance(command, str) or not command:
            raise ConfigError(f"{where}: command is required")
        args = spec.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}: args must be a list of strings")
        env: list[tuple[str, str]] = []
        for item in spec.get("env") or []:
            if not isinstance(item, Mapping) or not item.get("name"):
                raise ConfigError(f"{where}: every env entry needs a name")
            env.append((str(item["name"]), str(item.get("value") or "")))
        # The operator has no terminal: a plugin that insists on one can never succeed here. An
        # unset mode is taken as IfAvailable (client-go's default for v1beta1) rather than refused.
        mode = spec.get("interactiveMode") or "IfAvailable"
        if mode == "Always":
            raise ConfigError(
                f"{where}: interactiveMode Always needs a terminal, which the operator does not have"
            )
        if mode not in ("Never", "IfAvailable"):
            raise ConfigError(f"{where}: invalid interactiveMode {mode!r}")
        hint = " ".join(_ANSI.sub("", str(spec.get("installHint") or "")).split())
        return cls(
            user=user,
            api_version=str(api_version),
            command=command,
            args=tuple(args),
            env=tuple(env),
            install_hint=hint,
            cluster_info=_cluster_info(cluster, ca_data) if spec.get("provideClusterInfo") else None,
        )

    def exec_info(self) -> str:
        """The KUBERNETES_EXEC_INFO value: an ExecCredential with only the spec filled in."""
        spec: dict[str, Any] = {"interactive": False}
        if self.cluster_info is not None:
            spec["cluster"] = dict(self.cluster_info)
        return json.dumps({"apiVersion": self.api_version, "kind": "ExecCredential", "spec": spec})

    async def run(self) -> ExecResult:
        """Run the command once and parse its ExecCredential; any failure is a one-line ConfigError."""
        env = {**os.environ, **dict(self.env), EXEC_INFO_ENV: self.exec_info()}
        try:
            proc = await asyncio.create_subprocess_exec(
                self.command,
                *self.args,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except FileNotFoundError:
            hint = f"; {self.install_hint}" if self.install_hint else ""
            raise ConfigError(
                f"exec plugin of user {self.user!r}: executable {self.command} not found{hint}"
            ) from None
        except PermissionError:
            raise ConfigError(
                f"exec plugin of user {self.user!r}: {self.command} is not executable"
            ) from None
        try:
            async with asyncio.timeout(RUN_TIMEOUT_SECONDS):
                stdout, stderr = await proc.communicate()
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise ConfigError(
                f"exec plugin of user {self.user!r}: {self.command} did not finish"
                f" in {RUN_TIMEOUT_SECONDS:.0f}s"
            ) from None
        if proc.returncode != 0:
            last = _last_line(stderr)
            raise ConfigError(
                f"exec plugin of user {self.user!r}: {self.command} failed with exit code {proc.returncode}"
                + (f": {last}" if last else "")
            )
        return self._parse(stdout)

    def _parse(self, stdout: bytes) -> ExecResult:
        where = f"exec plugin of user {self.user!r}"
        try:
            doc = json.loads(stdout)
        except ValueError:
            raise ConfigError(f"{where}: output is not JSON") from None
        if not isinstance(doc, Mapping) or doc.get("kind") != "ExecCredential":
            raise ConfigError(f"{where}: output is not an ExecCredential")
        if doc.get("apiVersion") != self.api_version:
            raise ConfigError(
                f"{where}: configured for {self.api_version} but the plugin returned {doc.get('apiVersion')}"
            )
        status = doc.get("status")
        if not isinstance(status, Mapping):
            raise ConfigError(f"{where}: output has no status")
        token = status.get("token") or None
        cert = status.get("clientCertificateData") or None
        key = status.get("clientKeyData") or None
        if token is None and cert is None and key is None:
            raise ConfigError(f"{where}: output has neither a token nor a client certificate and key")
        if (cert is None) != (key is None):
            raise ConfigError(f"{where}: output has a client certificate or key but not both")
        return ExecResult(
            token=token, client_certificate=cert, client_key=key, expires_at=_expiry(where, status)
        )


class ExecCredentials:
    """`Credentials` backed by an exec plugin: cached until expiry, re-run after a 401.

    `on_certificate(cert_pem, key_pem)` receives client certificates the plugin returns, so the
    caller can load them into its TLS context; it is called again whenever a run returns new ones.
    """

    def __init__(
        self,
        plugin: ExecPlugin,
        *,
        on_certificate: Callable[[str, str], None] | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._plugin = plugin
        self._on_certificate = on_certificate
        self._clock: Clock = clock or RealClock()
        self._lock = asyncio.Lock()
        self._result: ExecResult | None = None
        self._runs = 0  # completed runs; lets concurrent 401s share one re-run

    @property
    def runs(self) -> int:
        return self._runs

    async def authorization(self, *, refresh: bool = False) -> str | None:
        seen = self._runs
        async with self._lock:
            # After a 401, re-run unless another caller already did while we waited for the lock.
            stale = refresh and self._runs == seen
            if self._result is None or stale or self._expired(self._result):
                await self._run()
        assert self._result is not None
        return f"Bearer {self._result.token}" if self._result.token else None

    def _expired(self, result: ExecResult) -> bool:
        # expirationTimestamp is the plugin's wall time, so it is compared with ours.
        return result.expires_at is not None and self._clock.wall().timestamp() >= result.expires_at

    async def _run(self) -> None:
        result = await self._plugin.run()
        previous, self._result = self._result, result
        self._runs += 1
        if result.client_certificate and result.client_key and self._on_certificate is not None:
            unchanged = previous is not None and (previous.client_certificate, previous.client_key) == (
                result.client_certificate,
                result.client_key,
            )
            if not unchanged:
                self._on_certificate(result.client_certificate, result.client_key)


def _cluster_info(cluster: Mapping[str, Any], ca_data: bytes | None) -> dict[str, Any]:
    """spec.cluster of KUBERNETES_EXEC_INFO: the cluster as the plugin sees it (empty fields left out)."""
    info: dict[str, Any] = {"server": cluster.get("server", "")}
    if cluster.get("tls-server-name"):
        info["tls-server-name"] = cluster["tls-server-name"]
    if cluster.get("insecure-skip-tls-verify"):
        info["insecure-skip-tls-verify"] = True
    if ca_data:
        info["certificate-authority-data"] = base64.b64encode(ca_data).decode()
    if cluster.get("proxy-url"):
        info["proxy-url"] = cluster["proxy-url"]
    if cluster.get("disable-compression"):
        info["disable-compression"] = True
    for ext in cluster.get("extensions") or []:
        if isinstance(ext, Mapping) and ext.get("name") == CLUSTER_EXTENSION:
            info["config"] = ext.get("extension")
    return info


def _expiry(where: str, status: Mapping[str, Any]) -> float | None:
    stamp = status.get("expirationTimestamp")
    if not stamp:
        return None
    when = parse_rfc3339(str(stamp))
    if when is None:
        raise ConfigError(f"{where}: expirationTimestamp {stamp!r} is not an RFC 3339 time")
    return when.timestamp()


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1][:256] if lines else ""
