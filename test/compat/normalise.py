"""What must be made equal before two objects are compared, and why. Nothing else is touched.

The goldens were read back from an API server and normalised by whoever dumped them (README: no
uid, resourceVersion, timestamps, managedFields, owner uids or clusterIPs; Secret values replaced by
their length; only the DGD keeps its status). Our objects are what the operator would send. So:

* both sides lose what the dump removed, and each operator's own change-detection stamp;
* ours gains what the API server adds to every object of a built-in kind on write (`server_defaults`),
  exactly as a read-back would show it; CRD-kind objects (DCD, DGD) already carry their schema's
  defaults from `generate`;
* the DGD's status is reduced to the one thing comparable offline (see `_graph_failed`).
"""

from __future__ import annotations

import base64
import binascii
import copy
from typing import Any

import yaml

Obj = dict[str, Any]

# Removed by the goldens' dump (README), so removed from ours too. `namespace`: one namespace per
# example, written `<ns>` in values; the dump leaves it out of metadata.
_DUMPED_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "namespace")
# Each operator's hash over its own encoding of the object it writes: same key upstream and here
# (`last-applied-hash`), but the values can never agree and say nothing about the object itself.
# `pod-template-hash` is ours alone, the same kind of stamp over the pod template.
STAMP_ANNOTATIONS = frozenset({"nvidia.com/last-applied-hash", "nvidia.com/pod-template-hash"})
GRAPH_KIND = "DynamoGraphDeployment"


def _common(obj: Obj) -> Obj:
    out = copy.deepcopy(obj)
    _structured_data(out)
    meta = out.setdefault("metadata", {})
    for key in _DUMPED_METADATA:
        meta.pop(key, None)
    for ref in meta.get("ownerReferences") or []:
        ref.pop("uid", None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in STAMP_ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return out


def _graph_failed(status: Any) -> dict[str, bool]:
    """A DGD's state comes from its pods (kwok ran them for upstream; nothing runs them here), so the
    only comparable part is whether the graph failed outright (refused, missing API, bad spec)."""
    return {"failed": isinstance(status, dict) and status.get("state") == "failed"}


def golden(obj: Obj) -> Obj:
    out = _common(obj)
    if out.get("kind") == GRAPH_KIND:
        out["status"] = _graph_failed(out.get("status"))
    return out


def ours(obj: Obj) -> Obj:
    out = _common(obj)
    if out.get("kind") == GRAPH_KIND:
        out["status"] = _graph_failed(out.get("status"))
    server_defaults(out)
    spec = out.get("spec")
    if out.get("kind") == "Service" and isinstance(spec, dict):
        # The dump removed clusterIP(s) from every golden Service, "None" (headless) included.
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    if out.get("kind") == "Secret":
        out["data"] = {k: _length(v) for k, v in (out.get("data") or {}).items()}
    return out


def _structured_data(obj: Obj) -> None:
    """ConfigMap values that are YAML/JSON documents, parsed: their reader decodes them, so `name: ""`
    or `parameters: null` (how a Go encoder writes unset fields) and an absent key are the same
    config. Parsed, they are compared key by key like any other field."""
    data = obj.get("data")
    if obj.get("kind") != "ConfigMap" or not isinstance(data, dict):
        return
    for key, value in data.items():
        if isinstance(value, str) and key.endswith((".yaml", ".yml", ".json")):
            try:
                parsed = yaml.safe_load(value)
            except yaml.YAMLError:
                continue
            if isinstance(parsed, dict | list):
                data[key] = parsed


def _length(value: Any) -> str:
    """A Secret value the way the goldens write it: its decoded length."""
    try:
        return f"<{len(base64.b64decode(str(value), validate=True))} bytes>"
    except (binascii.Error, ValueError):
        return f"<{len(str(value))} bytes>"


# -- what the API server fills in -----------------------------------------------------------------
# From Kubernetes' v1/apps-v1 defaulting (SetDefaults_*) for a single-stack IPv4 cluster like the one
# the goldens came from. Only fields a read-back shows; values are the published defaults.

_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
_VOLUME_MODE_SOURCES = ("configMap", "secret", "downwardAPI", "projected")
_DEFAULT_MODE = 0o644  # 420


def _image_pull_policy(image: str) -> str:
    """`Always` for `:latest` or an untagged image (no digest either), else `IfNotPresent`."""
    name = image.rsplit("/", 1)[-1]
    if "@" in name:
        return "IfNotPresent"
    tag = name.split(":", 1)[1] if ":" in name else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _container(c: Obj) -> None:
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("image") is not None:
        c.setdefault("imagePullPolicy", _image_pull_policy(str(c["image"])))
    for port in c.get("ports") or []:
        port.setdefault("protocol", "TCP")
    for probe_name in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_name)
        if isinstance(probe, dict):
            for key, value in _PROBE_DEFAULTS.items():
                probe.setdefault(key, value)
            if isinstance(probe.get("httpGet"), dict):
                probe["httpGet"].setdefault("scheme", "HTTP")
            if isinstance(probe.get("grpc"), dict):
                probe["grpc"].setdefault("service", "")
    for var in c.get("env") or []:
        ref = (var.get("valueFrom") or {}).get("fieldRef")
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")


