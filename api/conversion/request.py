"""DynamoGraphDeploymentRequest between v1alpha1 and v1beta1.

The two versions describe a request differently (v1alpha1 -> v1beta1):

- profilingConfig.config.sla.{ttft,itl,optimizationType} -> sla.{ttft,itl,optimizationType}
- profilingConfig.config.sla.{isl,osl} -> workload.{isl,osl}
- profilingConfig.config.deployment.modelCache.{pvcName,modelPathInPvc,pvcMountPath}
  -> modelCache.{pvcName,pvcModelPath,pvcMountPath}
- profilingConfig.config.planner -> features.planner; useMocker -> features.mocker.enabled
- profilingConfig.profilerImage -> image
- profilingConfig.{resources,tolerations} -> overrides.profilingJob: the resources of its container
  named `profiler`, the pod's tolerations
- status.state (with deployment.created) -> status.phase; status.generatedDeployment ->
  status.profilingResults.selectedConfig; status.deployment.name -> status.dgdName

What one side cannot hold travels in upstream's two reserved annotations (`preserve.py`), typed in
the version the object came from: `nvidia.com/dgdr-spec` (an envelope around a sparse spec) and
`nvidia.com/dgdr-status` (a sparse status). v1alpha1-only: enableGpuDiscovery, configMapRef,
outputPVC, deploymentOverrides, the rest of profilingConfig.config, status backend, profilingResults,
DeploymentDeleted and the created graph's details. v1beta1-only: hardware, workload
concurrency/requestRate, sla.e2eLatency, overrides.dgd, the rest of overrides.profilingJob,
searchStrategy, a disabled mocker, status profilingPhase, profilingJobName, pareto, deploymentInfo
and the Deployed phase.

Departures from upstream's webhook, each because of this operator's v1alpha1 schema or to keep
both round trips exact:
- status.state "" (this operator's state before the first reconcile) is a v1beta1 status without a
  phase, which is what upstream's v1beta1 shows before its first reconcile;
- a `deploymentOverrides.namespace` other than the object's own is restored from the annotation
  like any other field, so that it is refused where it shows (the request is stored as v1beta1,
  which has no such field): the dgdr-own-namespace admission policy evaluates the v1alpha1 form
  of a v1beta1 write, and the operator fails such a request (NamespaceNotAllowed) and writes
  nothing anywhere else; dropped, the request would silently deploy into its own namespace;
- profilerImage alone is the v1beta1 image (this v1alpha1 requires it; upstream falls back to
  workersImage), and only set modelCache values make a v1beta1 modelCache, so neither a workersImage
  nor an empty modelCache left in a payload turns up in an edited object;
- the profiling step and Job name are kept in every phase, with the phase they belong to, and
  empty values and blocks (a planner without settings, `sla: {}`) come back too;
- v1alpha1's status.backend is the spec's backend once the spec was taken in (this operator writes
  it so, with observedGeneration): a v1beta1 status with observedGeneration shows it in v1alpha1, so
  the request stored as v1beta1 keeps it, and the payload holds it only where it differs (`null`
  where a v1alpha1 status with observedGeneration has none).

Beyond upstream's field-by-field rules, a converter checks its own work: it converts its result back
without the annotation and records in the annotation whatever did not come back (an empty block,
an empty string, a planner with no settings). Restoring fills only places the live object leaves
empty, so a live field always wins over an annotation left over from an older conversion.

Damaged annotations never fail a conversion: one that does not parse (or is too large or deep) is
dropped with a log line, and so is one whose values would give the result a wrong JSON type or an
enum value its schema refuses where the live fields alone would not (the result is checked against
the version's CRD schema); the fields are then converted as if there were no annotation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from dynamo_operator.internal.jsontree import copy_tree

from . import V1ALPHA1, V1BETA1, preserve, schemas

log = logging.getLogger(__name__)

Json = dict[str, Any]

PROFILER = "profiler"
KIND: Final = "DynamoGraphDeploymentRequest"
_RESERVED = (preserve.DGDR_SPEC, preserve.DGDR_STATUS, *preserve.LEGACY_DGDR_ANNOTATIONS)

# v1alpha1 states that name a v1beta1 phase of their own; any other state is kept in the annotation.
_STATE_TO_PHASE = {
    "Pending": "Pending",
    "Profiling": "Profiling",
    "Ready": "Ready",
    "Deploying": "Deploying",
    "Failed": "Failed",
}
_PHASE_TO_STATE = {**_STATE_TO_PHASE, "Deployed": "Ready"}
_OPTIMIZATION_TYPES = ("latency", "throughput")
DEFAULT_SEARCH_STRATEGY = "rapid"  # v1beta1's schema default
_INT32 = (-(2**31), 2**31 - 1)
# v1beta1's schema defaults for leaves of an object (set by the API server only when the object is
# there): (v1beta1 parent, key, default) -> the leaf's path in v1alpha1's profilingConfig.config.
_LEAF_DEFAULTS: dict[tuple[str, str, object], tuple[str, ...]] = {
    ("workload", "isl", 4000): ("sla", "isl"),
    ("workload", "osl", 1000): ("sla", "osl"),
    ("modelCache", "pvcMountPath", "/opt/model-cache"): ("deployment", "modelCache", "pvcMountPath"),
}
# The spec payload key naming the leaf defaults a conversion from v1alpha1 added ("workload.osl").
_SERVER_DEFAULTS: Final = "serverDefaults"
# v1alpha1 profilingConfig.config.deployment.modelCache key -> v1beta1 modelCache key.
_MODEL_CACHE_KEYS = (
    ("pvcName", "pvcName"),
    ("modelPathInPvc", "pvcModelPath"),
    ("pvcMountPath", "pvcMountPath"),
)


# --- small helpers -------------------------------------------------------------------------------


def _dict(value: object) -> Json | None:
    return value if isinstance(value, dict) else None


def _child(parent: Json, key: str) -> Json:
    """parent[key] as a dict, created when absent (a non-dict value is replaced)."""
    value = parent.get(key)
    if not isinstance(value, dict):
        value = {}
        parent[key] = value
    return value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_int32(value: object) -> bool:
    """A whole number v1beta1's int32 fields can hold (3000.0 is one, 3000.5 and true are not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    # Range first: float() of an integer past 1e308 would raise.
    return _INT32[0] <= value <= _INT32[1] and float(value).is_integer()


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and value != ""


