"""Per-graph side objects some components need: the wait-for-leader script (multinode) and the EPP
config + InferencePool (type epp), read from the graph as stored (graph/components.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.common.inputs import StoredComponent, StoredGraph
from dynamo_operator.internal.dynamo.common.leader_wait import LEADER_WAIT_PROGRAM
from dynamo_operator.internal.dynamo.common.objects import Obj, envelope

WAIT_LEADER_KEY = "wait-for-leader.py"
EPP_CONFIG_KEY = "epp-config-dynamo.yaml"
EPP_CONFIG_API_VERSION = "inference.networking.x-k8s.io/v1alpha1"
# The type of an inline `eppConfig.config` (what the EPP reads); the user's own apiVersion/kind win.
EPP_CONFIG_TYPE = {"apiVersion": EPP_CONFIG_API_VERSION, "kind": "EndpointPickerConfig"}


def wait_leader_config_map_name(dgd_name: str) -> str:
    """ConfigMap holding the wait-for-leader script of a graph."""
    return f"{dgd_name}-wait-leader-script"


def desired_wait_leader_config_map(dgd: StoredGraph, ctx: GenContext) -> Obj:
    """The wait-for-leader script ConfigMap, owned by the graph."""
    name = str(dgd["metadata"]["name"])
    return wait_leader_config_map(
        name, ctx.namespace, owner=dgd, labels={c.LABEL_GRAPH_DEPLOYMENT_NAME: name}
    )


def wait_leader_config_map(
    root: str, namespace: str, *, owner: Mapping[str, Any], labels: dict[str, str]
) -> Obj:
    """The wait-for-leader script ConfigMap of `root` (a graph, or a DCD outside any graph)."""
    cm = envelope(
        "v1",
        "ConfigMap",
        wait_leader_config_map_name(root),
        namespace,
        labels=labels,
        owner=owner,
    )
    # Run by worker pods of a vLLM multiprocessing replica before the engine starts: the engine exits
    # when the leader's master port is not reachable, so they wait for it instead of crash-looping.
    cm["data"] = {WAIT_LEADER_KEY: LEADER_WAIT_PROGRAM}
    return cm


# The workers of a graph with an EPP are marked as the class its InferencePool selects (any worker
# type: prefill, decode or aggregated), as upstream 2a6da14c does.
LABEL_COMPONENT_CLASS = "nvidia.com/dynamo-component-class"
COMPONENT_CLASS_WORKER = "worker"


def epp_config_map_name(dgd_name: str) -> str:
    """ConfigMap the operator writes for an inline `eppConfig.config`."""
    return f"{dgd_name}-epp-config"


def desired_epp_objects(dgd: StoredGraph, component: StoredComponent, ctx: GenContext) -> list[Obj]:
    """For an `epp` component: its config ConfigMap (inline config only) and the InferencePool."""
    dgd_name = str(dgd["metadata"]["name"])
    service = component["name"]
    # Named in v1alpha1 terms, as every refusal of generation is: the reconciler and `render` put it in
    # the terms of the graph's own version (common/stored_terms.py).
    field = f"spec.services.{service}.eppConfig"
    epp = component.get("eppConfig", {})
    out: list[Obj] = []
    labels = {
        c.LABEL_GRAPH_DEPLOYMENT_NAME: dgd_name,
        c.LABEL_COMPONENT: service,
        c.LABEL_COMPONENT_TYPE: c.COMPONENT_EPP,
    }
    if epp.get("config") is not None and epp.get("configMapRef"):
        raise GenerationError(field, "set either config or configMapRef, not both")
    if epp.get("config") is not None:
        cm = envelope(
            "v1", "ConfigMap", epp_config_map_name(dgd_name), ctx.namespace, labels=labels, owner=dgd
        )
        document = {**EPP_CONFIG_TYPE, **epp["config"]}
        cm["data"] = {EPP_CONFIG_KEY: yaml.safe_dump(document, sort_keys=True)}
        out.append(cm)
    elif not epp.get("configMapRef", {}).get("name"):
        raise GenerationError(field, "one of config or configMapRef is required")
    if not ctx.capabilities.gateway_inference_extension:
        raise MissingAPIError(
            field,
            f"{c.GATEWAY_INFERENCE_GROUP}/v1 InferencePool",
            "an epp component needs the InferencePool API",
        )
    dyn_ns = naming.dynamo_namespace(
        ctx.namespace, dgd_name, global_namespace=bool(component.get("globalDynamoNamespace"))
    )
    pool = envelope(
        f"{c.GATEWAY_INFERENCE_GROUP}/v1",
        "InferencePool",
        f"{dgd_name}-pool",
        ctx.namespace,
        labels=labels,
        owner=dgd,
    )
    pool["spec"] = {
        "targetPorts": [{"number": c.HTTP_PORT}],
        "selector": {
            "matchLabels": {
                LABEL_COMPONENT_CLASS: COMPONENT_CLASS_WORKER,
                c.LABEL_DYNAMO_NAMESPACE: naming.label_value(dyn_ns),
            }
        },
        "endpointPickerRef": {
            "kind": "Service",
            "name": naming.service_name(naming.dcd_name(dgd_name, service)),
            "port": {"number": c.EPP_GRPC_PORT},
        },
    }
    out.append(pool)
    return out
