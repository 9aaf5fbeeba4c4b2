"""hack/local_webhook.py: the local control plane's CRDs call the webhook at a loopback URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import local_webhook
import yaml

REPO = Path(__file__).resolve().parents[3]
URL = "https://127.0.0.1:9443/convert"


def crds() -> list[dict[str, Any]]:
    return [
        d
        for f in sorted((REPO / "config" / "crd" / "bases").glob("*.yaml"))
        for d in yaml.safe_load_all(f.read_text())
        if d
    ]


def test_every_converted_crd_gets_the_url_instead_of_the_service() -> None:
    converted = [local_webhook.with_url(d, URL) for d in crds() if local_webhook.uses_webhook(d)]
    assert len(converted) == 4
    for doc in converted:
        config = doc["spec"]["conversion"]["webhook"]["clientConfig"]
        assert config == {"url": URL}


def test_crds_without_webhook_conversion_are_left_alone() -> None:
    others = [d for d in crds() if not local_webhook.uses_webhook(d)]
    assert [d["metadata"]["name"] for d in others] == ["dynamomodels.nvidia.com"]
    assert all(local_webhook.with_url(d, URL) is d for d in others)


def test_the_source_documents_are_not_changed() -> None:
    [doc] = [d for d in crds() if d["metadata"]["name"] == "dynamographdeployments.nvidia.com"]
    local_webhook.with_url(doc, URL)
    assert "service" in doc["spec"]["conversion"]["webhook"]["clientConfig"]


def test_the_merge_patch_removes_the_service_and_sets_the_url() -> None:
    config = local_webhook.merge_patch(URL)["spec"]["conversion"]["webhook"]["clientConfig"]
    assert config == {"service": None, "url": URL}
