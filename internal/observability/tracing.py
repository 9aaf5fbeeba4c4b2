"""OpenTelemetry: a tracer provider that exports over OTLP/HTTP only when an endpoint is configured.

Without `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) spans are still created, so code
paths are the same, but they are sampled out (nothing records what nothing would read: a recorded
span per reconcile was measurable CPU at scale), and nothing leaves the process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def configure_tracing(
    *, service_name: str = "dynamo-operator", environ: Mapping[str, str] | None = None
) -> TracerProvider:
    """Install the global tracer provider; returns it so the caller can `shutdown()` at exit."""
    env = os.environ if environ is None else environ
    export = exporting(env)
    # sampler None: the SDK's default (or OTEL_TRACES_SAMPLER's choice).
    provider = TracerProvider(
        resource=Resource.create({"service.name": service_name}), sampler=None if export else ALWAYS_OFF
    )
    if export:
        # Imported lazily: the exporter pulls in protobuf and requests, which most runs never need.
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def exporting(environ: Mapping[str, str] | None = None) -> bool:
    """Whether `configure_tracing` would attach an exporter."""
    env = os.environ if environ is None else environ
    return any(env.get(var) for var in _ENDPOINT_VARS)
