"""The worker hash equals upstream's byte for byte: Go's encoding/json of the stripped worker specs,
the canonical quantities it writes, and the hash values upstream's operator computed."""

from __future__ import annotations

import copy
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.api.v1alpha1 import DynamoComponentDeploymentSharedSpec
from dynamo_operator.internal.dynamo.rollout import gojson
from dynamo_operator.internal.dynamo.rollout.quantity import QuantityError, canonical_quantity
from dynamo_operator.internal.dynamo.rollout.workerhash import (
    NOT_HASHED,
    SHARED_SPEC,
    hash_input,
    structs,
    worker_hash,
)

Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[3]

# Worker services of upstream's examples (examples/*/deploy at df888f68), with the hash upstream's
# operator labelled their DCDs with (../shared/upstream-examples/golden).
VLLM_DECODE = {
    "envFromSecret": "hf-token-secret",
    "componentType": "worker",
    "subComponentType": "decode",
    "replicas": 1,
    "resources": {"limits": {"gpu": "1"}, "requests": {"custom": {"ephemeral-storage": "2Gi"}}},
    "extraPodSpec": {
        "mainContainer": {
            "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:my-tag",
            "workingDir": "/workspace/examples/backends/vllm",
            "command": ["python3", "-m", "dynamo.vllm"],
            "args": ["--model", "Qwen/Qwen3-0.6B", "--disaggregation-mode", "decode"],
        }
    },
}
VLLM_PREFILL = {
    **VLLM_DECODE,
    "subComponentType": "prefill",
    "extraPodSpec": {
        "mainContainer": {
            **VLLM_DECODE["extraPodSpec"]["mainContainer"],  # type: ignore[index]
            "args": [
                "--model",
                "Qwen/Qwen3-0.6B",
                "--disaggregation-mode",
                "prefill",
                "--kv-transfer-config",
                '{"kv_connector":"NixlConnector","kv_role":"kv_both"}',
            ],
        }
    },
}
_EXIT_0 = {"exec": {"command": ["/bin/sh", "-c", "exit 0"]}}
HELLO_WORLD = {
    "livenessProbe": {**_EXIT_0, "periodSeconds": 5, "timeoutSeconds": 2, "failureThreshold": 3},
    "readinessProbe": {
        **_EXIT_0,
        "initialDelaySeconds": 60,
        "periodSeconds": 60,
        "timeoutSeconds": 30,
        "failureThreshold": 10,
    },
    "componentType": "worker",
    "replicas": 1,
    "resources": {"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"cpu": "1", "memory": "4Gi"}},
    "extraPodSpec": {
        "mainContainer": {
            "image": "my-registry/dynamo:my-tag",
            "workingDir": "/workspace/examples/custom_backend/hello_world/",
            "command": ["/bin/sh", "-c"],
            "args": ["python3 hello_world.py"],
        }
    },
}
FAST_VIDEO = {
    "componentType": "worker",
    "replicas": 1,
    "sharedMemory": {"size": "8Gi"},
    "resources": {"limits": {"gpu": "1"}, "requests": {"gpu": "1"}},
    "envs": [
        {"name": "DYN_DISCOVERY_BACKEND", "value": "kubernetes"},
        {"name": "LD_LIBRARY_PATH", "value": ""},
        {"name": "TORCHINDUCTOR_CACHE_DIR", "value": "/cache/torchinductor"},
        {"name": "TRITON_CACHE_DIR", "value": "/cache/triton"},
        {"name": "HF_HOME", "value": "/root/.cache/huggingface"},
    ],
    "volumeMounts": [{"name": "huggingface-cache", "mountPoint": "/root/.cache/huggingface"}],
    "extraPodSpec": {
        "mainContainer": {
            "image": "my-registry/fastvideo-runtime:my-tag",
            "imagePullPolicy": "IfNotPresent",
            "workingDir": "/opt/app",
            "command": ["python", "worker.py"],
        }
    },
}
FRONTEND = {"componentType": "frontend", "replicas": 1, "extraPodSpec": {"mainContainer": {"image": "x"}}}


@pytest.mark.parametrize(
    ("services", "expected"),
    [
        pytest.param(
            {"Frontend": FRONTEND, "VllmDecodeWorker": VLLM_DECODE, "VllmPrefillWorker": VLLM_PREFILL},
            "837ea86f",
            id="vllm-disagg",
        ),
        pytest.param({"Frontend": FRONTEND, "HelloWorldWorker": HELLO_WORLD}, "16e13f0c", id="probes"),
        pytest.param({"Frontend": FRONTEND, "FastVideoWorker": FAST_VIDEO}, "f2bf14c6", id="shm-env-mounts"),
        pytest.param({"Frontend": FRONTEND}, hashlib.sha256(b"{}").hexdigest()[:8], id="no-workers"),
    ],
)
def test_worker_hash_equals_upstreams(services: dict[str, Obj], expected: str) -> None:
    """The hash upstream's operator computed for its own examples."""
    assert worker_hash(services) == expected


def test_fields_that_do_not_reach_pods_are_not_hashed() -> None:
    """Identity, scaling, metadata, ingress, model and EPP fields leave the hash alone."""
    base = {"W": copy.deepcopy(HELLO_WORLD)}
    changed = copy.deepcopy(base)
    changed["W"] |= {
        "annotations": {"a": "b"},
        "labels": {"c": "d"},
        "serviceName": "x",
        "subComponentType": "decode",
        "dynamoNamespace": "ns",
        "replicas": 7,
        "autoscaling": {"enabled": True},
        "scalingAdapter": {"enabled": True},
        "ingress": {"enabled": True, "host": "h"},
        "modelRef": {"name": "m"},
        "eppConfig": {"config": {}},
    }
    assert worker_hash(changed) == worker_hash(base)


def test_component_type_among_workers_does_not_change_the_hash() -> None:
    """worker, prefill and decode hash alike (the type is stripped)."""
    assert worker_hash({"W": {**HELLO_WORLD, "componentType": "prefill"}}) == worker_hash({"W": HELLO_WORLD})


def test_env_order_is_part_of_the_hash_as_upstream() -> None:
    """Go encodes a list in its order: a reordered env is another hash (upstream's behaviour too)."""
    reordered = {**FAST_VIDEO, "envs": list(reversed(FAST_VIDEO["envs"]))}  # type: ignore[call-overload]
    assert worker_hash({"W": reordered}) != worker_hash({"W": FAST_VIDEO})


def test_unknown_fields_are_dropped_as_go_drops_them() -> None:
    """A field the Go types do not have never reaches the hash."""
    assert worker_hash({"W": {**HELLO_WORLD, "notAField": 1}}) == worker_hash({"W": HELLO_WORLD})


def test_hash_input_is_the_go_encoding() -> None:
    """Exactly Go's bytes: struct field order, `name` and `resources` of a Container always written,
    an absent Quantity written "0", map keys sorted."""
    spec = {
        "componentType": "worker",
        "sharedMemory": {"disabled": True},
        "resources": {"requests": {"custom": {"b": "1", "a": "2"}}},
        "extraPodSpec": {"mainContainer": {"image": "i"}, "nodeSelector": {"z": "1", "y": "2"}},
    }
    assert hash_input({"W": spec}) == (
        '{"W":{"resources":{"requests":{"custom":{"a":"2","b":"1"}}},'
        '"sharedMemory":{"disabled":true,"size":"0"},'
        '"extraPodSpec":{"nodeSelector":{"y":"2","z":"1"},"mainContainer":{"name":"","image":"i","resources":{}}}}}'
    )


def test_extra_pod_spec_puts_containers_after_pod_fields_and_main_container_last() -> None:
    """upstream's ExtraPodSpec marshaller: PodSpec fields, then `containers`, then `mainContainer`."""
    spec = {
        "componentType": "worker",
        "extraPodSpec": {
            "mainContainer": {"image": "i"},
            "containers": [{"name": "side", "image": "s"}],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "hostnameOverride": "h",
        },
    }
    encoded = hash_input({"W": spec})
    positions = [
        encoded.index(f'"{k}"') for k in ("volumes", "hostnameOverride", "containers", "mainContainer")
    ]
    assert positions == sorted(positions)


def test_every_api_field_is_known_to_the_hash() -> None:
    """Each field of the service spec model is either hashed (listed with its Go type) or explicitly
    stripped: a new API field must be added to workerhash.DYNAMO_STRUCTS on purpose."""
    table = {name for name, _, _ in structs()[SHARED_SPEC]}
    fields = {f.alias or n for n, f in DynamoComponentDeploymentSharedSpec.model_fields.items()}
    assert fields - table == set()
    assert table >= NOT_HASHED


def test_fields_newer_than_the_v1_hash_leave_it_unchanged() -> None:
    """providerOverride, runtimeVersionOverride and minAvailable (v1alpha1 has a place for them now)
    do not change the hash of a spec: it stays what the releases that named workers by it computed."""
    base = {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "i"}}}
    newer = {
        **base,
        "providerOverride": {"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {}}},
        "runtimeVersionOverride": "1.4.0",
        "minAvailable": 2,
    }
    assert worker_hash({"W": newer}) == worker_hash({"W": base})


def test_core_types_come_from_upstreams_kubernetes_version() -> None:
    """The core/v1 table was generated from the k8s.io/api version hack/gostructs pins (upstream's)."""
    go_mod = (REPO / "hack" / "gostructs" / "go.mod").read_text()
    [pinned] = re.findall(r"k8s\.io/api (v[0-9.]+)", go_mod)
    assert gojson.core_v1_source() == f"k8s.io/api {pinned}"


# --- Go's encoding/json -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("a<b>&c", r'"a\u003cb\u003e\u0026c"', id="html-escaped"),
        pytest.param("line\nbreak\ttab", r'"line\nbreak\ttab"', id="short-escapes"),
        pytest.param("\b\f", r'"\b\f"', id="go-1.22-escapes"),
        pytest.param("\x01\x1f", r'"\u0001\u001f"', id="control"),
        pytest.param("\u2028\u2029", r'"\u2028\u2029"', id="js-separators"),
        pytest.param('q"b\\', r'"q\"b\\"', id="quote-backslash"),
        pytest.param("héllo ✓", '"héllo ✓"', id="utf8-raw"),
        pytest.param("\x7f", '"\x7f"', id="del-raw"),
    ],
)
def test_go_string(value: str, expected: str) -> None:
    """Strings escaped exactly as Go's encoder does."""
    assert gojson.go_string(value) == expected