def _missing(want: object, got: object) -> Json:
    """The parts of `want` (a dict) absent from `got`: whole values under keys `got` lacks, and the
    same inside dicts both hold. Lists and other values are compared whole and never reported."""
    out: Json = {}
    if not isinstance(want, dict):
        return out
    have = got if isinstance(got, dict) else {}
    for key, value in want.items():
        if key not in have:
            out[key] = copy_tree(value)
        elif isinstance(value, dict):
            inner = _missing(value, have[key])
            if inner:
                out[key] = inner
    return out


def _merge(into: Json, extra: Mapping[str, Any]) -> None:
    """Adds `extra` to `into`, recursing into dicts both hold; `into` wins where both have a leaf."""
    for key, value in extra.items():
        if key not in into:
            into[key] = copy_tree(value)
        elif isinstance(into[key], dict) and isinstance(value, dict):
            _merge(into[key], value)


def _fill(dst: Json, saved: Mapping[str, Any], skip: Iterable[str] = ()) -> None:
    """Puts each saved value where `dst` has nothing; never replaces a value `dst` holds. `skip` lists
    top-level keys the caller restores by its own rules."""
    skipped = set(skip)
    for key, value in saved.items():
        if key in skipped:
            continue
        if key not in dst:
            dst[key] = copy_tree(value)
        elif isinstance(dst[key], dict) and isinstance(value, dict):
            _fill(dst[key], value)


def _guarded(what: str, restore: Callable[[], None]) -> None:
    """Runs one restore step; a payload of an unexpected shape is logged and skipped, never raised."""
    try:
        restore()
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as err:
        log.warning(
            "ignoring part of a DynamoGraphDeploymentRequest conversion annotation (%s): %r", what, err
        )


def _metadata(out: Json) -> Json:
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
        out["metadata"] = meta
    return meta


def _taken(out: Json) -> tuple[str | None, str | None]:
    """Removes every reserved DGDR annotation from `out` and returns the spec and status payloads."""
    meta = out.get("metadata")
    if not isinstance(meta, dict):
        return None, None
    taken = preserve.take(meta, _RESERVED)
    return taken.get(preserve.DGDR_SPEC), taken.get(preserve.DGDR_STATUS)


def _put(out: Json, spec_save: Json, status_save: Json) -> None:
    if spec_save:
        preserve.put(_metadata(out), preserve.DGDR_SPEC, preserve.encode_spec(spec_save))
    if status_save:
        preserve.put(_metadata(out), preserve.DGDR_STATUS, preserve.encode_status(status_save))


# --- profiling config blob (v1alpha1) <-> typed fields (v1beta1) ------------------------------------


def _project_blob(blob: Json, beta: Json) -> None:
    """Typed v1beta1 fields out of v1alpha1's profilingConfig.config."""
    sla = _dict(blob.get("sla"))
    if sla is not None:
        for key in ("ttft", "itl"):
            if _is_number(sla.get(key)):
                _child(beta, "sla")[key] = sla[key]
        if sla.get("optimizationType") in _OPTIMIZATION_TYPES:
            _child(beta, "sla")["optimizationType"] = sla["optimizationType"]
        for key in ("isl", "osl"):
            if _is_int32(sla.get(key)):
                _child(beta, "workload")[key] = int(sla[key])
    deployment = _dict(blob.get("deployment"))
    cache = _dict(deployment.get("modelCache")) if deployment is not None else None
    if cache is not None:
        # Only set values make a v1beta1 modelCache (upstream also makes an empty one): an empty
        # modelCache left in a payload's remainder must not give an edited object a modelCache.
        for alpha_key, beta_key in _MODEL_CACHE_KEYS:
            if _nonempty_str(cache.get(alpha_key)):
                _child(beta, "modelCache")[beta_key] = cache[alpha_key]
    planner = _dict(blob.get("planner"))
    if planner:
        _child(beta, "features")["planner"] = copy_tree(planner)


