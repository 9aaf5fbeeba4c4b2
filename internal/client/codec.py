"""Speaking one resource in another version on the wire than its callers read and write.

A CRD served in two versions stores one of them. An operator whose code reads the other version
would make the API server call the conversion webhook on every list, watch event and write. With a
`VersionCodec` the client talks to the API server in the stored version (`wire`) and hands callers
the version they are written against: a response is decoded once, as it arrives (so a cache holds
the callers' version and never converts on a read), and a whole object is encoded once, as it
leaves. The runtime knows no kind: the codecs are a parameter of the `Client`.

Patches are sent as they are given, since a partial body cannot be converted on its own: a caller
writes them in the wire version (metadata and `spec.replicas` read the same in both), and a status
patch is computed between two encoded objects (`StatusWriter`).
"""

from __future__ import annotations

from typing import Protocol

from dynamo_operator.internal.client.model import Obj
from dynamo_operator.internal.client.resource import Resource


class VersionCodec(Protocol):
    """Converts the objects of one resource between the callers' version and the wire's."""

    @property
    def wire(self) -> Resource:
        """The same collection in the version the API server is spoken to in."""
        ...

    def decode(self, obj: Obj) -> Obj:
        """A whole object read in the wire version, in the callers' version (a new object)."""
        ...

    def encode(self, obj: Obj) -> Obj:
        """A whole object in the callers' version, in the wire version (a new object)."""
        ...


def same_collection(a: Resource, b: Resource) -> bool:
    """Two descriptors name one collection when only their version differs."""
    return (a.group, a.plural) == (b.group, b.plural)
