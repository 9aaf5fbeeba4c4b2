"""The webhook certificates as pure data: issue, validity, what the Secret holds next at each moment of
a rotation, and the CRD bundle merge. Time is a parameter; nothing sleeps."""

from __future__ import annotations

import datetime
from collections.abc import Mapping

import pytest
from dynamo_operator.internal.cert import pki, state

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)
WANTED = state.Wanted(
    dns_names=state.service_names("webhook-service", "dynamo-system"),
    ip_addresses=("127.0.0.1",),
    lifetime=90 * DAY,
)


def never(_: object) -> bool:
    return False


def always(_: object) -> bool:
    return True


def fresh(now: datetime.datetime = T0) -> dict[str, bytes]:
    data = state.plan({}, WANTED, now, never)
    assert data is not None
    return data


def served(data: Mapping[str, bytes]) -> str:
    return pki.fingerprint(pki.load_certs(data[state.CERT])[0])


def bundle(data: Mapping[str, bytes]) -> list[str]:
    return [pki.fingerprint(c) for c in pki.load_certs(data[state.CA_BUNDLE])]


def test_an_empty_secret_gets_a_ca_and_a_serving_pair_for_the_service_names() -> None:
    data = fresh()
    assert set(data) == {state.CA_BUNDLE, state.CERT, state.KEY}
    leaf = pki.load_certs(data[state.CERT])[0]
    (ca,) = pki.load_certs(data[state.CA_BUNDLE])
    assert pki.signed_by(leaf, ca)
    assert pki.covers(
        leaf,
        ["webhook-service.dynamo-system.svc", "webhook-service.dynamo-system.svc.cluster.local", "localhost"],
        ["127.0.0.1"],
    )
    assert pki.key_matches(leaf, data[state.KEY])
    assert leaf.not_valid_after_utc == T0 + 90 * DAY
    assert state.serving(data, WANTED, T0)


def test_a_valid_secret_is_left_as_it_is() -> None:
    data = fresh()
    assert state.plan(data, WANTED, T0 + 30 * DAY, never) is None


def test_renewal_starts_at_two_thirds_of_the_validity() -> None:
    data = fresh()
    leaf = pki.load_certs(data[state.CERT])[0]
    renew = pki.renew_at(leaf)
    assert T0 + 59 * DAY < renew < T0 + 60 * DAY
    assert state.plan(data, WANTED, renew - datetime.timedelta(seconds=1), never) is None
    assert state.plan(data, WANTED, renew, never) is not None


def test_a_rotation_adds_the_new_ca_before_serving_the_new_certificate() -> None:
    data = fresh()
    at = pki.renew_at(pki.load_certs(data[state.CERT])[0])
    step1 = state.plan(data, WANTED, at, never)
    assert step1 is not None
    assert served(step1) == served(data)  # still the old pair
    assert len(bundle(step1)) == 2 and bundle(step1)[0] == bundle(data)[0]
    parked = pki.load_certs(step1[state.NEXT_CERT])[0]
    assert pki.signed_by(parked, pki.load_certs(step1[state.CA_BUNDLE])[1])
    # Until the CRDs trust the new CA nothing changes...
    assert state.plan(step1, WANTED, at + DAY, never) is None
    # ...then the parked pair is served, with both CAs still in the bundle.
    step2 = state.plan(step1, WANTED, at + DAY, always)
    assert step2 is not None
    assert served(step2) == pki.fingerprint(parked)
    assert bundle(step2) == bundle(step1)
    assert state.NEXT_CERT not in step2


def test_the_parked_pair_is_served_at_five_sixths_even_if_the_crds_never_trust_it() -> None:
    data = fresh()
    leaf = pki.load_certs(data[state.CERT])[0]
    step1 = state.plan(data, WANTED, pki.renew_at(leaf), never)
    assert step1 is not None
    assert state.plan(step1, WANTED, pki.force_at(leaf) - datetime.timedelta(seconds=1), never) is None
    step2 = state.plan(step1, WANTED, pki.force_at(leaf), never)
    assert step2 is not None and served(step2) == served({state.CERT: step1[state.NEXT_CERT]})


def test_the_old_ca_leaves_the_bundle_when_it_expires() -> None:
    data = fresh()
    leaf = pki.load_certs(data[state.CERT])[0]
    step1 = state.plan(data, WANTED, pki.renew_at(leaf), never)
    assert step1 is not None
    step2 = state.plan(step1, WANTED, pki.renew_at(leaf) + DAY, always)
    assert step2 is not None
    after = leaf.not_valid_after_utc + datetime.timedelta(seconds=1)
    step3 = state.plan(step2, WANTED, after, never)
    assert step3 is not None
    assert bundle(step3) == bundle(step2)[1:]
    assert served(step3) == served(step2)