def _strip_blob(blob: Json) -> Json:
    """`blob` without the leaves `_project_blob` turns into typed fields (a copy; `blob` is kept)."""
    out = copy_tree(blob)
    sla = _dict(out.get("sla"))
    if sla is not None:
        stripped = False
        for key in ("ttft", "itl"):
            if _is_number(sla.get(key)):
                del sla[key]
                stripped = True
        for key in ("isl", "osl"):
            if _is_int32(sla.get(key)):
                del sla[key]
                stripped = True
        if sla.get("optimizationType") in _OPTIMIZATION_TYPES:
            del sla["optimizationType"]
            stripped = True
        if stripped and not sla:
            del out["sla"]
    deployment = _dict(out.get("deployment"))
    cache = _dict(deployment.get("modelCache")) if deployment is not None else None
    if deployment is not None and cache is not None:
        stripped = False
        for alpha_key, _ in _MODEL_CACHE_KEYS:
            if _nonempty_str(cache.get(alpha_key)):
                del cache[alpha_key]
                stripped = True
        if stripped and not cache:
            del deployment["modelCache"]
            if not deployment:
                del out["deployment"]
    if _dict(out.get("planner")):
        del out["planner"]
    return out


def _write_blob(beta: Json, blob: Json) -> bool:
    """Writes v1beta1's typed fields into a v1alpha1 blob; True when it wrote anything."""
    wrote = False
    sla = _dict(beta.get("sla")) or {}
    workload = _dict(beta.get("workload")) or {}
    typed_sla: Json = {key: sla[key] for key in ("ttft", "itl", "optimizationType") if key in sla}
    typed_sla.update({key: workload[key] for key in ("isl", "osl") if key in workload})
    if typed_sla:
        _child(blob, "sla").update(typed_sla)
        wrote = True
    cache = _dict(beta.get("modelCache"))
    if cache is not None:
        typed_cache = {
            alpha_key: cache[beta_key]
            for alpha_key, beta_key in _MODEL_CACHE_KEYS
            if _nonempty_str(cache.get(beta_key))
        }
        if typed_cache:
            _child(_child(blob, "deployment"), "modelCache").update(typed_cache)
            wrote = True
    planner = _dict((_dict(beta.get("features")) or {}).get("planner"))
    if planner:
        blob["planner"] = copy_tree(planner)
        wrote = True
    return wrote


# --- the profiling Job (v1beta1) <-> profilingConfig's pod fields (v1alpha1) ---------------------------


def _containers(job: Json) -> list[Any] | None:
    spec = _dict((_dict(job.get("template")) or {}).get("spec"))
    containers = spec.get("containers") if spec is not None else None
    return containers if isinstance(containers, list) else None


def _profiler_index(containers: list[Any]) -> int:
    for index, container in enumerate(containers):
        if isinstance(container, dict) and container.get("name") == PROFILER:
            return index
    return -1


def _profiler_resources(pod: Json) -> object | None:
    """The resources of the pod's `profiler` container, None when it has none."""
    containers = pod.get("containers")
    if not isinstance(containers, list):
        return None
    index = _profiler_index(containers)
    if index < 0 or "resources" not in containers[index]:
        return None
    resources: object = containers[index]["resources"]
    return resources


def _rename_legacy_profiler(job: Json) -> None:
    """Older upstream payloads named the profiler container "": rename it when no `profiler` exists.

    Applied to payloads only, never to a live object (a live container named "" is the user's)."""
    containers = _containers(job)
    if containers is None or _profiler_index(containers) >= 0:
        return
    for container in containers:
        if isinstance(container, dict) and container.get("name") == "":
            container["name"] = PROFILER
            return


def _pod_fields(config: Json) -> Json:
    """The v1alpha1 profilingConfig fields that live in the profiling pod in v1beta1."""
    return {key: config[key] for key in ("resources", "tolerations", "nodeSelector") if key in config}


def _merge_pod_fields(job: Json, fields: Json) -> None:
    """Puts v1alpha1's pod fields into a v1beta1 profiling Job (created as needed)."""
    pod = _child(_child(job, "template"), "spec")
    if "resources" in fields:
        containers = pod.get("containers")
        if not isinstance(containers, list):
            containers = []
            pod["containers"] = containers
        index = _profiler_index(containers)
        if index < 0:
            containers.append({"name": PROFILER})
            index = len(containers) - 1
        containers[index]["resources"] = copy_tree(fields["resources"])
    for key in ("tolerations", "nodeSelector"):
        if key in fields:
            pod[key] = copy_tree(fields[key])


def _job_remainder(job: Json) -> Json | None:
    """What v1alpha1 cannot hold of a v1beta1 profiling Job: all but the profiler's resources, the
    tolerations and the node selector. None when only the skeleton the v1alpha1 fields rebuild is
    left."""
    out = copy_tree(job)
    projected = False
    pod = _dict((_dict(out.get("template")) or {}).get("spec"))
    if pod is not None:
        containers = pod.get("containers")
        if isinstance(containers, list):
            index = _profiler_index(containers)
            if index >= 0 and "resources" in containers[index]:
                projected = True
                del containers[index]["resources"]
                # A sole profiler container that only carried resources is rebuilt by the merge;
                # with other containers beside it, its name-only entry keeps its place in the list.
                if containers[index] == {"name": PROFILER} and len(containers) == 1:
                    del pod["containers"]
        for key in ("tolerations", "nodeSelector"):
            if key in pod:
                projected = True
                del pod[key]
    if projected and out == {"template": {"spec": {}}}:
        return None
    return out


# --- spec ----------------------------------------------------------------------------------------


