"""Item rules on tax-inclusive lines (issue 31): single-article bands and caps, delivery that follows
the goods or is taxed in their taxable share, and thresholds that count delivery, when the line's
amount includes its tax (docs/tax-engine.md, "Tax-inclusive prices").

Rates are those of test_item_rules (the March 2026 per-ZIP rows): Nashville 37201 state 7% + Davidson
County 2.25% (local on the first $1,600 of an article, T.C.A. 67-6-702(a); state 2.75% more on
$1,600.01-$3,200, 67-6-202); Miami 33101 state 6% + surtax 1% on the first $5,000 (Fla. Stat.
212.054(2)(b)); Austin 78701 8.25%; Colonie 12203 state 4% + Albany County 4%. Figures worked by hand:
P solves P + tax(P) = amount on the segment of the bands where it falls, rounded half up; the rows are
those of a tax-exclusive line of price P; cents placed by largest remainder.
"""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal
from fractions import Fraction

import test_item_rules
from hypothesis import given, settings
from hypothesis import strategies as st
from tax_helpers import mkline
from test_item_rules import GOODS, GROCERY, SHIP, SHIRT, by_type, calc

from levy.domain.tax.engine import _inclusive_split
from levy.domain.tax.item_rules import Band
from levy.domain.tax.rate_table import JurisdictionRate
from levy.domain.tax.taxability import Rule

table = test_item_rules.table  # the same rate table fixture (Nashville, Miami, Austin, Colonie)


def inc(*args, **kw):  # type: ignore[no-untyped-def]
    return mkline(*args, inclusive=True, **kw)


# ----------------------------------------------------------------- Tennessee
def test_tennessee_5000_inclusive(table, rules):
    # $5,000 paid, tax included. Above $3,200 of price the tax is 7% x P + 2.25% x 1,600 (36.00)
    # + 2.75% x 1,600 (44.00) = 0.07 P + 8000: P + 0.07 P + 8000 = 500000 -> P = 492000 / 1.07
    # = 459813.08 -> 459813 (above 320000: on that segment). Tax 500000 - 459813 = 40187.
    # Rows at P: state 459813 x 7% = 32186.91 -> 32187; band 160000 x 2.75% = 4400; county 160000 x 2.25%
    # = 3600: 40187, no cent to place.
    line = calc(table, rules, inc("1", "TN", GOODS, price=500000, zip="37201")).lines[0]
    assert (line.taxable_amount, line.tax_amount) == (459813, 40187)
    assert by_type(line) == [("state", 459813, 32187), ("state", 160000, 4400), ("county", 160000, 3600)]
    assert line.taxable_amount + line.tax_amount == 500000
    assert "67-6-202" in line.taxes[1].rule_name and "first $1,600.00" in line.taxes[2].detail


def test_tennessee_2500_inclusive_in_the_band(table, rules):
    # $2,500 paid: P between 1,600 and 3,200: tax = 0.07 P + 3600 + 0.0275 (P - 160000) = 0.0975 P - 800;
    # P = 250800 / 1.0975 = 228519.36 -> 228519; tax 21481. Rows: state 15996.33 -> 15996; band
    # 68519 x 2.75% = 1884.27 -> 1884; county 3600: 21480, one cent short: to the state (lost 0.33 > 0.27).
    line = calc(table, rules, inc("1", "TN", GOODS, price=250000, zip="37201")).lines[0]
    assert (line.taxable_amount, line.tax_amount) == (228519, 21481)
    assert by_type(line) == [("state", 228519, 15997), ("state", 68519, 1884), ("county", 160000, 3600)]


def test_tennessee_at_the_1600_edge_and_five_articles(table, rules):
    # 1,600 x 1.0925 = 1,748.00 paid: P = 160000 exactly, the band empty: 11200 + 3600.
    line = calc(table, rules, inc("1", "TN", GOODS, price=174800, zip="37201")).lines[0]
    assert by_type(line) == [("state", 160000, 11200), ("county", 160000, 3600)]
    # Five articles of $1,000 paid each (tax included): each under the cap: 9.25% on all.
    # P = 500000 / 1.0925 = 457665.90 -> 457666; tax 42334: 32036.62 -> 32037 + 10297.485 -> 10297.
    line = calc(table, rules, inc("1", "TN", GOODS, qty="5", price=100000, zip="37201")).lines[0]
    assert (line.taxable_amount, line.tax_amount) == (457666, 42334)
    assert by_type(line) == [("state", 457666, 32037), ("county", 457666, 10297)]


# ----------------------------------------------------------------- Florida
def test_florida_7200_inclusive(table, rules):
    # $7,200 paid: above $5,000 of price: tax = 0.06 P + 5000; P = 715000 / 1.06 = 674528.30 -> 674528;
    # tax 45472: state 40471.68 -> 40472, surtax 5000 (on the first 5,000.00): 45472.
    line = calc(table, rules, inc("1", "FL", GOODS, price=720000, zip="33101")).lines[0]
    assert (line.taxable_amount, line.tax_amount) == (674528, 45472)
    assert by_type(line) == [("state", 674528, 40472), ("county", 500000, 5000)]
    assert "212.054" in line.taxes[1].detail


# ----------------------------------------------------------------- delivery
def test_austin_groceries_and_inclusive_delivery(table, rules):
    # 34 TAC 3.303: groceries only: the $9.99 delivery carries no tax: its price is all of it.
    res = calc(table, rules, inc("1", "TX", GROCERY, price=5000, zip="78701"),
               inc("2", "TX", SHIP, price=999, zip="78701"))
    ship = res.lines[1]
    assert (res.tax_amount, ship.taxable_amount, ship.tax_amount) == (0, 999, 0)
    assert all("every good delivered is exempt" in r.detail for r in ship.taxes)


