"""The conversion webhook on the real API server (loopback): a CRD of the test's own with two versions
(v1 stored, v2 converted by the webhook at a loopback URL), the operator's webhook wiring
(operator/webhook_setup.py) running in this process with the test's converter.

Every loop is bounded in count and time; assertions are on counts.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dynamo_operator import webhook_setup
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal.cert import pki, state
from dynamo_operator.internal.cert.selfsigned import SelfSignedCertificates, decode
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, SECRET
from dynamo_operator.internal.manager import tls
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.webhook import Tally, conversions, convert_once, widget_convert, widget_crd, widget_resource

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

FIELD_MANAGER = "integration-test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def port() -> int:
    return free_port()


@pytest.fixture
def group() -> str:
    return f"w{secrets.token_hex(4)}.webhook.dynamo.test"


@pytest.fixture
async def crd(api: Client, group: str, port: int) -> AsyncIterator[str]:
    """The test CRD, Established, pointing at the webhook's loopback port; deleted afterwards."""
    doc = widget_crd(group, f"https://127.0.0.1:{port}/convert")
    await api.apply(CUSTOM_RESOURCE_DEFINITION, doc, field_manager=FIELD_MANAGER, force=True)
    name = doc["metadata"]["name"]

    async def established() -> bool:
        got = await api.get(CUSTOM_RESOURCE_DEFINITION, name)
        return any(
            c.get("type") == "Established" and c.get("status") == "True"
            for c in (got.get("status") or {}).get("conditions") or []
        )

    await eventually(established, timeout=30)
    try:
        yield name
    finally:
        with contextlib.suppress(NotFound):
            await api.delete(CUSTOM_RESOURCE_DEFINITION, name)


def options(ns: str, port: int, **kw: Any) -> OperatorOptions:
    return OperatorOptions(leader_election_namespace=ns, webhook_bind_address=f"127.0.0.1:{port}", **kw)


@contextlib.asynccontextmanager
async def webhook(
    api: Client, ns: str, port: int, crd: str, **kw: Any
) -> AsyncIterator[webhook_setup.Webhook]:
    async with webhook_setup.serving(
        api, options(ns, port, **kw), convert=widget_convert, crd_names=[crd]
    ) as hook:
        assert hook is not None
        await eventually(lambda: hook.serving, timeout=30)
        yield hook


async def carried(api: Client, crd: str) -> bytes:
    got = await api.get(CUSTOM_RESOURCE_DEFINITION, crd)
    return base64.b64decode(got["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle") or "")


async def secret_data(api: Client, ns: str) -> dict[str, bytes]:
    return decode(await api.get(SECRET, OperatorOptions().webhook_secret_name, namespace=ns))


async def bundle_in_crd(api: Client, ns: str, crd: str) -> bool:
    try:
        data = await secret_data(api, ns)
    except NotFound:
        return False
    return await carried(api, crd) == data.get(state.CA_BUNDLE)


async def widget_v1(api: Client, group: str, ns: str, name: str, **spec: Any) -> None:
    body = {"metadata": {"name": name, "namespace": ns}, "spec": {"replicas": 3, **spec}}
    await api.create(widget_resource(group, "v1"), body)


async def first_conversion(api: Client, group: str, ns: str, name: str) -> None:
    """Wait until the API server converts through the webhook (it learns the new CA from its own watch)."""

    async def converted() -> bool:
        tally = Tally()
        await convert_once(api, group, ns, name, tally)
        return tally.ok == 1

    await eventually(converted, timeout=30, interval=0.2)


async def test_an_object_written_as_one_version_reads_as_the_other(
    api: Client, ns: str, port: int, crd: str, group: str
) -> None:
    async with webhook(api, ns, port, crd):
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        await widget_v1(api, group, ns, "a", replicas=3)
        await first_conversion(api, group, ns, "a")
        as_v2 = await api.get(widget_resource(group, "v2"), "a", namespace=ns)
        assert as_v2["apiVersion"] == f"{group}/v2"
        assert as_v2["spec"] == {"count": 3}
        # Written as v2 (converted to v1 for storage), read back as v1.
        await api.create(
            widget_resource(group, "v2"), {"metadata": {"name": "b", "namespace": ns}, "spec": {"count": 5}}
        )
        as_v1 = await api.get(widget_resource(group, "v1"), "b", namespace=ns)
        assert as_v1["spec"] == {"replicas": 5}
        # A LIST of the other version converts every object in one review.
        items = await api.list(widget_resource(group, "v2"), namespace=ns)
        assert sorted(i["spec"]["count"] for i in items) == [3, 5]


async def test_an_object_that_cannot_be_converted_fails_only_its_other_version_reads(
    api: Client, ns: str, port: int, crd: str, group: str
) -> None:
    async with webhook(api, ns, port, crd):
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        await widget_v1(api, group, ns, "good")
        await first_conversion(api, group, ns, "good")
        await widget_v1(api, group, ns, "bad", poison=True)
        assert (await api.get(widget_resource(group, "v1"), "bad", namespace=ns))["spec"]["poison"] is True
        with pytest.raises(ApiError) as err:
            await api.get(widget_resource(group, "v2"), "bad", namespace=ns)
        assert "spec.poison cannot be converted" in str(err.value)