def _spec_to_beta(alpha: Json) -> tuple[Json, Json]:
    """v1alpha1 spec -> (v1beta1 spec from the live fields, sparse v1alpha1-only spec)."""
    beta: Json = {}
    save: Json = {}
    config = _dict(alpha.get("profilingConfig")) or {}
    overrides = _dict(alpha.get("deploymentOverrides"))
    for key in ("model", "backend", "runtimeVersionOverride"):
        if key in alpha:
            beta[key] = copy_tree(alpha[key])
    beta["autoApply"] = alpha.get("autoApply", False)
    # Upstream falls back to deploymentOverrides.workersImage when profilerImage is empty; this
    # v1alpha1 requires profilerImage, so only a v1beta1 object without image lacks it, and then a
    # workersImage kept in its payload must not become its image.
    if "profilerImage" in config:
        beta["image"] = config["profilerImage"]
    if alpha.get("useMocker") is True:
        _child(beta, "features")["mocker"] = {"enabled": True}

    blob = config.get("config")
    if isinstance(blob, dict):
        _project_blob(blob, beta)
        remainder = _strip_blob(blob)
        if remainder or not blob:
            _child(save, "profilingConfig")["config"] = remainder
    elif "config" in config:
        _child(save, "profilingConfig")["config"] = copy_tree(blob)

    pod_fields = _pod_fields(config)
    if pod_fields:
        _merge_pod_fields(_child(_child(beta, "overrides"), "profilingJob"), pod_fields)

    if "enableGpuDiscovery" in alpha:
        save["enableGpuDiscovery"] = alpha["enableGpuDiscovery"]
    for key in ("configMapRef", "outputPVC"):
        if key in config:
            _child(save, "profilingConfig")[key] = copy_tree(config[key])
    if overrides is not None:
        save["deploymentOverrides"] = copy_tree(overrides)
    return beta, save


def _restore_beta_spec(beta: Json, restored: Json) -> None:
    """v1beta1-only fields from a decoded spec annotation; live fields are never replaced."""
    overrides = _dict(restored.get("overrides"))
    job = _dict(overrides.get("profilingJob")) if overrides is not None else None
    if job is not None:

        def merge_job() -> None:
            saved = copy_tree(job)
            _rename_legacy_profiler(saved)
            live_overrides = _child(beta, "overrides")
            live = _dict(live_overrides.get("profilingJob"))
            if live is not None:
                # The saved Job is the base; the live pod fields go on top of it.
                pod = _dict((_dict(live.get("template")) or {}).get("spec")) or {}
                fields: Json = {}
                resources = _profiler_resources(pod)
                if resources is not None:
                    fields["resources"] = resources
                for key in ("tolerations", "nodeSelector"):
                    if key in pod:
                        fields[key] = pod[key]
                _merge_pod_fields(saved, fields)
            live_overrides["profilingJob"] = saved

        _guarded("overrides.profilingJob", merge_job)
    _guarded("spec", lambda: _fill(beta, _without_job(restored)))


def _without_job(spec: Json) -> Json:
    overrides = _dict(spec.get("overrides"))
    if overrides is None or "profilingJob" not in overrides:
        return spec
    out = dict(spec)
    out["overrides"] = {key: value for key, value in overrides.items() if key != "profilingJob"}
    if not out["overrides"]:
        del out["overrides"]
    return out


def _spec_to_alpha(beta: Json) -> tuple[Json, Json]:
    """v1beta1 spec -> (v1alpha1 spec from the live fields, sparse v1beta1-only spec)."""
    alpha: Json = {}
    save: Json = {}
    for key in ("model", "backend", "runtimeVersionOverride"):
        if key in beta:
            alpha[key] = copy_tree(beta[key])
    alpha["autoApply"] = beta.get("autoApply", True)
    features = _dict(beta.get("features")) or {}
    mocker = _dict(features.get("mocker"))
    alpha["useMocker"] = mocker is not None and mocker.get("enabled") is True
    config: Json = {}
    alpha["profilingConfig"] = config
    if "image" in beta:
        config["profilerImage"] = beta["image"]

    overrides = _dict(beta.get("overrides")) or {}
    job = _dict(overrides.get("profilingJob"))
    if job is not None:
        pod = _dict((_dict(job.get("template")) or {}).get("spec")) or {}
        resources = _profiler_resources(pod)
        if resources is not None:
            config["resources"] = copy_tree(resources)
        for key in ("tolerations", "nodeSelector"):
            if key in pod:
                config[key] = copy_tree(pod[key])
        remainder = _job_remainder(job)
        if remainder is not None:
            _child(_child(save, "overrides"), "profilingJob").update(remainder)

    for key in ("hardware", "searchStrategy"):
        if key in beta:
            save[key] = copy_tree(beta[key])
    workload = _dict(beta.get("workload")) or {}
    for key in ("concurrency", "requestRate"):
        if key in workload:
            _child(save, "workload")[key] = workload[key]
    sla = _dict(beta.get("sla")) or {}
    if "e2eLatency" in sla:
        _child(save, "sla")["e2eLatency"] = sla["e2eLatency"]
    if "dgd" in overrides:
        _child(save, "overrides")["dgd"] = copy_tree(overrides["dgd"])
    if mocker is not None and mocker.get("enabled") is not True:
        _child(save, "features")["mocker"] = copy_tree(mocker)
    return alpha, save