def _pod_spec(spec: Obj) -> None:
    # The goldens' cluster served no resource.k8s.io (DRA gate off): the API server drops the pod
    # fields of a disabled feature on write, so a read-back never shows them.
    spec.pop("resourceClaims", None)
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if isinstance(c.get("resources"), dict):
            c["resources"].pop("claims", None)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    if spec.get("serviceAccountName"):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])  # the deprecated alias, mirrored
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        _container(c)
    for volume in spec.get("volumes") or []:
        for source in _VOLUME_MODE_SOURCES:
            if isinstance(volume.get(source), dict):
                volume[source].setdefault("defaultMode", _DEFAULT_MODE)
        if isinstance(volume.get("hostPath"), dict):
            volume["hostPath"].setdefault("type", "")


def _deployment(spec: Obj) -> None:
    spec.setdefault("replicas", 1)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault("revisionHistoryLimit", 10)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxSurge", "25%")
        rolling.setdefault("maxUnavailable", "25%")
    template = spec.get("template") or {}
    if isinstance(template.get("spec"), dict):
        _pod_spec(template["spec"])


def _service(spec: Obj) -> None:
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
        spec.setdefault("internalTrafficPolicy", "Cluster")
        # Only a headless Service without a selector defaults to RequireDualStack.
        headless_without_selector = spec.get("clusterIP") == "None" and not spec.get("selector")
        spec.setdefault("ipFamilyPolicy", "RequireDualStack" if headless_without_selector else "SingleStack")
        spec.setdefault("ipFamilies", ["IPv4"])
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    if spec.get("publishNotReadyAddresses") is False:
        del spec["publishNotReadyAddresses"]  # a plain bool with omitempty: false is never read back


def _inference_pool(spec: Obj) -> None:
    """Schema defaults of the `inference.networking.k8s.io/v1` InferencePool CRD (the goldens' cluster
    had it installed, so the API server filled them in on write)."""
    ref = spec.get("endpointPickerRef")
    if isinstance(ref, dict):
        ref.setdefault("group", "")
        ref.setdefault("kind", "Service")
        ref.setdefault("failureMode", "FailClose")


def server_defaults(obj: Obj) -> None:
    """Fill in (in place) what the API server adds on write to the kinds this operator creates."""
    kind, spec = obj.get("kind"), obj.get("spec")
    if kind == "Deployment" and isinstance(spec, dict):
        _deployment(spec)
    elif kind == "Service" and isinstance(spec, dict):
        _service(spec)
    elif kind == "InferencePool" and isinstance(spec, dict):
        _inference_pool(spec)
    elif kind == "Secret":
        obj.setdefault("type", "Opaque")
    elif kind == "RoleBinding":
        for subject in obj.get("subjects") or []:
            if subject.get("kind") == "ServiceAccount":
                subject.setdefault("apiGroup", "")
