"""Economic nexus evaluation with hand-worked figures, and threshold data integrity."""

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

from functools import partial

import pytest

import levy
from levy.domain import nexus
from levy.domain.nexus import (
    DatedSale,
    MeasurementPeriod as MP,
    NexusThreshold,
    Rule,
    evaluate_nexus,
    measurement_windows,
)
from levy.store.reference_data import nexus_thresholds as load_thresholds

threshold_for = partial(nexus.threshold_for, load_thresholds())


def th(rule=Rule.SALES_ONLY, period=MP.PREVIOUS_OR_CURRENT_CALENDAR_YEAR, sales=10_000_000, txns=None):
    return NexusThreshold("XX", sales, txns, rule, period, date(2020, 1, 1), "test")


# -- crossed by amount -------------------------------------------------------

def test_crossed_by_amount_current_year():
    # $100,000.00 threshold = 10,000,000 cents.
    # 2025-02-01: 4,000,000; 2025-03-15: 5,000,000 (running 9,000,000);
    # 2025-04-10: 1,000,000 -> running 10,000,000 = threshold, met on 04-10;
    # 2025-05-01: 500,000 -> total 10,500,000; share 1.05.
    sales = [
        DatedSale(date(2025, 2, 1), 4_000_000),
        DatedSale(date(2025, 3, 15), 5_000_000),
        DatedSale(date(2025, 4, 10), 1_000_000),
        DatedSale(date(2025, 5, 1), 500_000),
    ]
    r = evaluate_nexus(th(), sales, date(2025, 6, 30))
    assert (r.period_start, r.period_end) == (date(2025, 1, 1), date(2025, 6, 30))
    assert r.sales == 10_500_000
    assert r.transactions == 4
    assert r.share == Decimal("1.0500")
    assert r.exceeded is True
    assert r.crossed_on == date(2025, 4, 10)
    # previous year window was empty
    assert r.periods[0].sales == 0 and r.periods[0].exceeded is False


def test_just_below_amount_not_exceeded():
    # 9,999,999 cents of 10,000,000: share 0.9999999 -> 1.0000 after rounding, but not met.
    r = evaluate_nexus(th(), [DatedSale(date(2025, 1, 5), 9_999_999)], date(2025, 12, 31))
    assert r.exceeded is False and r.crossed_on is None
    assert r.share == Decimal("1.0000")


def test_credit_reduces_and_same_day_order_irrelevant():
    # Same day: credit first, then sale: day total 10,200,000 - 300,000 = 9,900,000 < threshold.
    sales = [
        DatedSale(date(2025, 3, 1), -300_000, 0),
        DatedSale(date(2025, 3, 1), 10_200_000),
    ]
    r = evaluate_nexus(th(), sales, date(2025, 3, 31))
    assert r.sales == 9_900_000 and r.transactions == 1
    assert r.exceeded is False and r.crossed_on is None
    assert r.share == Decimal("0.9900")


def test_credit_after_crossing_keeps_crossed_on_but_not_exceeded():
    # 03-01: 10,000,000 (met); 03-20 credit -2,000,000 -> total 8,000,000, share 0.80.
    sales = [DatedSale(date(2025, 3, 1), 10_000_000), DatedSale(date(2025, 3, 20), -2_000_000, 0)]
    r = evaluate_nexus(th(), sales, date(2025, 4, 1))
    assert r.crossed_on == date(2025, 3, 1)
    assert r.exceeded is False
    assert r.share == Decimal("0.8000")


def test_sales_after_as_of_ignored():
    sales = [DatedSale(date(2025, 1, 2), 6_000_000), DatedSale(date(2025, 7, 1), 6_000_000)]
    r = evaluate_nexus(th(), sales, date(2025, 6, 30))
    assert r.sales == 6_000_000 and r.exceeded is False and r.share == Decimal("0.6000")


# -- crossed by count --------------------------------------------------------

def test_crossed_by_count_or_rule():
    # $100,000 or 200 transactions. 150 sales of $100 on 2025-01-10 and 50 on 2025-02-10:
    # count 150 then 200 -> met on 02-10 by count; sales 200 * 10,000 = 2,000,000 cents (share 0.2).
    # share = max(0.2, 200/200 = 1.0) = 1.0000.
    t = th(Rule.SALES_OR_TRANSACTIONS, txns=200)
    sales = [DatedSale(date(2025, 1, 10), 150 * 10_000, 150), DatedSale(date(2025, 2, 10), 50 * 10_000, 50)]
    r = evaluate_nexus(t, sales, date(2025, 3, 1))
    assert r.transactions == 200 and r.sales == 2_000_000
    assert r.exceeded is True and r.crossed_on == date(2025, 2, 10)
    assert r.share == Decimal("1.0000")