def _blob_for_alpha(beta: Json, restored: Json | None) -> Json | None:
    """v1alpha1's profilingConfig.config: the saved remainder (typed leaves dropped, so a stale one
    never comes back) with the live typed fields written on top."""
    blob: Json | None = None
    saved_blob: object = None
    if restored is not None:
        saved = _dict(restored.get("profilingConfig")) or {}
        if isinstance(saved.get("config"), dict):
            saved_blob = saved["config"]
            blob = _strip_blob(saved["config"])
        elif "config" in saved:
            return None  # an opaque non-object config; put back by the caller as saved
    scratch = copy_tree(blob) if blob is not None else {}
    if _write_blob(beta, scratch):
        blob = scratch
    if blob is not None and restored is not None:
        _drop_server_defaults(blob, beta, restored, saved_blob)
        if not blob and saved_blob is None:
            return None  # only dropped defaults were in it: the v1alpha1 object had no config
    return blob


def _at(tree: object, path: tuple[str, ...]) -> tuple[bool, object]:
    """(whether `path` is in `tree`, its value)."""
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return False, None
        tree = tree[key]
    return True, tree


def _drop_server_defaults(blob: Json, beta: Json, restored: Json, saved: object) -> None:
    """The payload's `_SERVER_DEFAULTS` list names v1beta1 defaults the v1alpha1 blob never held
    (see `_default_leaves`): each leaf goes while the v1beta1 value is still that default, and so
    do the parents it leaves empty that the saved blob did not have."""
    names = restored.get(_SERVER_DEFAULTS)
    if not isinstance(names, list):
        return
    for (parent, key, default), path in _LEAF_DEFAULTS.items():
        _, live = _at(beta, (parent, key))
        if f"{parent}.{key}" in names and live == default and _at(blob, path)[0]:
            held, value = _at(saved, path)
            if held:  # a value v1beta1 could not type (an empty string) stays as it was
                _at(blob, path[:-1])[1][path[-1]] = copy_tree(value)  # type: ignore[index]
            else:
                _prune(blob, path, saved)


def _prune(tree: Json, path: tuple[str, ...], saved: object) -> None:
    """Removes the leaf at `path` and every parent it leaves empty; one `saved` holds is put back as
    saved."""
    parents: list[Json] = [tree]
    for key in path[:-1]:
        parents.append(parents[-1][key])
    parents[-1].pop(path[-1], None)
    for depth in range(len(path) - 2, -1, -1):
        if parents[depth + 1]:
            break
        held, value = _at(saved, path[: depth + 1])
        if held:  # the saved blob's own (empty or null) parent, as it was
            parents[depth][path[depth]] = copy_tree(value)
            break
        del parents[depth][path[depth]]


def _default_leaves(beta: Json, save: Json) -> None:
    """v1beta1's leaf defaults, as the API server sets them on every v1beta1 write, for a request
    read from v1alpha1 (a `null` from the payload, a v1beta1 object that had none, is removed).

    The v1alpha1 blob did not hold them: the payload names them (`_SERVER_DEFAULTS`), so the way
    back leaves them out. Without both, the storage migration's write adds them, moving
    metadata.generation, and a v1alpha1 reader sees values its user never wrote."""
    added: list[str] = []
    for (parent, key, default), _ in _LEAF_DEFAULTS.items():
        holder = _dict(beta.get(parent))
        if holder is None:
            continue
        if key in holder and holder[key] is None:
            del holder[key]
        elif key not in holder:
            holder[key] = default
            added.append(f"{parent}.{key}")
    if added:
        save[_SERVER_DEFAULTS] = added


def _save_leaf_defaults(beta: Json, restored: Json | None, save: Json) -> None:
    """What the payload must say of the leaf defaults beside a v1beta1 spec: `null` for one it lacks
    under a present parent; nothing for one the v1alpha1 blob left out as a server default."""
    names = (restored or {}).get(_SERVER_DEFAULTS)
    for (parent, key, default), _ in _LEAF_DEFAULTS.items():
        holder = _dict(beta.get(parent))
        if holder is None:
            continue
        if key not in holder:
            _child(save, parent)[key] = None
            continue
        saved_parent = _dict(save.get(parent))
        dropped = isinstance(names, list) and f"{parent}.{key}" in names and holder[key] == default
        if dropped and saved_parent is not None and saved_parent.get(key) == default:
            del saved_parent[key]
            if not saved_parent:
                del save[parent]


def _restore_alpha_spec(alpha: Json, restored: Json) -> None:
    """v1alpha1-only fields from a decoded spec annotation; live fields are never replaced."""

    def fill() -> None:
        saved_config = _dict(restored.get("profilingConfig")) or {}
        config = _child(alpha, "profilingConfig")
        if (
            "config" in saved_config
            and not isinstance(saved_config["config"], dict)
            and "config" not in config
        ):
            config["config"] = copy_tree(saved_config["config"])
        _fill(config, {key: value for key, value in saved_config.items() if key != "config"})
        _fill(alpha, restored, skip=("profilingConfig", _SERVER_DEFAULTS))

    _guarded("spec", fill)


def _convert_spec_to_alpha(beta: Json, restored: Json | None, namespace: object) -> tuple[Json, Json]:
    alpha, save = _spec_to_alpha(beta)
    blob = _blob_for_alpha(beta, restored)
    if blob is not None:
        alpha["profilingConfig"]["config"] = blob
    if restored is not None:
        _restore_alpha_spec(alpha, restored)
    return alpha, save


