"""Pure generation: DGD → DCDs and graph objects, DCD → workload objects. No I/O, clock or randomness.

Public entry points are re-exported here; see each module for the details.
"""

from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext, IngressDefaults
from dynamo_operator.internal.dynamo.common.errors import GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.common.hashing import (
    content_hash,
    pod_template_hash,
    recorded_hash,
    stamp_hash,
)
from dynamo_operator.internal.dynamo.component.backends import Role
from dynamo_operator.internal.dynamo.component.workload import (
    component_of,
    desired_component_objects,
    multinode_missing_api,
)
from dynamo_operator.internal.dynamo.graph.generate import (
    adapter_selector,
    desired_dcds,
    desired_discovery_rbac,
    desired_graph_objects,
    desired_model_services,
    desired_planner_rbac,
    desired_pvcs,
    desired_scaling_adapters,
    desired_shared_objects,
    desired_side_objects,
    missing_apis,
    validate_graph,
)
from dynamo_operator.internal.dynamo.pod.template import Component, build_pod_template

__all__ = [
    "Capabilities",
    "Component",
    "GenContext",
    "GenerationError",
    "IngressDefaults",
    "MissingAPIError",
    "Role",
    "adapter_selector",
    "build_pod_template",
    "component_of",
    "content_hash",
    "desired_component_objects",
    "desired_dcds",
    "desired_discovery_rbac",
    "desired_graph_objects",
    "desired_model_services",
    "desired_planner_rbac",
    "desired_pvcs",
    "desired_scaling_adapters",
    "desired_shared_objects",
    "desired_side_objects",
    "missing_apis",
    "multinode_missing_api",
    "pod_template_hash",
    "recorded_hash",
    "stamp_hash",
    "validate_graph",
]