def test_or_rule_by_amount_before_count():
    t = th(Rule.SALES_OR_TRANSACTIONS, txns=200)
    r = evaluate_nexus(t, [DatedSale(date(2025, 5, 5), 12_000_000, 3)], date(2025, 5, 5))
    # share = max(12,000,000/10,000,000 = 1.2, 3/200 = 0.015) = 1.2
    assert r.exceeded and r.crossed_on == date(2025, 5, 5) and r.share == Decimal("1.2000")


# -- and rule ----------------------------------------------------------------

def test_and_rule_needs_both():
    # NY-like: $500,000 (50,000,000 cents) and 100 transactions, trailing 12 months for simplicity.
    t = th(Rule.SALES_AND_TRANSACTIONS, MP.TRAILING_12_MONTHS, sales=50_000_000, txns=100)
    # 2025-01-15: one sale of $600,000 -> amount met, count 1 of 100: not met.
    # share = min(60,000,000/50,000,000 = 1.2, 1/100 = 0.01) = 0.0100
    sales = [DatedSale(date(2025, 1, 15), 60_000_000, 1)]
    r = evaluate_nexus(t, sales, date(2025, 3, 1))
    assert r.exceeded is False and r.crossed_on is None and r.share == Decimal("0.0100")
    # 2025-02-20: 99 small sales of $10 (99,000 cents) -> count 100, amount 60,099,000: both met on 02-20.
    sales.append(DatedSale(date(2025, 2, 20), 99_000, 99))
    r = evaluate_nexus(t, sales, date(2025, 3, 1))
    assert r.transactions == 100 and r.sales == 60_099_000
    assert r.exceeded is True and r.crossed_on == date(2025, 2, 20)
    # share = min(60,099,000/50,000,000 = 1.20198 -> 1.2020, 100/100 = 1) = 1.0000
    assert r.share == Decimal("1.0000")


# -- trailing 12 months --------------------------------------------------------

def test_trailing_12_months_window_and_drop_off():
    t = th(period=MP.TRAILING_12_MONTHS)
    # as_of 2025-06-15: window 2024-06-16 .. 2025-06-15.
    sales = [
        DatedSale(date(2024, 6, 15), 5_000_000),  # one day too old
        DatedSale(date(2024, 6, 16), 3_000_000),  # first day in
        DatedSale(date(2024, 12, 1), 4_000_000),  # running 7,000,000
        DatedSale(date(2025, 6, 15), 3_000_000),  # running 10,000,000: met on the as_of day
    ]
    r = evaluate_nexus(t, sales, date(2025, 6, 15))
    assert (r.period_start, r.period_end) == (date(2024, 6, 16), date(2025, 6, 15))
    assert r.sales == 10_000_000 and r.transactions == 3
    assert r.exceeded and r.crossed_on == date(2025, 6, 15)
    # one day later the 2024-06-16 sale drops out: 7,000,000 -> share 0.7
    r2 = evaluate_nexus(t, sales, date(2025, 6, 16))
    assert r2.sales == 7_000_000 and not r2.exceeded and r2.share == Decimal("0.7000")


def test_trailing_12_months_leap_day():
    assert measurement_windows(MP.TRAILING_12_MONTHS, date(2024, 2, 29)) == [(date(2023, 3, 1), date(2024, 2, 29))]


# -- previous calendar year -----------------------------------------------------

def test_previous_calendar_year_only():
    t = th(period=MP.PREVIOUS_CALENDAR_YEAR, sales=25_000_000)  # AL-like $250,000
    sales = [
        DatedSale(date(2024, 3, 1), 20_000_000),
        DatedSale(date(2024, 11, 30), 5_000_000),  # 2024 total 25,000,000: met on 11-30
        DatedSale(date(2025, 1, 2), 30_000_000),  # current year: not looked at
    ]
    r = evaluate_nexus(t, sales, date(2025, 2, 1))
    assert (r.period_start, r.period_end) == (date(2024, 1, 1), date(2024, 12, 31))
    assert r.sales == 25_000_000 and r.exceeded and r.crossed_on == date(2024, 11, 30)
    assert len(r.periods) == 1
    # As of 2024-12-15 the previous year is 2023 (empty): not met.
    r = evaluate_nexus(t, sales, date(2024, 12, 15))
    assert r.sales == 0 and not r.exceeded and r.share == Decimal("0.0000")


def test_previous_or_current_picks_previous_year_when_it_met():
    sales = [DatedSale(date(2024, 8, 1), 11_000_000), DatedSale(date(2025, 2, 1), 2_000_000)]
    r = evaluate_nexus(th(), sales, date(2025, 3, 1))
    assert r.period_start == date(2024, 1, 1) and r.exceeded and r.crossed_on == date(2024, 8, 1)
    assert [p.sales for p in r.periods] == [11_000_000, 2_000_000]