def _convert_spec_to_beta(alpha: Json, restored: Json | None) -> tuple[Json, Json]:
    beta, save = _spec_to_beta(alpha)
    if restored is not None:
        _restore_beta_spec(beta, restored)
    return beta, save


# --- status --------------------------------------------------------------------------------------


def _state_phase(state: object, deployment: object) -> str | None:
    """The v1beta1 phase of a v1alpha1 state: Ready with a created graph is Deployed, "" has none."""
    if state == "":
        return None
    if state == "Ready":
        created = isinstance(deployment, dict) and deployment.get("created") is True
        return "Deployed" if created else "Ready"
    if state == "DeploymentDeleted":
        return "Ready"
    return _STATE_TO_PHASE.get(state, "Pending") if isinstance(state, str) else "Pending"


def _has_phase(state: object) -> bool:
    return isinstance(state, str) and state in _STATE_TO_PHASE


def _state_matches(state: object, deployment: object, phase: object) -> bool:
    return _state_phase(state, deployment) == phase or (phase == "Deployed" and state == "Ready")


def _status_to_beta(alpha: Json) -> tuple[Json, Json]:
    beta: Json = {}
    save: Json = {}
    deployment = alpha.get("deployment")
    if "state" in alpha:
        phase = _state_phase(alpha["state"], deployment)
        if phase is not None:
            beta["phase"] = phase
    for key in ("observedGeneration", "conditions"):
        if key in alpha:
            beta[key] = copy_tree(alpha[key])
    if "generatedDeployment" in alpha:
        _child(beta, "profilingResults")["selectedConfig"] = copy_tree(alpha["generatedDeployment"])
    if isinstance(deployment, dict) and "name" in deployment:
        beta["dgdName"] = deployment["name"]

    for key in ("backend", "profilingResults"):
        if key in alpha:
            save[key] = copy_tree(alpha[key])
    state = alpha.get("state")
    if "state" in alpha and not _has_phase(state):
        save["state"] = state
    state_without_phase = "state" in alpha and state != "" and not _has_phase(state)
    if deployment is not None and (
        not isinstance(deployment, dict) or set(deployment) != {"name"} or state_without_phase
    ):
        if "state" in alpha:
            save["state"] = state
        save["deployment"] = copy_tree(deployment)
    return beta, save


def _restore_beta_status(beta: Json, restored: Json, alpha: Json) -> None:
    def rules() -> None:
        phase = beta.get("phase")
        dgd = beta.get("dgdName", "")
        if (
            restored.get("phase") == "Deployed"
            and phase == "Ready"
            and _state_matches(alpha.get("state"), alpha.get("deployment"), "Deployed")
            and restored.get("dgdName", "") == dgd
        ):
            beta["phase"] = "Deployed"
        # Upstream keeps the profiling step only while Profiling and then writes no phase beside it;
        # this converter keeps it in every phase and names the phase it belongs to ("" for none).
        if beta.get("phase", "") == restored.get("phase", "Profiling"):
            for key in ("profilingPhase", "profilingJobName"):
                if key in restored:
                    beta[key] = restored[key]
        if "deploymentInfo" in restored and restored.get("dgdName", "") == dgd:
            beta["deploymentInfo"] = copy_tree(restored["deploymentInfo"])

    _guarded("status", rules)
    guarded_keys = ("phase", "profilingPhase", "profilingJobName", "dgdName", "deploymentInfo")
    _guarded("status", lambda: _fill(beta, restored, skip=guarded_keys))


def _status_to_alpha(beta: Json) -> tuple[Json, Json]:
    alpha: Json = {}
    save: Json = {}
    phase = beta.get("phase")
    if "phase" in beta:
        alpha["state"] = _PHASE_TO_STATE.get(phase, "Pending") if isinstance(phase, str) else "Pending"
    for key in ("observedGeneration", "conditions"):
        if key in beta:
            alpha[key] = copy_tree(beta[key])
    results = _dict(beta.get("profilingResults"))
    if results is not None and "selectedConfig" in results:
        alpha["generatedDeployment"] = copy_tree(results["selectedConfig"])
    if "dgdName" in beta:
        alpha["deployment"] = {"name": beta["dgdName"]}

    if "profilingPhase" in beta or "profilingJobName" in beta:
        for key in ("profilingPhase", "profilingJobName"):
            if key in beta:
                save[key] = beta[key]
        if phase != "Profiling":
            save["phase"] = phase if isinstance(phase, str) else ""
    if results is not None and results.get("pareto"):
        save["profilingResults"] = {"pareto": copy_tree(results["pareto"])}
    if "deploymentInfo" in beta:
        save["deploymentInfo"] = copy_tree(beta["deploymentInfo"])
        if "dgdName" in beta:
            save["dgdName"] = beta["dgdName"]
    return alpha, save


def _save_deployed(beta: Json, alpha: Json, save: Json) -> None:
    """Deployed reads as Ready in v1alpha1 unless the (restored) deployment says it was created."""
    phase = beta.get("phase")
    if phase == "Deployed" and _state_phase(alpha.get("state"), alpha.get("deployment")) != phase:
        save["phase"] = phase
        if "dgdName" in beta:
            save["dgdName"] = beta["dgdName"]


