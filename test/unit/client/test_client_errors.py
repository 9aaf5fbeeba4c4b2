"""Mapping of API server answers to typed errors (the table every caller's `except` relies on)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.errors import error_from_status


def status(code: int, reason: str = "", message: str = "", **details: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "status": "Failure", "code": code, "reason": reason}
    if message:
        body["message"] = message
    if details:
        body["details"] = details
    return body


@pytest.mark.parametrize(
    ("code", "body", "expected"),
    [
        pytest.param(400, status(400, "BadRequest"), errors.BadRequest, id="400-bad-request"),
        pytest.param(401, status(401, "Unauthorized"), errors.Unauthorized, id="401-unauthorized"),
        pytest.param(403, status(403, "Forbidden"), errors.Forbidden, id="403-forbidden"),
        pytest.param(404, status(404, "NotFound"), errors.NotFound, id="404-not-found"),
        pytest.param(409, status(409, "AlreadyExists"), errors.AlreadyExists, id="409-already-exists"),
        pytest.param(409, status(409, "Conflict"), errors.Conflict, id="409-conflict"),
        pytest.param(410, status(410, "Gone"), errors.Gone, id="410-gone"),
        pytest.param(410, status(410, "Expired"), errors.Gone, id="410-expired"),
        pytest.param(
            500, status(500, "", "too old resource version: 1 (5)"), errors.Gone, id="too-old-message-is-gone"
        ),
        pytest.param(422, status(422, "Invalid"), errors.Invalid, id="422-invalid"),
        pytest.param(429, status(429, "TooManyRequests"), errors.TooManyRequests, id="429-throttled"),
        pytest.param(500, status(500, "InternalError"), errors.ServerError, id="500-server-error"),
        pytest.param(503, None, errors.ServerError, id="503-without-status-body"),
        pytest.param(405, status(405, "MethodNotAllowed"), errors.ApiError, id="405-generic"),
    ],
)
def test_code_and_reason_pick_the_error_type(code: int, body: dict[str, Any] | None, expected: type) -> None:
    """Each HTTP code (and reason, for 409/410) maps to exactly one exception type."""
    err = error_from_status(code, body)
    assert type(err) is expected
    assert err.code == code


def test_invalid_carries_field_causes() -> None:
    """A 422 exposes `details.causes` so callers can name the offending fields."""
    causes = [{"reason": "FieldValueRequired", "field": "spec.replicas", "message": "Required value"}]
    err = error_from_status(422, status(422, "Invalid", "bad", causes=causes, name="x", kind="Deployment"))
    assert isinstance(err, errors.Invalid)
    assert err.causes == causes
    assert err.details["kind"] == "Deployment"


@pytest.mark.parametrize(
    ("header", "details", "expected"),
    [
        pytest.param("3", {}, 3.0, id="header-seconds"),
        pytest.param(None, {"retryAfterSeconds": 7}, 7.0, id="details-retry-after-seconds"),
        pytest.param("2", {"retryAfterSeconds": 7}, 2.0, id="header-wins"),
        pytest.param("Wed, 21 Oct 2015 07:28:00 GMT", {}, None, id="http-date-ignored"),
        pytest.param(None, {}, None, id="absent"),
    ],
)
def test_retry_after_is_read_from_header_or_details(
    header: str | None, details: dict[str, Any], expected: float | None
) -> None:
    """429 keeps the server's requested wait so the retry policy can honour it."""
    err = error_from_status(429, status(429, "TooManyRequests", **details), retry_after=header)
    assert isinstance(err, errors.TooManyRequests)
    assert err.retry_after == expected


def test_watch_error_event_status_uses_its_own_code() -> None:
    """A watch ERROR event is a Status whose code is inside the body, not on the HTTP response."""
    err = error_from_status(200, status(410, "Expired", "too old resource version"))
    assert isinstance(err, errors.Gone)
    assert err.code == 410


def test_str_is_cut_to_a_safe_length() -> None:
    """Huge messages (echoed objects) are truncated in str() but kept whole on `.message`."""
    err = error_from_status(422, status(422, "Invalid", "x" * 10_000))
    assert len(str(err)) <= errors.MAX_MESSAGE_CHARS
    assert len(err.message) == 10_000


def test_fallback_message_when_body_is_not_a_status() -> None:
    """A proxy's HTML error page still yields a typed error with some text."""
    err = error_from_status(502, None, fallback_message="<html>bad gateway</html>")
    assert isinstance(err, errors.ServerError)
    assert "bad gateway" in err.message


