"""Typed errors of the API client, classified once at the HTTP boundary.

    Exception
    ├── TransportError            the request got no HTTP answer (refused, reset, timed out)
    └── ApiError                  the API server answered with a failure Status
        ├── BadRequest            400
        ├── Unauthorized          401
        ├── Forbidden             403
        ├── NotFound              404
        ├── AlreadyExists         409, reason AlreadyExists
        ├── Conflict              409 otherwise (stale resourceVersion, SSA field conflict)
        ├── Gone                  410, or reason Expired/Gone, or "too old resource version"
        ├── Invalid               422, with `causes` naming the fields
        ├── TooManyRequests       429, with `retry_after` seconds when the server said so
        └── ServerError           5xx

Callers decide by type (`except NotFound`, `match err: case Gone():`), never by message text.
"""

from __future__ import annotations

import email.utils
from collections.abc import Mapping
from typing import Any

# Bodies can be large (a whole rejected object) and may echo user data; keep log lines bounded.
MAX_MESSAGE_CHARS = 1024  # room for an admission policy's name, binding and its own message


def _cut(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"


class TransportError(Exception):
    """No HTTP answer. `sent` is False only when the request surely never reached the server
    (connection refused / DNS / TLS handshake), which makes even a POST safe to retry."""

    def __init__(self, message: str, *, sent: bool) -> None:
        super().__init__(_cut(message))
        self.sent = sent


class ApiError(Exception):
    """A failure `Status` from the API server."""

    def __init__(
        self,
        code: int,
        reason: str = "",
        message: str = "",
        details: Mapping[str, Any] | None = None,
        *,
        retry_after: float | None = None,
        server_time: float | None = None,
    ) -> None:
        super().__init__(code, reason, message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        # Seconds the server asked us to wait (Retry-After); set on 429 and sometimes on 5xx.
        self.retry_after = retry_after
        # When the server answered, by its own clock (the Date header, whole seconds; POSIX time):
        # what to compare its timestamps (creationTimestamp) with, whatever this host's clock says.
        self.server_time = server_time

    @property
    def causes(self) -> list[dict[str, Any]]:
        """Field-level causes from `details.causes` (empty when the server gave none)."""
        causes = self.details.get("causes")
        return list(causes) if isinstance(causes, list) else []

    def __str__(self) -> str:
        return _cut(f"{self.code} {self.reason}: {self.message}")


class BadRequest(ApiError):
    """400: malformed request (bad patch, wrong content type, undecodable body)."""


class Unauthorized(ApiError):
    """401: the credentials were not accepted."""


class Forbidden(ApiError):
    """403: authenticated but not allowed (RBAC), or the namespace is terminating."""


# How the API server words a refusal by admission: a webhook ("admission webhook \"x\" denied the
# request: ...") or a ValidatingAdmissionPolicy ("ValidatingAdmissionPolicy 'p' with binding 'b'
# denied request: ..."). Both answer 403 by default, as RBAC and a terminating namespace do, and only
# the message tells them apart.
_ADMISSION_DENIALS = ("denied the request", "denied request")


def admission_denied(err: BaseException) -> bool:
    """True when admission control refused the object's content: sending it again cannot succeed
    until the object (or the policy) changes. RBAC refusals and terminating namespaces are not."""
    if not isinstance(err, ApiError) or err.code not in (400, 403, 422):
        return False
    return any(phrase in err.message for phrase in _ADMISSION_DENIALS)


# The cause the API server names when it refuses to create anything in a namespace being deleted
# (metav1.NamespaceTerminatingCause); older servers said so only in the message.
NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating"
_NAMESPACE_TERMINATING_TEXT = "because it is being terminated"


def namespace_terminating(err: BaseException) -> bool:
    """True when the API server refused a create because the namespace is being deleted: it never
    leaves that state, so no retry can succeed, and the namespace's deletion takes its objects
    with it. Updates and deletions of existing objects are still served there."""
    if not isinstance(err, Forbidden):
        return False
    if any(cause.get("reason") == NAMESPACE_TERMINATING_CAUSE for cause in err.causes):
        return True
    return _NAMESPACE_TERMINATING_TEXT in err.message


class NotFound(ApiError):
    """404: the object (or the resource type) does not exist."""


def namespace_gone(err: BaseException) -> bool:
    """True when a write failed because its namespace does not exist (404 naming the namespace):
    for an owner still in a cache, the namespace it lived in was deleted and its objects go too."""
    return isinstance(err, NotFound) and err.details.get("kind") == "namespaces"


def namespace_going(err: BaseException) -> bool:
    """No create in this namespace can succeed again: it is being deleted, or it is gone."""
    return namespace_terminating(err) or namespace_gone(err)


class AlreadyExists(ApiError):
    """409 AlreadyExists: create of a name that is taken."""


class Conflict(ApiError):
    """409: optimistic-concurrency failure or a server-side apply field conflict."""


class Gone(ApiError):
    """410: the requested resourceVersion was compacted away; relist from scratch."""


class Invalid(ApiError):
    """422: the object failed validation; `causes` name the offending fields."""


class TooManyRequests(ApiError):
    """429: throttled by API Priority and Fairness; wait `retry_after` seconds if given."""


class ServerError(ApiError):
    """5xx: the server (or something in front of it) failed; usually transient."""


_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    410: Gone,
    422: Invalid,
}

_TOO_OLD = "too old resource version"


def _parse_retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # HTTP-date form: the API server never sends it; fall back to our backoff
    return max(0.0, seconds)


def _parse_http_date(value: str | None) -> float | None:
    """An HTTP Date header as POSIX time; None when absent or unparsable."""
    if not value:
        return None
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None


def error_from_status(
    code: int,
    status: Mapping[str, Any] | None,
    *,
    retry_after: str | None = None,
    date: str | None = None,
    fallback_message: str = "",
) -> ApiError:
    """Build the most specific `ApiError` for an HTTP code and its (optional) `Status` body.

    Also used for watch `ERROR` events, whose object is a `Status` with the code inside.
    """
    status = status or {}
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or fallback_message)
    details = status.get("details") if isinstance(status.get("details"), Mapping) else None
    code = int(status.get("code") or code)

    # Retry-After may sit in the header or in details.retryAfterSeconds.
    wait = _parse_retry_after(retry_after)
    if wait is None and details and details.get("retryAfterSeconds") is not None:
        wait = float(details["retryAfterSeconds"])

    cls: type[ApiError]
    if code == 410 or reason in ("Expired", "Gone") or _TOO_OLD in message:
        cls = Gone
    elif code == 409:
        cls = AlreadyExists if reason == "AlreadyExists" else Conflict
    elif code == 429:
        cls = TooManyRequests
    elif code >= 500:
        cls = ServerError
    else:
        cls = _BY_CODE.get(code, ApiError)
    return cls(code, reason, message, details, retry_after=wait, server_time=_parse_http_date(date))