def _reads_deployed_unlike(state: object, deployment: object, phase: object) -> bool:
    """Whether `deployment` beside `state` reads as Deployed when the v1beta1 phase is something else:
    a deployment saved before the first reconcile (state "") that says `created` must not turn a
    later Ready into Deployed."""
    return _state_phase(state, deployment) == "Deployed" and phase != "Deployed"


def _same_graph(saved_deployment: object, dgd: object) -> bool:
    """DeploymentDeleted speaks of one graph: it is stale once the live status names another."""
    if saved_deployment is None:
        return dgd == ""
    return isinstance(saved_deployment, dict) and saved_deployment.get("name", "") == dgd


def _derived_backend(status: object, spec: object) -> object | None:
    """The v1alpha1 status.backend a v1beta1 object implies: its spec's backend once a status took
    the spec in (observedGeneration); None when it implies none (no spec: a status converted alone)."""
    if not isinstance(status, dict) or "observedGeneration" not in status or not isinstance(spec, dict):
        return None
    backend = spec.get("backend")
    return backend if _nonempty_str(backend) else None


def _default_search_strategy(beta: Json) -> None:
    """v1beta1's default searchStrategy, as the API server sets it on every v1beta1 write; a `null`
    from the payload (the v1beta1 object had none) is removed instead.

    Without it, a request stored as v1alpha1 reads without one in v1beta1 and the storage migration's
    write adds the default: metadata.generation moves, and a request past Pending reads a moved
    generation as an edit of its frozen spec."""
    if "searchStrategy" in beta and beta["searchStrategy"] is None:
        del beta["searchStrategy"]
    elif "searchStrategy" not in beta:
        beta["searchStrategy"] = DEFAULT_SEARCH_STRATEGY


def _save_search_strategy(beta: Json, save: Json) -> None:
    """What the payload must say of searchStrategy: nothing for the default (the way back sets it),
    `null` for none."""
    if "searchStrategy" not in beta:
        save["searchStrategy"] = None
    elif save.get("searchStrategy") == beta["searchStrategy"] == DEFAULT_SEARCH_STRATEGY:
        del save["searchStrategy"]


def _alpha_status(beta: Json, spec: object, restored: Json | None) -> tuple[Json, Json]:
    """v1beta1 status (with its object's v1beta1 spec) -> (v1alpha1 status, sparse v1beta1-only status)."""
    alpha, save = _status_to_alpha(beta)
    derived = _derived_backend(beta, spec)
    if derived is not None:
        alpha["backend"] = derived
    if restored is not None:
        _restore_alpha_status(alpha, restored, beta)
    return alpha, save


def _save_backend(alpha: Json, beta: Json, spec: object, save: Json) -> None:
    """What the payload must say of status.backend beside a v1beta1 status that implies one: nothing
    when it is the one implied, `null` when the v1alpha1 status has none."""
    derived = _derived_backend(beta, spec)
    if derived is None:
        return
    if "backend" not in alpha:
        save["backend"] = None
    elif alpha["backend"] == derived:
        save.pop("backend", None)


def _restore_alpha_status(alpha: Json, restored: Json, beta: Json) -> None:
    def rules() -> None:
        phase = beta.get("phase")
        dgd = beta.get("dgdName", "")
        saved_deployment = restored.get("deployment")
        if isinstance(restored.get("state"), str):
            state = restored["state"]
            if state == "":
                # v1alpha1's state before the first reconcile: a v1beta1 status without a phase.
                if phase is None:
                    alpha["state"] = ""
            elif _state_matches(state, saved_deployment, phase) and (
                state != "DeploymentDeleted" or _same_graph(saved_deployment, dgd)
            ):
                alpha["state"] = state
        if saved_deployment is not None:
            name = saved_deployment.get("name", "") if isinstance(saved_deployment, dict) else None
            state = restored.get("state", "")
            if (
                name == dgd
                and (state == "" or _state_matches(state, saved_deployment, phase))
                and not _reads_deployed_unlike(alpha.get("state"), saved_deployment, phase)
            ):
                alpha["deployment"] = copy_tree(saved_deployment)

    def backend() -> None:
        # The payload's word wins over the backend the spec implies: null means none.
        if "backend" in restored:
            if restored["backend"] is None:
                alpha.pop("backend", None)
            else:
                alpha["backend"] = copy_tree(restored["backend"])

    _guarded("status", rules)
    _guarded("status", backend)
    _guarded("status", lambda: _fill(alpha, restored, skip=("state", "deployment", "backend")))


# --- objects -------------------------------------------------------------------------------------


def _payloads(out: Json, restore: bool) -> tuple[Json | None, Json | None]:
    """Takes the reserved annotations off `out`; their decoded payloads when `restore` is true."""
    spec_raw, status_raw = _taken(out)
    if not restore:
        return None, None
    spec = preserve.decode_spec(spec_raw, preserve.DGDR_SPEC) if spec_raw else None
    status = preserve.decode_status(status_raw, preserve.DGDR_STATUS) if status_raw else None
    return spec, status