def test_an_expired_pair_is_replaced_from_scratch() -> None:
    data = fresh()
    later = T0 + 91 * DAY
    new = state.plan(data, WANTED, later, never)
    assert new is not None
    assert set(bundle(new)).isdisjoint(bundle(data))
    assert state.serving(new, WANTED, later)


def test_a_change_of_service_name_issues_a_new_pair() -> None:
    data = fresh()
    other = state.Wanted(state.service_names("other", "dynamo-system"), ("127.0.0.1",), 90 * DAY)
    assert state.plan(data, other, T0, never) is not None


@pytest.mark.parametrize("damage", ["cert", "key", "bundle"])
def test_a_damaged_secret_is_replaced(damage: str) -> None:
    data = fresh()
    key = {"cert": state.CERT, "key": state.KEY, "bundle": state.CA_BUNDLE}[damage]
    broken = {**data, key: b"garbage"}
    new = state.plan(broken, WANTED, T0, never)
    assert new is not None and state.serving(new, WANTED, T0)


def test_the_next_deadline_is_the_renewal() -> None:
    data = fresh()
    leaf = pki.load_certs(data[state.CERT])[0]
    assert state.next_deadline(data, T0) == pki.renew_at(leaf)


def test_the_crd_bundle_keeps_our_unexpired_cas_and_drops_foreign_and_expired_ones() -> None:
    old, new = fresh(), fresh(T0 + 60 * DAY)
    (old_ca,) = pki.load_certs(old[state.CA_BUNDLE])
    (new_ca,) = pki.load_certs(new[state.CA_BUNDLE])
    foreign = pki.load_certs(_foreign_ca())
    # A replica that still wants only the old CA does not take the new one out.
    merged = pki.merge_bundle([old_ca], [old_ca, new_ca, *foreign], T0 + 61 * DAY)
    assert [pki.fingerprint(c) for c in merged] == [pki.fingerprint(old_ca), pki.fingerprint(new_ca)]
    # Once the old CA expired it goes.
    merged = pki.merge_bundle([new_ca], [old_ca, new_ca], T0 + 91 * DAY)
    assert [pki.fingerprint(c) for c in merged] == [pki.fingerprint(new_ca)]


def test_the_crd_bundle_is_the_same_bytes_whatever_the_order_given() -> None:
    a, b = fresh(), fresh(T0 + DAY)
    (ca_a,) = pki.load_certs(a[state.CA_BUNDLE])
    (ca_b,) = pki.load_certs(b[state.CA_BUNDLE])
    now = T0 + 2 * DAY
    assert pki.to_pem(pki.merge_bundle([ca_b, ca_a], [], now)) == pki.to_pem(
        pki.merge_bundle([ca_a], [ca_b], now)
    )


def _foreign_ca() -> bytes:
    from dynamo_operator.internal.manager import tls

    return tls.self_signed_pair("someone-else").cert


def test_a_year_of_rotations_on_a_fake_clock_always_serves_a_trusted_certificate() -> None:
    """Day by day over a year of 30-day certificates, with the CRDs catching up one day after each new
    CA: every day the served certificate is valid and signed by a CA of the bundle, and every CA a
    replica may still present (the one served the day before) stays in the bundle."""
    from dynamo_operator.internal.clock import FakeClock

    wanted = state.Wanted(WANTED.dns_names, WANTED.ip_addresses, 30 * DAY)
    clock = FakeClock(wall_start=T0)
    seen_since: dict[str, datetime.datetime] = {}

    def trusted(ca: object) -> bool:
        fp = pki.fingerprint(ca)  # type: ignore[arg-type]
        return fp in seen_since and clock.wall() - seen_since[fp] >= DAY

    data: dict[str, bytes] = {}
    served_before: str | None = None
    previous_leaf = None
    rotations = writes = 0
    for _ in range(365):
        now = clock.wall()
        if (new := state.plan(data, wanted, now, trusted)) is not None:
            data, writes = new, writes + 1
        for ca in pki.load_certs(data[state.CA_BUNDLE]):  # what the CRDs now carry
            seen_since.setdefault(pki.fingerprint(ca), now)
        assert state.serving(data, wanted, now)
        leaf = pki.load_certs(data[state.CERT])[0]
        bundle = pki.load_certs(data[state.CA_BUNDLE])
        if served_before is not None and served_before != pki.fingerprint(leaf):
            rotations += 1
        served_before = pki.fingerprint(leaf)
        assert any(pki.signed_by(leaf, ca) for ca in bundle)
        if previous_leaf is not None and pki.valid_at(previous_leaf, now):
            assert any(pki.signed_by(previous_leaf, ca) for ca in bundle), "a CA still in use left the bundle"
        previous_leaf = leaf
        clock.advance(DAY.total_seconds())
    # A new pair every 20 days (two thirds of 30), each rotation three writes at most: add the CA,
    # serve the pair, drop the expired CA.
    print(f"rotations {rotations}, writes {writes}")
    assert 17 <= rotations <= 19
    assert writes <= 1 + 3 * rotations + 3
