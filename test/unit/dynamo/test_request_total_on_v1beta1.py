"""The request's pure steps are total on what its v1beta1 schema admits: any request is read,
validated and, when valid, turned into its profiling Job, or refused with the request's own error
(`ProfilerConfigError`, reported as the request's failure); nothing else escapes to be retried
forever. Requests are drawn as the request conversion's property tests draw them."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from dynamo_operator.api.v1beta1 import DynamoGraphDeploymentRequest as BetaRequest
from dynamo_operator.controllers.dynamographdeploymentrequest import references
from dynamo_operator.internal.dynamo.dgdr import deployment, job, profiler_config
from dynamo_operator.internal.dynamo.dgdr.view import read_request
from hypothesis import given
from unit.api.test_conversion_request_properties import PROPERTY, _defaulted, beta_request

Json = dict[str, Any]


@PROPERTY
@given(beta_request)
def test_a_v1beta1_request_is_read_validated_and_profiled_or_refused(obj: Json) -> None:
    stored = _defaulted(BetaRequest, obj)
    stored["metadata"] |= {
        "namespace": "team-a",
        "uid": str(uuid.uuid4()),
        "resourceVersion": "1",
        "generation": 1,
    }
    view = read_request(stored)
    deployment.foreign_namespaces(view.request)
    references(view.spec)
    problems = profiler_config.validate(view.spec, namespace_restricted=True)
    if problems:
        return
    with contextlib.suppress(profiler_config.ProfilerConfigError):
        job.profiling_job(view.request, owner_reference=None)