async def test_a_stopped_webhook_still_serves_the_storage_version(
    api: Client, ns: str, port: int, crd: str, group: str
) -> None:
    """Reads and writes of the stored version need no conversion; only the other version fails."""
    async with webhook(api, ns, port, crd):
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        await widget_v1(api, group, ns, "a")
        await first_conversion(api, group, ns, "a")
    await widget_v1(api, group, ns, "b")
    await api.patch(widget_resource(group, "v1"), "a", {"spec": {"replicas": 7}}, namespace=ns)
    assert (await api.get(widget_resource(group, "v1"), "a", namespace=ns))["spec"]["replicas"] == 7

    async def refused() -> bool:
        probe = Tally()
        await convert_once(api, group, ns, "a", probe)
        return probe.failed == 1

    # Seen once in a full `make test` (three lanes): conversions still answered for a moment after the
    # webhook stopped. Wait for the first refusal (bounded), then every conversion must fail.
    await eventually(refused, until=bool, timeout=15)
    tally = Tally()
    for _ in range(3):
        await convert_once(api, group, ns, "a", tally)
    assert (tally.ok, tally.failed) == (0, 3)


async def test_two_replicas_converge_on_one_secret(
    api: Client, ns: str, port: int, crd: str, group: str
) -> None:
    """Started together, the replicas write the Secret once between them and serve the same pair."""
    async with webhook(api, ns, port, crd) as one, webhook(api, ns, port, crd) as two:
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        assert isinstance(one.certificates, SelfSignedCertificates)
        assert isinstance(two.certificates, SelfSignedCertificates)
        assert one.certificates.writes + two.certificates.writes == 1
        await eventually(lambda: one.certificates._loaded == two.certificates._loaded, timeout=10)
        await widget_v1(api, group, ns, "a")
        await first_conversion(api, group, ns, "a")
        stop = asyncio.Event()
        tally = await conversions(api, group, ns, "a", stop=stop, max_count=40, max_seconds=30)
        assert (tally.ok, tally.failed) == (40, 0), tally.errors


async def test_steady_state_writes_nothing(api: Client, ns: str, port: int, crd: str, group: str) -> None:
    async with webhook(api, ns, port, crd) as hook:
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        assert hook.injector is not None and isinstance(hook.certificates, SelfSignedCertificates)
        await widget_v1(api, group, ns, "a")
        await first_conversion(api, group, ns, "a")
        before = (hook.injector.writes, hook.certificates.writes)
        tally = await conversions(api, group, ns, "a", stop=asyncio.Event(), max_count=50, max_seconds=30)
        assert tally.failed == 0
        # A restart of the same replica reads the Secret and the CRD and writes nothing either.
        assert (hook.injector.writes, hook.certificates.writes) == before == (1, 1)
    async with webhook(api, ns, port, crd) as again:
        await first_conversion(api, group, ns, "a")
        assert again.injector is not None and isinstance(again.certificates, SelfSignedCertificates)
        assert (again.injector.writes, again.certificates.writes) == (0, 0)


@pytest.mark.parametrize("how", ["server-side apply of another bundle", "replace without a bundle"])
async def test_the_ca_bundle_is_put_back_after_the_crd_is_overwritten(  # noqa: PLR0917 - fixtures
    api: Client, kubectl: Kubectl, ns: str, port: int, crd: str, group: str, how: str
) -> None:
    async with webhook(api, ns, port, crd) as hook:
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        assert hook.injector is not None
        await widget_v1(api, group, ns, "a")
        await first_conversion(api, group, ns, "a")
        writes = hook.injector.writes
        url = f"https://127.0.0.1:{port}/convert"
        if how.startswith("server-side"):
            # What `helm upgrade` or `kubectl apply --server-side --force-conflicts` of manifests that
            # carry some other bundle (a stale one, another install's) does.
            stale = base64.b64encode(tls.self_signed_pair("stale-ca").cert).decode()
            doc = widget_crd(group, url, ca_bundle=stale)
            await asyncio.to_thread(
                kubectl, "apply", "--server-side", "--force-conflicts", "--field-manager=helm", "-f", "-",
                stdin=json.dumps(doc),
            )  # fmt: skip
        else:
            await asyncio.to_thread(kubectl, "replace", "-f", "-", stdin=json.dumps(widget_crd(group, url)))
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        # The injector counts its write once the API server answered it, a moment after the bundle
        # can already be read back: wait for the count, then make sure it is exactly one write.
        injector = hook.injector
        await eventually(lambda: injector.writes, until=lambda n: n > writes, timeout=10)
        assert injector.writes == writes + 1
        await first_conversion(api, group, ns, "a")


async def test_rotation_keeps_every_conversion(api: Client, ns: str, port: int, crd: str, group: str) -> None:
    """A 24 s lifetime: a rotation starts about every 16 s. Two replicas serve while a reader converts
    without pause through two rotations; not one conversion fails."""
    lifetime = 24.0
    async with (
        webhook(api, ns, port, crd, webhook_cert_lifetime=lifetime) as one,
        webhook(api, ns, port, crd, webhook_cert_lifetime=lifetime),
    ):
        await eventually(lambda: bundle_in_crd(api, ns, crd), timeout=30)
        await widget_v1(api, group, ns, "a")
        await first_conversion(api, group, ns, "a")
        served: list[str] = []
        stop = asyncio.Event()

        async def watch_rotations() -> None:
            for _ in range(900):  # bounded: 90 s
                data = await secret_data(api, ns)
                fp = pki.fingerprint(pki.load_certs(data[state.CERT])[0])
                if not served or served[-1] != fp:
                    served.append(fp)
                if len(served) >= 3:
                    await asyncio.sleep(2.0)  # a few conversions on the newest pair
                    break
                await asyncio.sleep(0.1)
            stop.set()

        watcher = asyncio.create_task(watch_rotations())
        tally = await conversions(api, group, ns, "a", stop=stop, max_count=20_000, max_seconds=100)
        await watcher
        assert len(served) >= 3, f"only {len(served) - 1} rotations seen"
        assert tally.failed == 0, tally.errors
        assert tally.ok > 100
        assert isinstance(one.certificates, SelfSignedCertificates)
        print(f"rotations: {len(served) - 1}, conversions: {tally.ok}, failed: {tally.failed}")
