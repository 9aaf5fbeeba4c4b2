"""The LoRA management API of a serving pod (its `system` port): URLs and bodies."""

from __future__ import annotations

from typing import TypedDict
from urllib.parse import quote, urlsplit, urlunsplit

LORAS_PATH = "v1/loras"


def _join(base: str, *segments: str) -> str:
    """Append path segments to `base`, keeping its scheme, host and any path prefix it already has."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/") + "/" + "/".join(s.strip("/") for s in segments)
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def load_url(address: str) -> str:
    """`POST` here to load an adapter."""
    return _join(address, LORAS_PATH)


def unload_url(address: str, lora_name: str) -> str:
    """`DELETE` here to unload an adapter; the name is one escaped path segment (`/` → `%2F`)."""
    return _join(address, LORAS_PATH) + "/" + quote(lora_name, safe="")


class LoraSource(TypedDict):
    uri: str


class LoadBody(TypedDict):
    """What the engine's POST /v1/loras takes."""

    lora_name: str
    source: LoraSource


def load_body(lora_name: str, source_uri: str) -> LoadBody:
    return {"lora_name": lora_name, "source": {"uri": source_uri}}


def is_success(status: int) -> bool:
    return 200 <= status < 300
