"""One OpenTelemetry span per reconcile, with the object's identity and the result (fresh interpreter,
since the tracer provider is a process-wide global)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

CODE = r"""
import asyncio, json
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)

from dynamo_operator.internal.controller import Controller, Result
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.workqueue import RateLimitingQueue

class Rec:
    async def reconcile(self, key):
        if key == "ns/bad":
            raise RuntimeError("boom")
        return Result(requeue_after=5)

async def main():
    q = RateLimitingQueue(clock=FakeClock())
    ctl = Controller(name="spans", reconciler=Rec(), queue=q)
    q.add("ns/good"); q.add("ns/bad")
    task = asyncio.create_task(ctl.run())
    for _ in range(500):
        if len(exporter.get_finished_spans()) == 2:
            break
        await asyncio.sleep(0.002)
    ctl.stop(); await task

asyncio.run(main())
print(json.dumps([
    {"name": s.name, "attrs": dict(s.attributes), "status": s.status.status_code.name,
     "events": [e.name for e in s.events]}
    for s in exporter.get_finished_spans()
]))
"""


def test_each_reconcile_is_a_span_with_identity_result_and_errors() -> None:
    """Span `reconcile` per key: controller/namespace/name/reconcile_id attributes, the result label,
    and an ERROR status with the exception recorded when the reconcile failed."""
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, env=env, check=True
    )
    spans = {s["attrs"]["k8s.name"]: s for s in json.loads(out.stdout.strip().splitlines()[-1])}
    good, bad = spans["good"], spans["bad"]
    assert good["name"] == bad["name"] == "reconcile"
    assert good["attrs"]["k8s.controller"] == "spans" and good["attrs"]["k8s.namespace"] == "ns"
    assert good["attrs"]["k8s.reconcile_id"] != bad["attrs"]["k8s.reconcile_id"]
    assert (good["attrs"]["reconcile.result"], good["status"]) == ("requeue_after", "UNSET")
    assert (bad["attrs"]["reconcile.result"], bad["status"]) == ("error", "ERROR")
    assert bad["events"] == ["exception"]
