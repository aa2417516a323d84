"""The pure rules of the events job and of WatchEvents (issue 35): which certificates and nexus
states are due an event, their keys, and the cursor's gaps. Expectations worked by hand."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.event_jobs import (
    certificate_event,
    certificate_key,
    certificate_window,
    nexus_event,
    nexus_key,
)
from levy.domain.events import WatchCursor, parse_types
from levy.domain.nexus import MeasurementPeriod, Rule
from levy.domain.nexus_report import NexusStateReport

TODAY = date(2026, 6, 15)


@pytest.mark.parametrize(("status", "expires", "expected"), [
    ("valid", date(2026, 7, 15), "certificate.expiring"),  # 30 days ahead: the first day
    ("valid", date(2026, 7, 16), None),  # 31 days ahead
    ("valid", TODAY, "certificate.expiring"),  # its last day covered is today
    ("in_review", date(2026, 6, 20), "certificate.expiring"),
    ("valid", date(2026, 6, 14), "certificate.expired"),  # yesterday
    ("valid", date(2026, 5, 16), "certificate.expired"),  # 30 days ago
    ("valid", date(2026, 5, 15), None),  # 31 days ago: too old to announce
    ("rejected", date(2026, 6, 20), None),
    ("renewed", date(2026, 6, 14), None),
    ("expired", date(2026, 6, 14), None),
    ("valid", None, None),
])
def test_certificate_event(status: str, expires: date | None, expected: str | None) -> None:
    assert certificate_event(status, expires, TODAY, 30) == expected


def test_certificate_window_and_key() -> None:
    assert certificate_window(TODAY, 30) == (date(2026, 5, 16), date(2026, 7, 15))
    assert certificate_key("certificate.expiring", "cexc_1", date(2026, 7, 1)) == \
        "certificate.expiring:cexc_1:2026-07-01"


STATE = NexusStateReport(
    state="TX", jurisdiction_code="US-ST-TX", as_of=TODAY, period_start=date(2025, 6, 16), period_end=TODAY,
    sales=40_000_000, transactions=3, sales_threshold=50_000_000, transaction_threshold=None, rule=Rule.SALES_ONLY,
    measurement_period=MeasurementPeriod.TRAILING_12_MONTHS, share=Decimal("0.8000"), exceeded=False,
    registered=False, crossed_on=None, threshold_source="x",
)


def test_nexus_event_follows_the_reports_standing() -> None:
    eighty = Decimal("0.8")
    assert nexus_event(STATE, eighty) == "nexus.threshold_approaching"  # 0.8 exactly: approaching
    assert nexus_event(replace(STATE, share=Decimal("0.7999")), eighty) is None
    assert nexus_event(replace(STATE, share=Decimal("0.7999")), Decimal("0.5")) == "nexus.threshold_approaching"
    assert nexus_event(STATE, Decimal("0.95")) is None  # the organization's own share
    crossed = replace(STATE, share=Decimal("1.1"), exceeded=True)
    assert nexus_event(crossed, eighty) == "nexus.threshold_crossed"  # not registered: "register"
    assert nexus_event(replace(crossed, registered=True), Decimal("0.95")) == "nexus.threshold_crossed"
    assert nexus_key("nexus.threshold_crossed", crossed) == "nexus.threshold_crossed:US-ST-TX:2026"
    # A previous-calendar-year rule: the key is the measurement year's.
    previous = replace(crossed, period_start=date(2025, 1, 1), period_end=date(2025, 12, 31))
    assert nexus_key("nexus.threshold_crossed", previous) == "nexus.threshold_crossed:US-ST-TX:2025"


def test_parse_types_points_at_each_unknown_type() -> None:
    assert parse_types(["customer.created"]) == {"customer.created"}
    with pytest.raises(ValidationFailed) as e:
        parse_types(["customer.created", "nope", "customer.updated", "x"])
    assert [i.pointer for i in e.value.items] == ["/types/1", "/types/3"]


def test_watch_cursor_reads_gaps_again_until_they_expire() -> None:
    c = WatchCursor(10)
    c.advance([11, 13, 15], now=0.0)  # 12 and 14 not committed yet
    assert (c.after, sorted(c.gaps)) == (15, [12, 14])
    c.advance([14, 16], now=5.0)  # 14 committed late: read, no longer a gap
    assert (c.after, sorted(c.gaps)) == (16, [12])
    c.advance([], now=31.0)  # 12 never came within 30 s (rolled back): dropped
    assert (c.after, c.gaps) == (16, {})