def test_ny_mixed_inclusive_shipment(table, rules):
    # Colonie, everything tax included. Shirt $50 (state-exempt under $110, county 4%): P = 5000 / 1.04
    # = 4807.69 -> 4808, county 192.32 -> 192. Lamp $150 at 8%: P = 15000 / 1.08 = 13888.89 -> 13889,
    # tax 1111; rows 555.56 -> 556 twice = 1112, one over: back from the state (tie, the earlier): 555 + 556.
    # Delivery $10: goods 18697 of which 13889 taxable by the state, all by the county (TB-ST-838):
    # P (1 + 0.04 x 13889/18697 + 0.04) = 1000 -> P = 934.83 -> 935; tax 65. Rows at P: state base
    # 935 x 13889/18697 = 694.56 -> 695, 4% = 27.8 -> 28; county 935 x 4% = 37.4 -> 37: 65.
    res = calc(table, rules, inc("1", "NY", SHIRT, price=5000, zip="12203"),
               inc("2", "NY", GOODS, price=15000, zip="12203"), inc("3", "NY", SHIP, price=1000, zip="12203"))
    shirt, lamp, ship = res.lines
    assert (shirt.taxable_amount, by_type(shirt)) == (4808, [("state", 0, 0), ("county", 4808, 192)])
    assert (lamp.taxable_amount, by_type(lamp)) == (13889, [("state", 13889, 555), ("county", 13889, 556)])
    assert (ship.taxable_amount, by_type(ship)) == (935, [("state", 695, 28), ("county", 935, 37)])
    assert ship.amount == 935 and ship.tax_amount_before_discounts == 65
    assert res.tax_amount == 192 + 1111 + 65
    assert "$138.89 of $186.97" in ship.taxes[0].detail


def test_ct_threshold_counts_delivery_on_an_inclusive_coat(table, rules):
    # Conn. Gen. Stat. 12-408(1)(H): 7.75% above a $1,000 sales price, delivery included (12-407(a)(8)).
    # A coat paid $1,060.00 alone: at 7.75% P = 106000 / 1.0775 = 98375.87 -> 98376, under $1,000: not
    # consistent; at 6.35% P = 106000 / 1.0635 = 99670.90 -> 99671, under $1,000: kept; tax 6329.
    alone = calc(table, rules, inc("1", "CT", SHIRT, price=106000)).lines[0]
    assert (alone.taxable_amount, alone.tax_amount) == (99671, 6329)
    # With $20 delivery (tax-exclusive): 98376 + 2000 > 100000 at 7.75%: consistent: tax 7624
    # (98376 x 7.75% = 7624.14 -> 7624).
    coat = calc(table, rules, inc("1", "CT", SHIRT, price=106000), mkline("2", "CT", SHIP, price=2000)).lines[0]
    assert (coat.taxable_amount, coat.tax_amount, coat.taxes[0].tax_rate) == (98376, 7624, Decimal("0.0775"))
    assert "share of delivery (2000 of delivery)" in coat.taxes[0].detail


# ----------------------------------------------------------------- property
RULE = Rule("TN", "", frozenset(), "taxable", "Taxable", "test", date(2020, 1, 1))


def _exact(price: Fraction, rates: list[Decimal], types: list[str], bands: list[Band], q: Fraction) -> Fraction:
    """The exact tax of a price before tax P, written out independently of the engine."""
    tax = Fraction(0)
    for rate, kind in zip(rates, types):
        base = price
        for b in bands:
            if kind in b.types:
                top = b.band_to * q if b.band_to is not None else price
                part = max(Fraction(0), min(price, top) - b.band_from * q)
                if b.rate is None:
                    base = part
                else:
                    tax += Fraction(b.rate) * part
        tax += Fraction(rate) * base
    return tax


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**12), st.lists(st.integers(0, 15000), min_size=1, max_size=4),
       st.integers(1, 500000), st.integers(1, 500000), st.integers(0, 12000), st.integers(1, 4))
def test_base_plus_tax_is_the_amount_with_bands(amount, rates, cap, width, band_rate, qty):
    # Any amount, rates (state first, then locals), a local cap and a state band with a rate above it.
    types = ["state", "county", "city", "special"][: len(rates)]
    rs = [Decimal(r) / 100000 for r in rates]
    js = [JurisdictionRate(f"J{i}", f"J{i}", t, r, "TN", statewide=i == 0)  # type: ignore[arg-type]
          for i, (t, r) in enumerate(zip(types, rs))]
    bands = (Band("TN", frozenset({"county", "city", "special"}), 0, cap, "cap", "s", date(2020, 1, 1)),
             Band("TN", frozenset({"state"}), cap, cap + width, "extra", "s", date(2020, 1, 1),
                  rate=Decimal(band_rate) / 100000))
    price, rows, _ = _inclusive_split(RULE, [(j, True, "") for j in js], amount, Decimal(qty), bands)
    assert price + sum(r.tax_amount for r in rows) == amount
    # P is the exact solution rounded half up: P - 1/2 + tax(P - 1/2) <= amount <= P + 1/2 + tax(P + 1/2).
    q = Fraction(qty)
    for p, side in ((Fraction(price) - Fraction(1, 2), -1), (Fraction(price) + Fraction(1, 2), 1)):
        got = p + _exact(max(p, Fraction(0)), rs, types, list(bands), q)
        assert (got <= amount) if side < 0 else (got > amount)
    for r in rows:
        assert r.tax_amount >= 0
        assert abs(r.tax_amount - math.floor(Fraction(r.tax_rate) * r.taxable_base + Fraction(1, 2))) <= 1
