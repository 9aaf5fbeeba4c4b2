"""Annotations of the objects that route traffic to a component: its Ingress or VirtualService.

The API documents a component's `annotations` as reaching "Pod, Service, and Ingress". Ingress
controllers and Istio are configured through annotations (rewrite rules, timeouts, body size), so a
user sets them once on the component and finds them on its route. The operator's own control keys
(rollout budget, discovery backend, restart id, ...) steer the operator, not the ingress controller,
and stay off; the ingress block's own `annotations` win over the component's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.pod.template import CONTROL_ANNOTATIONS

# The pod's rule plus the restart id: a restart rolls pods, it must not rewrite the route.
ROUTE_EXCLUDED_ANNOTATIONS = frozenset({*CONTROL_ANNOTATIONS, c.ANNOTATION_RESTART_AT})


def route_annotations(component_annotations: Mapping[str, Any], ingress: Mapping[str, Any]) -> dict[str, str]:
    """Component annotations without operator control keys, then `ingress.annotations` over them."""
    out = {str(k): str(v) for k, v in component_annotations.items() if k not in ROUTE_EXCLUDED_ANNOTATIONS}
    out.update({str(k): str(v) for k, v in (ingress.get("annotations") or {}).items()})
    return out
