"""Logging and tracing set-up, each in a fresh interpreter (both configure process-wide globals)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from dynamo_operator.internal.observability.tracing import exporting


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**clean, "PYTHONSAFEPATH": "1", **env},
    )


def test_json_logs_carry_bound_context_and_tracebacks() -> None:
    """JSON lines with level, timestamp, the contextvars and a structured exception; stdlib too."""
    code = """
import logging, structlog
from dynamo_operator.internal.observability.logging import configure_logging
configure_logging(level="info", fmt="json")
log = structlog.get_logger("t")
log.debug("hidden")
with structlog.contextvars.bound_contextvars(controller="c", namespace="ns", name="n", reconcile_id="r"):
    try:
        raise ValueError("boom")
    except ValueError as err:
        log.error("Reconciler error", exc_info=err)
logging.getLogger("aiohttp").warning("from stdlib")
"""
    lines = [json.loads(line) for line in run_python(code).stderr.splitlines() if line.strip()]
    assert len(lines) == 2, "debug is below the level"
    first, second = lines
    assert {k: first[k] for k in ("controller", "namespace", "name", "reconcile_id")} == {
        "controller": "c",
        "namespace": "ns",
        "name": "n",
        "reconcile_id": "r",
    }
    assert first["level"] == "error" and first["event"] == "Reconciler error"
    assert "ValueError" in json.dumps(first["exception"])
    assert second["event"] == "from stdlib" and second["level"] == "warning"


@pytest.mark.parametrize("fmt", [pytest.param("json", id="json"), pytest.param("console", id="console")])
def test_tracebacks_never_carry_local_variables(fmt: str) -> None:
    """A local holding a credential must not reach the log through an exception's frame."""
    code = f"""
import structlog
from dynamo_operator.internal.observability.logging import configure_logging
configure_logging(level="info", fmt="{fmt}")
def fail():
    bearer_token = "s3cr3t-value"
    raise RuntimeError("boom")
try:
    fail()
except RuntimeError as err:
    structlog.get_logger().error("Reconciler error", exc_info=err)
"""
    err = run_python(code).stderr
    assert "RuntimeError" in err
    assert "s3cr3t-value" not in err


def test_console_format_is_not_json() -> None:
    """--log-format console renders human lines."""
    code = """
import structlog
from dynamo_operator.internal.observability.logging import configure_logging
configure_logging(level="debug", fmt="console")
structlog.get_logger().info("hello", key="value")
"""
    err = run_python(code).stderr
    assert "hello" in err and "key" in err
    with pytest.raises(json.JSONDecodeError):
        json.loads(err.splitlines()[0])


def test_unknown_level_is_refused() -> None:
    """A typo in --log-level fails loudly."""
    from dynamo_operator.internal.observability.logging import configure_logging

    with pytest.raises(ValueError):
        configure_logging(level="loud")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, False, id="no-endpoint"),
        pytest.param({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True, id="endpoint"),
        pytest.param(
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True, id="traces"
        ),
        pytest.param({"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, False, id="empty"),
    ],
)
def test_exporter_only_when_an_endpoint_is_set(env: dict[str, str], expected: bool) -> None:
    """Spans are exported over OTLP/HTTP only when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set."""
    assert exporting(env) is expected
    code = """
from dynamo_operator.internal.observability.tracing import configure_tracing
provider = configure_tracing()
processors = provider._active_span_processor._span_processors
print(len(processors))
provider.shutdown()
"""
    assert run_python(code, **env).stdout.strip() == ("1" if expected else "0")


@pytest.mark.parametrize(
    ("env", "recording"),
    [
        pytest.param({}, False, id="no-endpoint"),
        pytest.param({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, True, id="endpoint"),
    ],
)
def test_spans_record_only_when_they_are_exported(env: dict[str, str], recording: bool) -> None:
    """A span nothing would export is sampled out: the reconcile path is the same, its cost is not."""
    code = """
import os
from opentelemetry import trace
from dynamo_operator.internal.observability.tracing import configure_tracing
provider = configure_tracing()
with trace.get_tracer("t").start_as_current_span("reconcile") as span:
    print(span.is_recording(), flush=True)
os._exit(0)  # no flush of the span to an endpoint that is not there
"""
    assert run_python(code, **env).stdout.strip() == str(recording)