def _beta(obj: Mapping[str, Any], restore: bool) -> Json:
    out = copy_tree(dict(obj))
    out["apiVersion"] = V1BETA1
    restored_spec, restored_status = _payloads(out, restore)
    namespace = (_dict(out.get("metadata")) or {}).get("namespace")
    spec_save: Json = {}
    status_save: Json = {}

    alpha_spec = out.get("spec")
    if isinstance(alpha_spec, dict):
        beta_spec, spec_save = _convert_spec_to_beta(alpha_spec, restored_spec)
        _default_search_strategy(beta_spec)
        _default_leaves(beta_spec, spec_save)
        # What the way back would not rebuild from the v1beta1 fields and this annotation.
        back, _ = _convert_spec_to_alpha(beta_spec, spec_save, namespace)
        _merge(spec_save, _missing(alpha_spec, back))
        out["spec"] = beta_spec

    alpha_status = out.get("status")
    if isinstance(alpha_status, dict):
        beta_status, status_save = _status_to_beta(alpha_status)
        if restored_status is not None:
            _restore_beta_status(beta_status, restored_status, alpha_status)
        _save_backend(alpha_status, beta_status, out.get("spec"), status_save)
        back, _ = _alpha_status(beta_status, out.get("spec"), status_save)
        _merge(status_save, _missing(alpha_status, back))
        out["status"] = beta_status

    _put(out, spec_save, status_save)
    return out


def _alpha(obj: Mapping[str, Any], restore: bool) -> Json:
    out = copy_tree(dict(obj))
    out["apiVersion"] = V1ALPHA1
    restored_spec, restored_status = _payloads(out, restore)
    namespace = (_dict(out.get("metadata")) or {}).get("namespace")
    spec_save: Json = {}
    status_save: Json = {}

    beta_spec = out.get("spec")
    if isinstance(beta_spec, dict):
        alpha_spec, spec_save = _convert_spec_to_alpha(beta_spec, restored_spec, namespace)
        back, _ = _convert_spec_to_beta(alpha_spec, spec_save)
        _merge(spec_save, _missing(beta_spec, back))
        _save_search_strategy(beta_spec, spec_save)
        _guarded("spec", lambda: _save_leaf_defaults(beta_spec, restored_spec, spec_save))
        out["spec"] = alpha_spec

    beta_status = out.get("status")
    if isinstance(beta_status, dict):
        alpha_status, status_save = _alpha_status(beta_status, beta_spec, restored_status)
        _save_deployed(beta_status, alpha_status, status_save)
        back, _ = _status_to_beta(alpha_status)
        _restore_beta_status(back, status_save, alpha_status)
        _merge(status_save, _missing(beta_status, back))
        out["status"] = alpha_status

    _put(out, spec_save, status_save)
    return out


def _has_payload(obj: Mapping[str, Any]) -> bool:
    annotations = (_dict(obj.get("metadata")) or {}).get("annotations")
    return isinstance(annotations, dict) and any(key in annotations for key in _RESERVED[:2])


def _schema(api_version: str) -> Json:
    return schemas.root(api_version, KIND)


def _type_errors(value: object, schema: Mapping[str, Any], path: str, out: set[str]) -> None:
    """Paths in `value` whose JSON type (or enum) the structural `schema` does not allow."""
    if value is None or "anyOf" in schema or schema.get("x-kubernetes-int-or-string"):
        return
    kind = schema.get("type")
    fits = (
        {
            "object": isinstance(value, dict),
            "array": isinstance(value, list),
            "string": isinstance(value, str),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, int | float) and not isinstance(value, bool),
            "boolean": isinstance(value, bool),
        }.get(kind, True)
        if isinstance(kind, str)
        else True
    )
    if not fits or ("enum" in schema and value not in schema["enum"]):
        out.add(path)
        return
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub = properties.get(key, extra if isinstance(extra, dict) else None)
            if sub is not None:
                _type_errors(item, sub, f"{path}.{key}", out)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _type_errors(item, schema["items"], f"{path}[{index}]", out)


def _error_places(api_version: str, obj: Json) -> set[str]:
    out: set[str] = set()
    for key in ("spec", "status"):
        if key in obj:
            _type_errors(obj[key], _schema(api_version)["properties"][key], key, out)
    return out


def _checked(
    obj: Mapping[str, Any], convert: Callable[[Mapping[str, Any], bool], Json], api_version: str
) -> Json:
    """`convert` with the payloads restored, unless they put a value of the wrong shape somewhere the
    live fields alone do not: then the payloads are damaged, and the fields are converted without them."""
    if not _has_payload(obj):
        return convert(obj, True)
    plain = convert(obj, False)
    try:
        out = convert(obj, True)
    except (TypeError, AttributeError, KeyError, ValueError, IndexError) as err:
        # A payload of a shape no rule expected: the fields convert without it.
        log.warning("ignoring the conversion annotations of DynamoGraphDeploymentRequest: %r", err)
        return plain
    damaged = _error_places(api_version, out) - _error_places(api_version, plain)
    if damaged:
        log.warning(
            "ignoring the conversion annotations of DynamoGraphDeploymentRequest %s: they hold values "
            "of the wrong type at %s",
            (_dict(obj.get("metadata")) or {}).get("name"),
            ", ".join(sorted(damaged)),
        )
        return plain
    return out


def to_v1beta1(obj: dict[str, Any]) -> dict[str, Any]:
    """The v1beta1 form of a v1alpha1 request (`obj` is not changed)."""
    return _checked(obj, _beta, V1BETA1)


def to_v1alpha1(obj: dict[str, Any]) -> dict[str, Any]:
    """The v1alpha1 form of a v1beta1 request (`obj` is not changed)."""
    return _checked(obj, _alpha, V1ALPHA1)