@pytest.mark.parametrize(
    ("value", "desc", "expected"),
    [
        pytest.param(None, {"slice": "string"}, "null", id="absent-slice-null"),
        pytest.param([], {"slice": "string"}, "[]", id="empty-slice"),
        pytest.param(None, {"ptr": {"struct": "core/v1.PodOS"}}, "null", id="absent-pointer"),
        pytest.param({}, {"ptr": {"struct": "core/v1.PodOS"}}, '{"name":""}', id="pointer-to-zero-struct"),
        pytest.param("http", "intorstring", '"http"', id="int-or-string-string"),
        pytest.param(8080, "intorstring", "8080", id="int-or-string-int"),
        pytest.param(None, "intorstring", "0", id="int-or-string-zero"),
        pytest.param("1.5Gi", "quantity", '"1536Mi"', id="quantity-canonical"),
        pytest.param(None, "quantity", '"0"', id="quantity-zero"),
        pytest.param(None, "time", "null", id="time-zero"),
        pytest.param({"b": 1, "a": 2}, {"map": "int"}, '{"a":2,"b":1}', id="map-sorted"),
    ],
)
def test_go_encoding_of_values(value: Any, desc: Any, expected: str) -> None:
    """Zero values, pointers, slices, maps and the Kubernetes special types as Go writes them."""
    assert gojson.encode(value, desc, structs()) == expected


