"""Plain data the client returns: objects are dicts; pages and watch events are small records."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Literal

Obj = dict[str, Any]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]


class PatchType(enum.Enum):
    """The PATCH flavours, as their Content-Type."""

    MERGE = "application/merge-patch+json"  # RFC 7386: maps merge, lists replace, null deletes
    JSON = "application/json-patch+json"  # RFC 6902 operations; not idempotent (e.g. list add)
    STRATEGIC = "application/strategic-merge-patch+json"  # built-in kinds only: lists merge by key
    APPLY = "application/apply-patch+yaml"  # server-side apply; our JSON body is valid YAML


@dataclass(frozen=True, slots=True)
class ListPage:
    """One page of a LIST; `continue_token` is None on the last page."""

    items: list[Obj]
    resource_version: str
    continue_token: str | None


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One line of a watch stream. ERROR carries a `Status` object; BOOKMARK only a resourceVersion."""

    type: WatchEventType
    object: Obj
