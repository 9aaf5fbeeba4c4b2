"""The profiler's configuration, derived from `spec.profilingConfig.config` plus the fields the operator
always owns (model, backend, namespace, output dir, base-config path)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, RequestSpec
from dynamo_operator.internal.dynamo.dgdr.names import (
    BASE_CONFIG_FILE,
    CONFIG_DIR,
    DEFAULT_MODEL_CACHE_MOUNT,
    OUTPUT_DIR,
)


class ProfilerConfigError(ValueError):
    """`profilingConfig.config` has a shape the profiler cannot take."""


def _section(config: dict[str, Any], key: str) -> dict[str, Any]:
    value = config.setdefault(key, {})
    if value is None:
        value = config[key] = {}
    if not isinstance(value, dict):
        raise ProfilerConfigError(f"spec.profilingConfig.config.{key} must be an object")
    return value


def profiler_config(spec: Mapping[str, Any], *, namespace: str) -> dict[str, Any]:
    """The config handed to the profiler: the user's config with model/backend forced from the spec."""
    profiling = spec.get("profilingConfig") or {}
    config: dict[str, Any] = copy.deepcopy(dict(profiling.get("config") or {}))
    deployment = _section(config, "deployment")
    deployment.setdefault("namespace", namespace)
    deployment["model"] = spec.get("model", "")
    overrides = spec.get("deploymentOverrides") or {}
    if overrides.get("workersImage"):
        deployment["dgd_image"] = overrides["workersImage"]
    config.setdefault("output_dir", OUTPUT_DIR)
    engine = _section(config, "engine")
    engine["backend"] = spec.get("backend", "")
    if profiling.get("configMapRef"):
        engine["config"] = f"{CONFIG_DIR}/{BASE_CONFIG_FILE}"
    return config


def uses_ai_configurator(config: Mapping[str, Any]) -> bool:
    """AI-Configurator (simulated) profiling instead of online profiling; camelCase wins over snake."""
    sweep = config.get("sweep")
    if not isinstance(sweep, Mapping):
        return False
    for key in ("useAiConfigurator", "use_ai_configurator"):
        if key in sweep:
            return sweep[key] is True
    return False


def render(config: Mapping[str, Any]) -> str:
    """The YAML string passed as one `--profile-config` argument (stable key order)."""
    return yaml.safe_dump(dict(config), sort_keys=True, default_flow_style=False)


def model_cache(config: ForeignObject) -> tuple[str, str] | None:
    """(PVC name, mount path) of the model cache the profiler should mount read-only, if configured."""
    deployment = config.get("deployment")
    if not isinstance(deployment, Mapping):
        return None
    cache = deployment.get("modelCache")
    if not isinstance(cache, Mapping) or not cache.get("pvcName"):
        return None
    return str(cache["pvcName"]), str(cache.get("mountPath") or DEFAULT_MODEL_CACHE_MOUNT)


def validate(spec: RequestSpec, *, namespace_restricted: bool) -> list[str]:
    """Spec errors the schema cannot express; empty when valid (cluster lookups are the caller's)."""
    errors: list[str] = []
    profiling = spec.get("profilingConfig") or {}
    if not profiling.get("profilerImage"):
        errors.append("spec.profilingConfig.profilerImage is required")
    config = profiling.get("config")
    # An empty (or absent) config is a profile with the profiler's defaults: it is what a v1beta1
    # request with only a model and an image reads as, and upstream's v1beta1 accepts one.
    if config is not None and not isinstance(config, Mapping):
        errors.append("failed to parse spec.profilingConfig.config: must be an object")
    if spec.get("enableGpuDiscovery") and namespace_restricted:
        errors.append(
            "spec.enableGpuDiscovery needs cluster-wide node access, which a namespace-restricted "
            "operator does not have; set the hardware.* fields of the profiling config instead"
        )
    if isinstance(config, Mapping):
        for key in ("deployment", "engine"):
            if key in config and config[key] is not None and not isinstance(config[key], Mapping):
                errors.append(f"spec.profilingConfig.config.{key} must be an object")
    return errors
