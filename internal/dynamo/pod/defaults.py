"""Per-component-type defaults: the main container's command, ports, probes and env.

Probes and env are upstream's at 2a6da14c (August 2026). Seed 001's "Operator Default Values
Injection" table is older (frontend 60/60/30/10 with an exec readiness, worker timeouts of 30 s): a
takeover of upstream's graphs would restart every pod for probe values alone, so upstream wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.pod.merge import env

# Where a worker serves its forward-pass metrics; under failover engine i binds base + i.
ENV_DYN_FORWARDPASS_METRIC_PORT = "DYN_FORWARDPASS_METRIC_PORT"
FORWARDPASS_METRIC_BASE_PORT = 20380


@dataclass(frozen=True)
class ComponentDefaults:
    """What one component type contributes before any user setting is applied."""

    command: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    ports: list[dict[str, Any]] = field(default_factory=list)
    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    env: list[dict[str, Any]] = field(default_factory=list)
    service_account: str | None = None


def http_probe(path: str, port: str | int, **numbers: int) -> dict[str, Any]:
    """An HTTP GET probe with the given timing numbers (camelCase keys)."""
    return {"httpGet": {"path": path, "port": port}, **numbers}


def port(name: str, number: int) -> dict[str, Any]:
    """A TCP container port."""
    return {"name": name, "containerPort": number, "protocol": "TCP"}


def _frontend(dyn_ns: str) -> ComponentDefaults:
    return ComponentDefaults(
        command=["python3"],
        args=["-m", "dynamo.frontend"],
        ports=[port(c.HTTP_PORT_NAME, c.HTTP_PORT)],
        probes={
            # /live does no I/O, so a 1 s timeout is enough; the frontend serves within ~10 s.
            "livenessProbe": http_probe(
                "/live",
                c.HTTP_PORT_NAME,
                initialDelaySeconds=15,
                periodSeconds=10,
                timeoutSeconds=1,
                failureThreshold=3,
            ),
            "readinessProbe": http_probe(
                "/health",
                c.HTTP_PORT_NAME,
                initialDelaySeconds=10,
                periodSeconds=10,
                timeoutSeconds=3,
                failureThreshold=3,
            ),
        },
        env=[
            env(c.ENV_DYNAMO_PORT, str(c.HTTP_PORT)),
            env(c.ENV_DYN_HTTP_PORT, str(c.HTTP_PORT)),
            env(c.ENV_DYN_NAMESPACE_PREFIX, dyn_ns),
        ],
    )


def _system_port_probes() -> dict[str, dict[str, Any]]:
    """The probes of components that serve Dynamo's system port (workers, the planner): timeouts below
    the period (4 < 5); one failed liveness check restarts the pod; up to 2 h to load a model."""
    return {
        "livenessProbe": http_probe(
            "/live", c.SYSTEM_PORT_NAME, periodSeconds=5, timeoutSeconds=4, failureThreshold=1
        ),
        "readinessProbe": http_probe(
            "/health", c.SYSTEM_PORT_NAME, periodSeconds=10, timeoutSeconds=4, failureThreshold=3
        ),
        "startupProbe": http_probe(
            "/live", c.SYSTEM_PORT_NAME, periodSeconds=10, timeoutSeconds=5, failureThreshold=720
        ),
    }


def _worker() -> ComponentDefaults:
    return ComponentDefaults(
        ports=[port(c.SYSTEM_PORT_NAME, c.SYSTEM_PORT), port(c.NIXL_PORT_NAME, c.NIXL_PORT)],
        probes=_system_port_probes(),
        env=[
            env(c.ENV_DYN_SYSTEM_ENABLED, "true"),
            env(c.ENV_DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS, '["generate"]'),
            env(c.ENV_DYN_SYSTEM_PORT, str(c.SYSTEM_PORT)),
            env(c.ENV_DYN_HEALTH_CHECK_ENABLED, "false"),
            env(c.ENV_NIXL_TELEMETRY_ENABLE, "n"),
            env(c.ENV_NIXL_TELEMETRY_EXPORTER, "prometheus"),
            env(c.ENV_NIXL_TELEMETRY_PROMETHEUS_PORT, str(c.NIXL_PORT)),
            env(ENV_DYN_FORWARDPASS_METRIC_PORT, str(FORWARDPASS_METRIC_BASE_PORT)),
        ],
    )


def _planner(service_account: str) -> ComponentDefaults:
    return ComponentDefaults(
        ports=[port(c.METRICS_PORT_NAME, c.PLANNER_METRICS_PORT), port(c.SYSTEM_PORT_NAME, c.SYSTEM_PORT)],
        probes=_system_port_probes(),
        env=[
            env(c.ENV_PLANNER_PROMETHEUS_PORT, str(c.PLANNER_METRICS_PORT)),
            env(c.ENV_DYN_SYSTEM_PORT, str(c.SYSTEM_PORT)),
        ],
        service_account=service_account,
    )


def _epp(dyn_ns: str, dgd_name: str, namespace: str) -> ComponentDefaults:
    grpc_probe = {"grpc": {"port": c.EPP_GRPC_HEALTH_PORT, "service": "inference-extension"}}
    return ComponentDefaults(
        # Long flags with two dashes, as upstream 2a6da14c writes them (Go's flag package reads
        # both spellings; df888f68 wrote one dash).
        args=[
            "--pool-name",
            f"{dgd_name}-pool",
            "--pool-namespace",
            namespace,
            "--pool-group",
            c.GATEWAY_INFERENCE_GROUP,
            "-v",
            "4",
            "--zap-encoder",
            "json",
            "--grpc-port",
            str(c.EPP_GRPC_PORT),
            "--grpc-health-port",
            str(c.EPP_GRPC_HEALTH_PORT),
            "--config-file",
            "/etc/epp/epp-config-dynamo.yaml",
        ],
        ports=[
            port(c.EPP_GRPC_PORT_NAME, c.EPP_GRPC_PORT),
            port(c.EPP_GRPC_HEALTH_PORT_NAME, c.EPP_GRPC_HEALTH_PORT),
            port(c.METRICS_PORT_NAME, c.EPP_METRICS_PORT),
        ],
        probes={
            "livenessProbe": {**grpc_probe, "initialDelaySeconds": 5, "periodSeconds": 10},
            "readinessProbe": {**grpc_probe, "initialDelaySeconds": 5, "periodSeconds": 10},
            "startupProbe": {**grpc_probe, "periodSeconds": 10, "failureThreshold": 180},
        },
        env=[
            env(c.ENV_USE_STREAMING, "true"),
            env(c.ENV_RUST_LOG, "info"),
            env(c.ENV_DYN_ENFORCE_DISAGG, "false"),
            env(c.ENV_DYN_NAMESPACE_PREFIX, dyn_ns),
        ],
        service_account=c.EPP_SERVICE_ACCOUNT_NAME,
    )


def component_defaults(
    component_type: str,
    *,
    dyn_ns: str,
    dgd_name: str,
    namespace: str,
    planner_service_account: str = c.PLANNER_SERVICE_ACCOUNT_NAME,
) -> ComponentDefaults:
    """Defaults for one component type; unknown types (main, default, "") get none beyond the base."""
    if component_type == c.COMPONENT_FRONTEND:
        return _frontend(dyn_ns)
    if component_type in c.WORKER_COMPONENT_TYPES:
        return _worker()
    if component_type == c.COMPONENT_PLANNER:
        return _planner(planner_service_account)
    if component_type == c.COMPONENT_EPP:
        return _epp(dyn_ns, dgd_name, namespace)
    return ComponentDefaults()
