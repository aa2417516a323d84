"""The pure rules of webhooks (levy.domain.webhooks, issue 35): retry schedule, URL policy, types."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.events import status_event, transaction_events
from levy.domain.webhooks import (
    DEFAULT_SCHEDULE,
    UrlPolicy,
    address_refused,
    check_event_types,
    check_url,
    next_attempt,
    parse_schedule,
    should_disable,
    wants,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_the_default_schedule_is_the_issues() -> None:
    waits = parse_schedule(DEFAULT_SCHEDULE)
    # 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 27 h 35 min 5 s in all (by hand: 5 + 300 + 1800 + 7200
    # + 18000 + 36000 + 36000 = 99305 s).
    assert [w.total_seconds() for w in waits] == [5, 300, 1800, 7200, 18000, 36000, 36000]
    assert sum(waits, timedelta()).total_seconds() == 99305
    assert parse_schedule("0.2s, 1d") == (timedelta(seconds=0.2), timedelta(days=1))
    with pytest.raises(ValueError):
        parse_schedule("5 minutes")


def test_next_attempt_follows_the_schedule_then_gives_up() -> None:
    waits = parse_schedule("5s,5m")
    assert next_attempt(waits, 1, NOW) == NOW + timedelta(seconds=5)
    assert next_attempt(waits, 2, NOW) == NOW + timedelta(minutes=5)
    assert next_attempt(waits, 3, NOW) is None


def test_disable_after_failing_long_enough() -> None:
    after = timedelta(hours=120)
    assert not should_disable(None, NOW, after)
    assert not should_disable(NOW - timedelta(hours=119), NOW, after)
    assert should_disable(NOW - timedelta(hours=120), NOW, after)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254",
                                     "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1",
                                     "224.0.0.1"])
def test_addresses_inside_the_network_are_refused_unless_allowed(address: str) -> None:
    assert address_refused(address, UrlPolicy()) is not None
    assert address_refused(address, UrlPolicy(allow_private=True)) is None


def test_public_addresses_pass() -> None:
    assert address_refused("93.184.216.34", UrlPolicy()) is None
    assert address_refused("2606:2800:220:1:248:1893:25c8:1946", UrlPolicy()) is None


def test_urls() -> None:
    assert check_url(" https://hooks.example.com/levy ", UrlPolicy()) == "https://hooks.example.com/levy"
    for bad in ("http://hooks.example.com/", "ftp://x/", "https://", "https://u:p@example.com/",
                "https://localhost./x", "https://db.internal/x", "https://[::1]/x"):
        with pytest.raises(ValidationFailed):
            check_url(bad, UrlPolicy())
    assert check_url("http://127.0.0.1:9/x", UrlPolicy(allow_http=True, allow_private=True))


def test_event_types() -> None:
    assert check_event_types(["*", "*"]) == ("*",)
    with pytest.raises(ValidationFailed) as e:
        check_event_types(["customer.created", "nope"])
    assert [i.pointer for i in e.value.items] == ["/enabled_events/1"]
    with pytest.raises(ValidationFailed):
        check_event_types([])
    assert wants(["*"], "filing.filed") and wants(["filing.filed"], "filing.filed")
    assert not wants(["filing.prepared"], "filing.filed")


def test_transaction_events() -> None:
    assert transaction_events("sale", "draft") == ("transaction.created",)
    assert transaction_events("sale", "finalized") == ("transaction.created", "transaction.finalized")
    assert transaction_events("credit", "draft") == ("credit.created",)
    assert status_event("draft", "finalized") == "transaction.finalized"
    assert status_event("finalized", "void") == "transaction.voided"
    assert status_event("finalized", "finalized") is None
    assert status_event("finalized", "draft") is None