@pytest.mark.parametrize(
    ("code", "message", "denied"),
    [
        pytest.param(
            403,
            'admission webhook "vpodcliqueset.validating.grove.io" denied the request: name too long',
            True,
            id="webhook-403",
        ),
        pytest.param(
            400, 'admission webhook "v.example.io" denied the request: x must be set', True, id="webhook-400"
        ),
        pytest.param(
            403,
            "services \"s\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: "
            "failed expression: object.metadata.name != 's'",
            True,
            id="admission-policy-403",
        ),
        pytest.param(
            422,
            "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed expression",
            True,
            id="admission-policy-invalid",
        ),
        pytest.param(
            403,
            'services is forbidden: User "system:serviceaccount:ns:op" cannot create resource "services"',
            False,
            id="rbac",
        ),
        pytest.param(
            403,
            'pods "p" is forbidden: unable to create new content in namespace n because it is being '
            "terminated",
            False,
            id="namespace-terminating",
        ),
        pytest.param(500, 'admission webhook "w" denied the request', False, id="server-error"),
    ],
)
def test_admission_denial_is_told_apart_from_rbac_and_terminating_namespaces(
    code: int, message: str, denied: bool
) -> None:
    """Admission refusals share 403 with RBAC and terminating namespaces; only they are final."""
    err = error_from_status(code, status(code, "Forbidden" if code == 403 else "", message))
    assert errors.admission_denied(err) is denied


def test_only_api_errors_are_admission_denials() -> None:
    assert not errors.admission_denied(RuntimeError('admission webhook "w" denied the request'))


TERMINATING = (
    'configmaps "c" is forbidden: unable to create new content in namespace n because it is being terminated'
)


@pytest.mark.parametrize(
    ("code", "message", "causes", "terminating"),
    [
        pytest.param(
            403,
            TERMINATING,
            [
                {
                    "reason": "NamespaceTerminating",
                    "message": "namespace n is being terminated",
                    "field": "metadata.namespace",
                }
            ],
            True,
            id="cause-and-message",
        ),
        pytest.param(403, "forbidden", [{"reason": "NamespaceTerminating"}], True, id="cause-only"),
        pytest.param(403, TERMINATING, None, True, id="message-only-older-servers"),
        pytest.param(
            403,
            'configmaps is forbidden: User "system:serviceaccount:ns:op" cannot create resource "configmaps"',
            None,
            False,
            id="rbac",
        ),
        pytest.param(
            403,
            'admission webhook "w" denied the request: no',
            [{"reason": "FieldValueForbidden"}],
            False,
            id="admission",
        ),
        pytest.param(422, TERMINATING, [{"reason": "NamespaceTerminating"}], False, id="not-a-403"),
        pytest.param(404, 'namespaces "n" not found', None, False, id="namespace-gone"),
    ],
)
def test_namespace_terminating_is_told_apart_from_other_refusals(
    code: int, message: str, causes: list[dict[str, str]] | None, terminating: bool
) -> None:
    """Only the API server's refusal to create in a namespace being deleted, by its cause or (older
    servers) its words; RBAC and admission refusals share its 403 and are not it."""
    body = status(code, "Forbidden" if code == 403 else "", message, **({"causes": causes} if causes else {}))
    assert errors.namespace_terminating(error_from_status(code, body)) is terminating


def test_only_api_errors_are_namespace_terminating() -> None:
    assert not errors.namespace_terminating(RuntimeError("because it is being terminated"))


@pytest.mark.parametrize(
    ("date", "server_time"),
    [
        ("Fri, 27 Nov 2026 07:45:18 GMT", 1795765518.0),
        (None, None),
        ("", None),
        ("yesterday-ish", None),
    ],
    ids=["http-date", "absent", "empty", "unparsable"],
)
def test_an_error_carries_the_servers_time_of_answering(date: str | None, server_time: float | None) -> None:
    """The Date header, as POSIX time: what the server's own timestamps compare with."""
    err = error_from_status(403, status(403, "Forbidden", "no"), date=date)
    assert err.server_time == server_time


@pytest.mark.parametrize(
    ("details", "gone"),
    [
        ({"name": "ns", "kind": "namespaces"}, True),
        ({"name": "c", "kind": "configmaps"}, False),
        (None, False),
    ],
    ids=["the-namespace", "an-object", "no-details"],
)
def test_a_missing_namespace_is_told_apart_from_a_missing_object(details: Any, gone: bool) -> None:
    body = status(404, "NotFound", "not found")
    if details is not None:
        body["details"] = details
    err = error_from_status(404, body)
    assert errors.namespace_gone(err) is gone
    assert errors.namespace_going(err) is gone
