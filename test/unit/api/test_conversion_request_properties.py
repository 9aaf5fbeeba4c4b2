"""Property tests: a DynamoGraphDeploymentRequest survives v1alpha1 -> v1beta1 -> v1alpha1 and
v1beta1 -> v1alpha1 -> v1beta1 unchanged, for objects of every shape either schema allows.

The objects are generated as the API server hands them to the webhook: valid for their version's
schema, with the schema's defaults filled in (an object of the model, dumped whole).
"""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.api.conversion import request
from dynamo_operator.api.v1alpha1.request import DynamoGraphDeploymentRequest as AlphaRequest
from dynamo_operator.api.v1beta1.request import DynamoGraphDeploymentRequest as BetaRequest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

NAMESPACE = "team-a"
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(alphabet="abcXYZ-_./:0123456789", max_size=8)
name = st.text(alphabet="abcdefghij-", min_size=1, max_size=8)
number = st.integers(-(10**6), 10**6) | st.floats(allow_nan=False, allow_infinity=False, width=32)
json_leaf = st.none() | st.booleans() | number | text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_object = st.dictionaries(text, json_value, max_size=3)
int32 = st.integers(0, 2**31 - 1)


def optional(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A dict in which each of `fields` may be absent."""
    return st.fixed_dictionaries({}, optional=fields)


def string_map() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(name, text, max_size=2)


resources = optional(
    limits=st.dictionaries(st.sampled_from(["cpu", "memory"]), st.just("1")), requests=string_map()
)
tolerations = st.lists(
    optional(key=name, operator=st.sampled_from(["Exists", "Equal"]), value=text), max_size=2
)
conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": name,
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "reason": name,
            "message": text,
            "lastTransitionTime": st.just("2026-01-02T03:04:05Z"),
        }
    ),
    max_size=2,
    unique_by=lambda condition: condition["type"],
)
graph = st.fixed_dictionaries(
    {"apiVersion": st.just("nvidia.com/v1beta1"), "kind": st.just("DynamoGraphDeployment")},
    optional={"metadata": st.fixed_dictionaries({}, optional={"name": name}), "spec": json_object},
)


def metadata() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": name, "namespace": st.just(NAMESPACE)},
        optional={"labels": string_map(), "annotations": st.dictionaries(st.just("team"), text, min_size=1)},
    )


# --- v1alpha1 ------------------------------------------------------------------------------------

alpha_sla = st.dictionaries(
    st.sampled_from(["ttft", "itl", "isl", "osl", "optimizationType", "other"]),
    number | st.booleans() | st.sampled_from(["latency", "throughput", "fast"]) | st.just(3000.5),
    max_size=5,
)
alpha_model_cache = st.dictionaries(
    st.sampled_from(["pvcName", "modelPathInPvc", "pvcMountPath", "other"]), text | number, max_size=4
)
alpha_blob = st.fixed_dictionaries(
    {},
    optional={
        "sla": alpha_sla | json_value,
        "deployment": optional(modelCache=alpha_model_cache | json_value, model=text),
        "planner": json_object | json_value,
        "engine": json_object,
        "sweep": json_object,
    },
)
alpha_spec = st.fixed_dictionaries(
    {
        "model": name,
        "backend": st.sampled_from(["vllm", "sglang", "trtllm"]),
        "useMocker": st.booleans(),
        "enableGpuDiscovery": st.booleans(),
        "autoApply": st.booleans(),
        "profilingConfig": st.fixed_dictionaries(
            {"profilerImage": name},
            optional={
                "config": alpha_blob,
                "configMapRef": st.fixed_dictionaries({"name": name}, optional={"key": text}),
                "outputPVC": text,
                "resources": resources,
                "tolerations": tolerations,
            },
        ),
    },
    optional={
        "deploymentOverrides": optional(
            name=text,
            namespace=st.sampled_from(["", NAMESPACE]),
            labels=string_map(),
            annotations=string_map(),
            workersImage=text,
        )
    },
)
alpha_status = optional(
    state=st.sampled_from(["", "Pending", "Profiling", "Deploying", "Ready", "DeploymentDeleted", "Failed"]),
    backend=text,
    observedGeneration=int32,
    conditions=conditions,
    profilingResults=text,
    generatedDeployment=graph,
    deployment=optional(name=name, namespace=st.just(NAMESPACE), state=text, created=st.booleans()),
)
alpha_request = st.fixed_dictionaries(
    {
        "apiVersion": st.just("nvidia.com/v1alpha1"),
        "kind": st.just("DynamoGraphDeploymentRequest"),
        "metadata": metadata(),
        "spec": alpha_spec,
    },
    optional={"status": alpha_status},
)

# --- v1beta1 -------------------------------------------------------------------------------------

container = st.fixed_dictionaries(
    {"name": st.sampled_from(["profiler", "sidecar", "extra"])},
    optional={"image": text, "resources": resources, "args": st.lists(text, max_size=2)},
)
profiling_job = optional(
    backoffLimit=st.integers(0, 6),
    template=optional(
        metadata=optional(labels=string_map()),
        spec=optional(
            containers=st.lists(container, max_size=3, unique_by=lambda c: c["name"]),
            tolerations=tolerations,
            nodeSelector=string_map(),
            serviceAccountName=name,
        ),
    ),
)
beta_spec = st.fixed_dictionaries(
    {
        "model": name,
        "backend": st.sampled_from(["auto", "vllm", "sglang", "trtllm"]),
        "searchStrategy": st.sampled_from(["rapid", "thorough"]),
        "autoApply": st.booleans(),
    },
    optional={
        "image": text,
        "runtimeVersionOverride": st.sampled_from(["1.4.0", "0.0.1", "12.0.3"]),
        "modelCache": st.fixed_dictionaries(
            {"pvcMountPath": text}, optional={"pvcName": text, "pvcModelPath": text}
        ),
        "hardware": optional(
            gpuSku=st.sampled_from(["h100_sxm", "a100_pcie", "mi300"]),
            vramMb=number,
            totalGpus=int32,
            numGpusPerNode=int32,
            interconnect=text,
            rdma=st.booleans(),
        ),
        "workload": st.fixed_dictionaries(
            {"isl": int32, "osl": int32}, optional={"concurrency": number, "requestRate": number}
        ),
        "sla": optional(
            ttft=number,
            itl=number,
            e2eLatency=number,
            optimizationType=st.sampled_from(["latency", "throughput"]),
        ),
        "overrides": optional(profilingJob=profiling_job, dgd=graph),
        "features": optional(planner=json_object, mocker=optional(enabled=st.booleans())),
    },
)
beta_status = optional(
    phase=st.sampled_from(["Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"]),
    profilingPhase=st.sampled_from(["Initializing", "SweepingPrefill", "GeneratingDGD", "Done"]),
    dgdName=name,
    profilingJobName=name,
    conditions=conditions,
    profilingResults=optional(
        pareto=st.lists(st.fixed_dictionaries({"config": json_object}), max_size=2), selectedConfig=graph
    ),
    deploymentInfo=optional(replicas=int32, availableReplicas=int32),
    observedGeneration=int32,
)
beta_request = st.fixed_dictionaries(
    {
        "apiVersion": st.just("nvidia.com/v1beta1"),
        "kind": st.just("DynamoGraphDeploymentRequest"),
        "metadata": metadata(),
        "spec": beta_spec,
    },
    optional={"status": beta_status},
)


def _defaulted(model: type[AlphaRequest] | type[BetaRequest], obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the API server stores it: valid for its schema, with the schema's defaults."""
    parsed = model.model_validate(obj).to_dict()
    out = copy.deepcopy(obj)
    # The model is the schema: where it adds a default, the API server adds the same one.
    _add_defaults(out, parsed)
    return out


def _add_defaults(obj: dict[str, Any], full: dict[str, Any]) -> None:
    for key, value in full.items():
        if key not in obj:
            obj[key] = value
        elif isinstance(obj[key], dict) and isinstance(value, dict):
            _add_defaults(obj[key], value)


@PROPERTY
@given(alpha_request)
def test_v1alpha1_to_v1beta1_and_back_gives_back_the_same_object(obj: dict[str, Any]) -> None:
    stored = _defaulted(AlphaRequest, obj)
    beta = request.to_v1beta1(stored)
    assert beta["apiVersion"] == "nvidia.com/v1beta1"
    assert request.to_v1alpha1(beta) == stored


@PROPERTY
@given(beta_request)
def test_v1beta1_to_v1alpha1_and_back_gives_back_the_same_object(obj: dict[str, Any]) -> None:
    stored = _defaulted(BetaRequest, obj)
    alpha = request.to_v1alpha1(stored)
    assert alpha["apiVersion"] == "nvidia.com/v1alpha1"
    assert request.to_v1beta1(alpha) == stored


@PROPERTY
@given(alpha_request)
def test_conversion_leaves_its_input_unchanged(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    request.to_v1alpha1(request.to_v1beta1(obj))
    assert obj == before


@PROPERTY
@given(alpha_request)
def test_the_v1beta1_form_of_a_v1alpha1_object_is_valid_v1beta1(obj: dict[str, Any]) -> None:
    """Only values of the right type move into v1beta1's typed fields; the rest stays in the blob."""
    BetaRequest.model_validate(request.to_v1beta1(_defaulted(AlphaRequest, obj)))


def _without_payloads(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    annotations = out["metadata"].get("annotations", {})
    for key in (request.preserve.DGDR_SPEC, request.preserve.DGDR_STATUS):
        annotations.pop(key, None)
    if not annotations:
        out["metadata"].pop("annotations", None)
    return out


@PROPERTY
@given(beta_request, alpha_request)
def test_a_v1alpha1_edit_survives_a_stale_payload(obj: dict[str, Any], edit: dict[str, Any]) -> None:
    """v1beta1 -> v1alpha1, whose fields are then all edited (the payload left as it was): the edited
    object goes through v1beta1 and back unchanged but for the payloads."""
    alpha = request.to_v1alpha1(_defaulted(BetaRequest, obj))
    edited = _defaulted(AlphaRequest, edit)
    edited["metadata"] = alpha["metadata"]
    back = request.to_v1alpha1(request.to_v1beta1(edited))
    assert _without_payloads(back) == _without_payloads(edited)


# Found by this property: a deployment saved before the first reconcile (state "") that says
# `created` turned a later phase Ready into Deployed on the way back.
_CREATED_BEFORE_FIRST_RECONCILE = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeploymentRequest",
    "metadata": {"name": "a", "namespace": "team-a"},
    "spec": {"model": "a", "backend": "vllm", "profilingConfig": {"profilerImage": "a"}},
    "status": {"observedGeneration": 0, "state": "", "deployment": {"namespace": "team-a", "created": True}},
}
_READY_NOW = {
    "apiVersion": "nvidia.com/v1beta1",
    "kind": "DynamoGraphDeploymentRequest",
    "metadata": {"name": "a", "namespace": "team-a"},
    "spec": {"model": "a", "backend": "auto", "searchStrategy": "rapid", "autoApply": False},
    "status": {"phase": "Ready"},
}


@PROPERTY
@given(alpha_request, beta_request)
@example(_CREATED_BEFORE_FIRST_RECONCILE, _READY_NOW)
def test_a_v1beta1_edit_survives_a_stale_payload(obj: dict[str, Any], edit: dict[str, Any]) -> None:
    """The same the other way: v1alpha1 -> v1beta1, every field edited, the payload left stale."""
    beta = request.to_v1beta1(_defaulted(AlphaRequest, obj))
    edited = _defaulted(BetaRequest, edit)
    edited["metadata"] = beta["metadata"]
    back = request.to_v1beta1(request.to_v1alpha1(edited))
    assert _without_payloads(back) == _without_payloads(edited)


SPEC_KEYS = st.sampled_from(
    [
        "hardware",
        "workload",
        "sla",
        "overrides",
        "features",
        "searchStrategy",
        "modelCache",
        "runtimeVersionOverride",
        "profilingConfig",
        "deploymentOverrides",
        "enableGpuDiscovery",
        "model",
    ]
)
STATUS_KEYS = st.sampled_from(
    [
        "phase",
        "state",
        "dgdName",
        "deployment",
        "deploymentInfo",
        "profilingResults",
        "profilingPhase",
        "backend",
    ]
)
junk_spec = st.dictionaries(SPEC_KEYS, json_value, max_size=4).map(lambda spec: {"version": 1, "spec": spec})
junk_status = st.dictionaries(STATUS_KEYS, json_value, max_size=4)


@PROPERTY
@given(beta_request, alpha_request, junk_spec, junk_status)
def test_payloads_of_any_shape_never_fail_a_conversion(
    beta: dict[str, Any], alpha: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]
) -> None:
    """Whatever JSON sits in the reserved annotations, both directions convert and give objects whose
    typed fields have the types their schema says."""
    payloads = {
        request.preserve.DGDR_SPEC: request.preserve.dumps(spec),
        request.preserve.DGDR_STATUS: request.preserve.dumps(status),
    }
    for obj, convert, source, target in (
        (beta, request.to_v1alpha1, BetaRequest, request.V1ALPHA1),
        (alpha, request.to_v1beta1, AlphaRequest, request.V1BETA1),
    ):
        stored = _defaulted(source, obj)
        stored["metadata"]["annotations"] = dict(payloads)
        out = convert(stored)
        plain = convert({**stored, "metadata": {"name": "a", "namespace": NAMESPACE}})
        assert request._error_places(target, out) <= request._error_places(target, plain)


junk_block = json_value | st.dictionaries(
    st.sampled_from(
        ["config", "sla", "deployment", "modelCache", "planner", "mocker", "profilingJob", "template"]
    ),
    json_value
    | st.dictionaries(
        st.sampled_from(["spec", "containers", "resources", "name", "ttft", "isl"]), json_value
    ),
    max_size=3,
)
junk_live_spec = st.dictionaries(
    st.sampled_from(
        ["model", "backend", "autoApply", "useMocker", "profilingConfig", "deploymentOverrides", "image"]
    )
    | SPEC_KEYS,
    junk_block,
    max_size=6,
)
junk_live_status = st.dictionaries(
    STATUS_KEYS | st.sampled_from(["generatedDeployment", "conditions", "profilingJobName"]),
    junk_block,
    max_size=5,
)


@PROPERTY
@given(junk_live_spec, junk_live_status, st.sampled_from(["nvidia.com/v1alpha1", "nvidia.com/v1beta1"]))
def test_fields_of_any_shape_never_fail_a_conversion(
    spec: dict[str, Any], status: dict[str, Any], version: str
) -> None:
    """Objects no schema would admit (stored before a schema change, say) still convert both ways."""
    obj = {"apiVersion": version, "kind": "DynamoGraphDeploymentRequest", "metadata": {"name": "a"}}
    there, back = (
        (request.to_v1beta1, request.to_v1alpha1)
        if version.endswith("v1alpha1")
        else (request.to_v1alpha1, request.to_v1beta1)
    )
    back(there(obj | {"spec": spec, "status": status}))
