"""Which of Dynamo's kinds the operator speaks in v1beta1, asked of the API server once at start.

CRDs of this release store v1beta1, and the operator then lists, watches and writes v1beta1
(`internal/stored_version.py`). CRDs installed by an older release may not serve v1beta1 yet; the
operator then keeps to v1alpha1 for those kinds, so upgrading the operator before the CRDs works.
"""

from __future__ import annotations

import structlog
from dynamo_operator.api.v1beta1 import groupversion as beta
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.stored_version import CONVERTED, storage_codecs

log = structlog.get_logger(__name__)


async def stored_version_codecs(client: Client) -> dict[Resource, VersionCodec]:
    """Codecs for every converted kind the API server serves as v1beta1."""
    listed = await client.api_resources(beta.API_VERSION) or []
    served = frozenset(str(r.get("name")) for r in listed if "/" not in str(r.get("name")))
    codecs = storage_codecs(served)
    missing = [r.kind for r in CONVERTED if r not in codecs]
    if missing:
        log.warning(
            "CRDs without nvidia.com/v1beta1: these kinds are read as v1alpha1, through the conversion "
            "webhook once storage moves; apply this release's CRDs",
            kinds=missing,
        )
    else:
        log.info("Reading and writing Dynamo's kinds as nvidia.com/v1beta1, the storage version")
    return codecs