@pytest.mark.parametrize(
    ("value", "desc", "empty"),
    [
        pytest.param("", "string", True, id="empty-string"),
        pytest.param(0, "int", True, id="zero-int"),
        pytest.param(False, "bool", True, id="false"),
        pytest.param({}, {"ptr": {"struct": "core/v1.PodOS"}}, False, id="non-nil-pointer"),
        pytest.param(None, "quantity", False, id="struct-never-empty"),
        pytest.param({}, {"map": "string"}, True, id="empty-map"),
    ],
)
def test_omitempty(value: Any, desc: Any, empty: bool) -> None:
    """Go's omitempty: zero scalars, nil pointers, empty slices and maps; never a struct value."""
    assert gojson.is_empty(value, desc) is empty


# --- quantities (cases checked against Go's resource.Quantity) -----------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", "0"),
        ("+5", "+5"),
        ("1.5", "1500m"),
        (".5", "500m"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("1000m", "1"),
        ("0.0000000001", "1n"),
        ("1E3", "1E3"),
        ("1.5e3", "1500"),
        ("1024Ki", "1Mi"),
        ("1.5Gi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("0.1Gi", "107374182400m"),
        ("0.5Ki", "512"),
        ("8Gi", "8Gi"),
        ("80Gi", "80Gi"),
        ("1025Mi", "1025Mi"),
        ("-1.5Gi", "-1536Mi"),
        ("00010", "00010"),  # kept as written, like "+5"
        ("8Ei", "9223372036854775807"),
    ],
)
def test_canonical_quantity(text: str, expected: str) -> None:
    """The string Go's resource.Quantity marshals after parsing `text`."""
    assert canonical_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1Xi", "1e"])
def test_not_a_quantity(text: str) -> None:
    """Garbage is refused, not guessed at."""
    with pytest.raises(QuantityError):
        canonical_quantity(text)