def test_previous_or_current_none_met_reports_largest_share():
    sales = [DatedSale(date(2024, 8, 1), 3_000_000), DatedSale(date(2025, 2, 1), 4_000_000)]
    r = evaluate_nexus(th(), sales, date(2025, 3, 1))
    assert r.period_start == date(2025, 1, 1) and r.share == Decimal("0.4000") and not r.exceeded


# -- other windows ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("period", "as_of", "expected"),
    [
        (MP.TRAILING_12_MONTHS_ENDING_LAST_QUARTER, date(2025, 5, 10), [(date(2024, 4, 1), date(2025, 3, 31))]),
        (MP.TRAILING_12_MONTHS_ENDING_LAST_QUARTER, date(2025, 1, 1), [(date(2024, 1, 1), date(2024, 12, 31))]),
        (MP.TWELVE_MONTHS_ENDING_SEPTEMBER_30, date(2025, 9, 30), [(date(2024, 10, 1), date(2025, 9, 30))]),
        (MP.TWELVE_MONTHS_ENDING_SEPTEMBER_30, date(2025, 9, 29), [(date(2023, 10, 1), date(2024, 9, 30))]),
        (MP.PRECEDING_FOUR_SALES_TAX_QUARTERS, date(2025, 7, 4), [(date(2024, 6, 1), date(2025, 5, 31))]),
        (MP.PRECEDING_FOUR_SALES_TAX_QUARTERS, date(2025, 1, 15), [(date(2023, 12, 1), date(2024, 11, 30))]),
        (MP.PRECEDING_FOUR_SALES_TAX_QUARTERS, date(2025, 12, 1), [(date(2024, 12, 1), date(2025, 11, 30))]),
        (MP.PRECEDING_FOUR_SALES_TAX_QUARTERS, date(2024, 3, 1), [(date(2023, 3, 1), date(2024, 2, 29))]),
    ],
)
def test_windows(period, as_of, expected):
    assert measurement_windows(period, as_of) == expected


def test_no_threshold_state_refused():
    t = NexusThreshold("OR", None, None, None, None, date(2018, 6, 21), "x")
    with pytest.raises(ValueError):
        evaluate_nexus(t, [], date(2025, 1, 1))


# -- data file ---------------------------------------------------------------------

STATES_WITH_TAX = set(
    "AL AK AZ AR CA CO CT DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO NE NV NJ NM NY NC ND "
    "OH OK PA PR RI SC SD TN TX UT VT VA WA WV WI WY".split()
)
NO_TAX = {"DE", "MT", "NH", "OR"}


def test_every_state_plus_dc_and_puerto_rico_listed():
    data = load_thresholds()
    assert set(data) == STATES_WITH_TAX | NO_TAX
    assert len(STATES_WITH_TAX) == 48  # 46 states + DC + PR (AK: local remote-seller commission)
    # Puerto Rico: $100,000 of sales or 200 transactions (Hacienda Regulation 9237, from 2021-01-01).
    [pr] = data["PR"]
    assert (pr.sales_threshold, pr.transaction_threshold, pr.rule) == (10_000_000, 200, "sales_or_transactions")


def test_entries_well_formed():
    doc = json.loads((Path(levy.__file__).parent / "data" / "nexus" / "thresholds.json").read_text())
    assert doc["version"] and doc["effective_from"]
    for e in doc["thresholds"]:
        assert e["source"], e["state"]
        if e["state"] in NO_TAX:
            assert e["sales_threshold"] is None and e["rule"] is None and e["has_sales_tax"] is False
            continue
        assert isinstance(e["sales_threshold"], int) and e["sales_threshold"] % 100 == 0
        assert (e["transaction_threshold"] is None) == (e["rule"] == "sales_only")


def test_known_values_in_cents():
    on = date(2026, 3, 1)
    assert threshold_for("CA", on).sales_threshold == 50_000_000
    assert threshold_for("AL", on).sales_threshold == 25_000_000
    ny = threshold_for("NY", on)
    assert (ny.rule, ny.transaction_threshold, ny.measurement_period) == (
        Rule.SALES_AND_TRANSACTIONS, 100, MP.PRECEDING_FOUR_SALES_TAX_QUARTERS
    )
    ct = threshold_for("CT", on)
    assert ct.rule is Rule.SALES_AND_TRANSACTIONS and ct.measurement_period is MP.TWELVE_MONTHS_ENDING_SEPTEMBER_30
    assert threshold_for("OR", on).has_threshold is False


def test_illinois_history():
    assert threshold_for("IL", date(2025, 12, 31)).rule is Rule.SALES_OR_TRANSACTIONS
    assert threshold_for("IL", date(2026, 1, 1)).rule is Rule.SALES_ONLY
    assert threshold_for("IL", date(2018, 1, 1)) is None
