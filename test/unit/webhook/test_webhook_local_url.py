"""hack/local_webhook.py: on the local control plane the CRDs' webhook Service is an ExternalName to a
loopback address; the CRDs themselves stay as shipped."""

from __future__ import annotations

from pathlib import Path

import local_webhook
from dynamo_operator.flags import DEFAULT_WEBHOOK_ADDRESS, DEFAULT_WEBHOOK_SERVICE

CRDS = Path(__file__).resolve().parents[3] / "config" / "crd" / "bases"


def test_the_crds_name_one_service_on_the_operators_port() -> None:
    [ref] = local_webhook.service_refs(local_webhook._docs([str(CRDS)]))
    assert ref.name == DEFAULT_WEBHOOK_SERVICE
    assert ref.namespace == "dynamo-system"
    # The API server dials an ExternalName on the CRD's port: it must be the one the operator serves.
    assert f":{ref.port}" == DEFAULT_WEBHOOK_ADDRESS


def test_the_service_is_an_external_name_to_the_address() -> None:
    ref = local_webhook.ServiceRef("hook", "ops", 9443)
    namespace, service = local_webhook.manifests(ref, "127.201.3.4")
    assert namespace == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ops"}}
    assert service["metadata"] == {"name": "hook", "namespace": "ops"}
    assert service["spec"]["type"] == "ExternalName"
    assert service["spec"]["externalName"] == "127.201.3.4"
    assert service["spec"]["ports"] == [{"name": "webhook", "port": 9443, "protocol": "TCP"}]
