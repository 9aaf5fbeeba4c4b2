"""The ingress of a graph's frontend that declares none. Pure.

A DCD generated as v1alpha1 carries it in its spec; the v1beta1 form has no ingress field, so the
DCD reconciler makes it for a graph's frontend from the operator's settings, as upstream's does.
"""

from __future__ import annotations

from dynamo_operator.api.views.v1alpha1 import IngressSpec
from dynamo_operator.internal.dynamo.common.context import GenContext


def default_ingress(dgd_name: str, ctx: GenContext) -> IngressSpec:
    """A frontend's ingress when it declares none: the graph's name as host, enabled only when the
    operator has an ingress class or gateway (without them no Ingress is written, as upstream)."""
    d = ctx.ingress
    if not d.enabled:
        return {"host": dgd_name}
    ingress: IngressSpec = {"enabled": True, "host": dgd_name}
    if d.virtual_service_gateway:
        ingress["useVirtualService"] = True
        ingress["virtualServiceGateway"] = d.virtual_service_gateway
    if d.controller_class_name:
        ingress["ingressControllerClassName"] = d.controller_class_name
    if d.tls_secret_name:
        ingress["tls"] = {"secretName": d.tls_secret_name}
    if d.host_suffix:
        ingress["hostSuffix"] = d.host_suffix
    return ingress
