"""ConversionReview (apiextensions.k8s.io/v1) in and out, pure: bytes of a request, a converter, the
response object.

One object that cannot be converted fails the whole review: the API server then fails the read or
write that needed it, with our message, which names the object and the reason. Returning the other
objects converted is not an option, the API server wants all of them or none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

API_VERSION = "apiextensions.k8s.io/v1"
KIND = "ConversionReview"
# A review of a LIST carries every object of the page; the API server's own request limit is 3 MiB
# per object, so this bounds how many objects, not their size.
MAX_OBJECTS = 100_000

Converter = Callable[[Mapping[str, object], str], dict[str, object]]


class BadReview(ValueError):
    """The body is not a ConversionReview we can answer (answered with HTTP 400)."""


@dataclass(frozen=True, slots=True)
class Request:
    uid: str
    desired_api_version: str
    objects: list[dict[str, Any]]


def parse(body: bytes) -> Request:
    try:
        review = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        raise BadReview(f"the body is not JSON: {err}") from err
    if not isinstance(review, dict):
        raise BadReview("the body is not a JSON object")
    if review.get("apiVersion") != API_VERSION or review.get("kind") != KIND:
        raise BadReview(
            f"expected a {KIND} of {API_VERSION}, got kind {review.get('kind')!r} "
            f"of {review.get('apiVersion')!r} (the CRD must list conversionReviewVersions [v1])"
        )
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("the review has no request")
    uid = request.get("uid")
    desired = request.get("desiredAPIVersion")
    objects = request.get("objects")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid is missing")
    if not isinstance(desired, str) or not desired:
        raise BadReview("request.desiredAPIVersion is missing")
    if not isinstance(objects, list) or not all(isinstance(o, dict) for o in objects):
        raise BadReview("request.objects must be a list of objects")
    if len(objects) > MAX_OBJECTS:
        raise BadReview(f"request.objects holds {len(objects)} objects, more than {MAX_OBJECTS}")
    return Request(uid=uid, desired_api_version=desired, objects=objects)


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    ns, name = meta.get("namespace"), meta.get("name", "?")
    return f"{obj.get('kind', '?')} {ns}/{name}" if ns else f"{obj.get('kind', '?')} {name}"


def response(
    uid: str, *, converted: list[dict[str, object]] | None = None, error: str = ""
) -> dict[str, Any]:
    body: dict[str, Any] = {"uid": uid}
    if error:
        body["result"] = {"status": "Failure", "message": error}
    else:
        body["convertedObjects"] = converted or []
        body["result"] = {"status": "Success"}
    return {"apiVersion": API_VERSION, "kind": KIND, "response": body}


def convert_all(request: Request, convert: Converter) -> dict[str, Any]:
    """The response to `request`: every object converted, or a Failure naming the first that was not."""
    converted: list[dict[str, object]] = []
    for obj in request.objects:
        try:
            out = convert(obj, request.desired_api_version)
        except Exception as err:  # a converter bug is one failed review, never a dead server
            message = f"cannot convert {_name(obj)} to {request.desired_api_version}: {err}"
            return response(request.uid, error=message)
        if out.get("apiVersion") != request.desired_api_version:
            message = (
                f"cannot convert {_name(obj)} to {request.desired_api_version}: "
                f"the converter returned apiVersion {out.get('apiVersion')!r}"
            )
            return response(request.uid, error=message)
        converted.append(out)
    return response(request.uid, converted=converted)


def handle(body: bytes, convert: Converter) -> bytes:
    """A request body to a response body; raises BadReview for a body that is no review."""
    return orjson.dumps(convert_all(parse(body), convert))
