"""Which of Dynamo's kinds the operator speaks in v1beta1, asked of the API server once at start.

The operator speaks each converted kind in the version its CRD stores, so that none of its own
requests needs the conversion webhook (`internal/stored_version.py`): v1beta1 for the kinds this
release stores so, v1alpha1 for the rest and for CRDs an older release installed (upgrading the
operator before its CRDs works). The CRDs are read once; if they cannot be (no permission), the
kinds this release stores as v1beta1 are assumed to be stored so wherever the API server serves it.
"""

from __future__ import annotations

import structlog
from dynamo_operator.api import v1beta1
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.errors import ApiError
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.stored_version import CONVERTED, storage_codecs

log = structlog.get_logger(__name__)


def _stored(crd: dict[str, object]) -> str | None:
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    for version in versions if isinstance(versions, list) else ():
        if isinstance(version, dict) and version.get("storage") and version.get("served"):
            return str(version.get("name"))
    return None


async def _served_as_v1beta1(client: Client) -> frozenset[str]:
    listed = await client.api_resources(v1beta1.API_VERSION) or []
    return frozenset(str(r.get("name")) for r in listed if "/" not in str(r.get("name")))


async def stored_version_codecs(client: Client) -> dict[Resource, VersionCodec]:
    """Codecs for every converted kind whose code reads another version than its CRD stores."""
    stored: set[str] = set()
    try:
        for view in CONVERTED:
            crd = await client.get(CUSTOM_RESOURCE_DEFINITION, f"{view.plural}.{view.group}")
            if _stored(crd) == v1beta1.VERSION:
                stored.add(view.plural)
    except ApiError as err:
        served = await _served_as_v1beta1(client)
        stored = {v.plural for v in CONVERTED if v.kind in v1beta1.STORED and v.plural in served}
        log.info("Cannot read the CRDs; assuming this release's storage versions", error=str(err))
    codecs = storage_codecs(frozenset(stored))
    on_wire = {view.kind: (codecs[view].wire if view in codecs else view).version for view in CONVERTED}
    log.info(
        "Speaking each Dynamo kind in its storage version",
        v1beta1=sorted(k for k, v in on_wire.items() if v == v1beta1.VERSION),
        v1alpha1=sorted(k for k, v in on_wire.items() if v != v1beta1.VERSION),
    )
    return codecs
