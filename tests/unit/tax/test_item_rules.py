"""Item rules (issue 31 part A): delivery that follows the goods and single-article bands, on the
built-in item_rules.json. Figures worked by hand in the comments from the rates written here (the
per-ZIP rows of March 2026 for these ZIPs) and the sources the data cites."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL, mkline

from levy.domain.tax.engine import calculate
from levy.domain.tax.item_rules import Band, DeliveryRule, ItemRules, parse_rules
from levy.domain.tax.model import CalculationInput, Discount
from levy.domain.tax.rate_table import RateTable, ZipRateRow
from levy.ratefiles.builtin import load_item_rules, load_states, zip_directory

D = date(2026, 3, 15)
GOODS, GROCERY, SHIP = "GENERAL.TANGIBLE.GOODS", "FOOD.GROCERY.GENERAL", "SHIPPING.DELIVERY.COMMON_CARRIER"
SHIRT = "CLOTHING.APPAREL.GENERAL"


def _row(state: str, zip5: str, name: str, st: str, county: str, city: str, special: str) -> ZipRateRow:
    return ZipRateRow(state, zip5, name, Decimal(st), Decimal(county), Decimal(city), Decimal(special),
                      date(2026, 1, 1), None, "test", 2)


@pytest.fixture(scope="module")
def table() -> RateTable:
    return RateTable.build(load_states(), [
        _row("TX", "78701", "AUSTIN", "0.0625", "0", "0.01", "0.01"),  # 8.25%
        _row("NY", "12203", "COLONIE", "0.04", "0.04", "0", "0"),  # 8% (Albany County)
        _row("TN", "37201", "NASHVILLE", "0.07", "0.0225", "0", "0"),  # 9.25%
        _row("FL", "33101", "MIAMI", "0.06", "0.01", "0", "0"),  # 7%
    ], zip_directory())


def calc(table, rules, *lines, items=None, **kw):  # type: ignore[no-untyped-def]
    kw.setdefault("transaction_date", D)
    return calculate(CalculationInput(lines=tuple(lines), **kw), table, rules, REG_ALL,
                     item_rules=load_item_rules() if items is None else items)


def by_type(line):  # type: ignore[no-untyped-def]
    return [(r.jurisdiction_type, r.taxable_base, r.tax_amount) for r in line.taxes]


# ----------------------------------------------------------------- delivery
def test_austin_groceries_and_their_delivery_are_not_taxed(table, rules):
    # 34 TAC 3.303(a): delivery is taxed when a taxable item is sold; groceries are exempt: 0 + 0.
    res = calc(table, rules, mkline("1", "TX", GROCERY, price=5000, zip="78701"),
               mkline("2", "TX", SHIP, price=999, zip="78701"))
    assert res.tax_amount == 0
    ship = res.lines[1]
    assert all(r.exempt_reason == "non_taxable_product" and "3.303" in r.rule_name for r in ship.taxes)
    assert all("every good delivered is exempt" in r.detail for r in ship.taxes)


def test_austin_mixed_delivery_taxed_in_full(table, rules):
    # A taxable good in the shipment: the whole $9.99 delivery at 8.25%: 999 x 0.0625 = 62.44 -> 62,
    # 999 x 0.01 = 9.99 -> 10 (city), 10 (special) = 82; the $20 goods 125 + 20 + 20 = 165.
    res = calc(table, rules, mkline("1", "TX", GROCERY, price=5000, zip="78701"),
               mkline("2", "TX", GOODS, price=2000, zip="78701"), mkline("3", "TX", SHIP, price=999, zip="78701"))
    assert res.lines[2].tax_amount == 82
    assert res.tax_amount == 165 + 82
    assert all("taxed in full" in r.detail for r in res.lines[2].taxes)


def test_delivery_alone_is_taxed_as_its_taxability_rule_says(table, rules):
    # No goods in the calculation: TX SHIPPING is taxable: 62 + 10 + 10 (as above).
    res = calc(table, rules, mkline("1", "TX", SHIP, price=999, zip="78701"))
    assert res.tax_amount == 82
    assert all("no goods of this calculation" in r.detail for r in res.lines[0].taxes)


def test_ny_mixed_shipment_delivery_taxed_on_its_taxable_share(table, rules):
    # Colonie (Albany County, which taxes clothing under $110 locally; N.Y. Tax Law 1115(a)(30)
    # exempts it from the 4% state tax): a $50 shirt (exempt from the state, taxed by the county),
    # a $150 lamp (taxable everywhere), $10.00 delivery. TB-ST-838: delivery taxed in the taxable share:
    #   state row: taxable goods 150 of 200 -> base 1000 x 150/200 = 750 -> 4% = 30
    #   county row: taxable goods 200 of 200 -> base 1000 -> 4% = 40
    res = calc(table, rules, mkline("1", "NY", SHIRT, price=5000, zip="12203"),
               mkline("2", "NY", GOODS, price=15000, zip="12203"), mkline("3", "NY", SHIP, price=1000, zip="12203"))
    shirt = by_type(res.lines[0])
    assert shirt == [("state", 0, 0), ("county", 5000, 200)], shirt
    assert by_type(res.lines[2]) == [("state", 750, 30), ("county", 1000, 40)]
    assert res.lines[2].tax_amount == 70
    assert "TB-ST-838" in res.lines[2].taxes[0].rule_name
    assert "$150.00 of $200.00" in res.lines[2].taxes[0].detail


def test_ny_share_uses_the_goods_net_of_discounts(table, rules):
    # The lamp discounted by $50: taxable goods (state) 100 of 150 -> base 1000 x 100/150 = 666.67 -> 667,
    # 4% = 26.68 -> 27; county 150 of 150 -> 1000 -> 40. Tax before discounts: state 1000 x ... no
    # discount on the delivery line itself, so before = after.
    res = calc(table, rules, mkline("1", "NY", SHIRT, price=5000, zip="12203"),
               mkline("2", "NY", GOODS, price=15000, zip="12203", discounts=(Discount("d", 5000),)),
               mkline("3", "NY", SHIP, price=1000, zip="12203"))
    assert by_type(res.lines[2]) == [("state", 667, 27), ("county", 1000, 40)]
    assert res.lines[2].tax_amount_before_discounts == 67


def test_goods_in_another_state_do_not_count(table, rules):
    # Groceries to Austin, a taxable good to Nashville, delivery to Austin: the Austin delivery
    # carries only groceries: exempt.
    res = calc(table, rules, mkline("1", "TX", GROCERY, price=5000, zip="78701"),
               mkline("2", "TN", GOODS, price=5000, zip="37201"), mkline("3", "TX", SHIP, price=999, zip="78701"))
    assert res.lines[2].tax_amount == 0


def test_without_item_rules_delivery_is_taxed_as_before(table, rules):
    res = calc(table, rules, mkline("1", "TX", GROCERY, price=5000, zip="78701"),
               mkline("2", "TX", SHIP, price=999, zip="78701"), items=ItemRules())
    assert res.tax_amount == 82


# ----------------------------------------------------------------- single-article bands
@pytest.mark.parametrize(("price", "qty", "expected", "rows"), [
    # Nashville: state 7%, Davidson County 2.25% on the first $1,600 (67-6-702(a)),
    # state single article 2.75% on $1,600.01-$3,200 (67-6-202).
    (100000, "1", 9250, [("state", 100000, 7000), ("county", 100000, 2250)]),  # 7000 + 2250
    (160000, "1", 14800, [("state", 160000, 11200), ("county", 160000, 3600)]),  # 11200 + 3600, band empty
    (250000, "1", 23575, [("state", 250000, 17500), ("state", 90000, 2475), ("county", 160000, 3600)]),
    # 17500 + 3600 + 2.75% of 900.00 = 24.75
    (500000, "1", 43000, [("state", 500000, 35000), ("state", 160000, 4400), ("county", 160000, 3600)]),
    # 35000 + 3600 + 2.75% of 1,600.00 = 44.00
    (100000, "5", 46250, [("state", 500000, 35000), ("county", 500000, 11250)]),
    # five $1,000 articles: each under the cap: 7% of 5,000 = 350 + 2.25% of 5,000 = 112.50
    (250000, "2", 47150, [("state", 500000, 35000), ("state", 180000, 4950), ("county", 320000, 7200)]),
    # two $2,500 articles: county 2 x 1,600 = 3,200 -> 72.00; band 2 x 900 = 1,800 -> 49.50
])
def test_tennessee_single_article(table, rules, price, qty, expected, rows):
    res = calc(table, rules, mkline("1", "TN", GOODS, price=price, qty=qty, zip="37201"))
    assert by_type(res.lines[0]) == rows
    assert res.tax_amount == expected == sum(r[2] for r in rows)


def test_tennessee_rows_say_the_rule(table, rules):
    rows = calc(table, rules, mkline("1", "TN", GOODS, price=500000, zip="37201")).lines[0].taxes
    # the band's row follows the state row it extends; the capped county row says its cap
    assert "first $1,600.00" in rows[2].detail and "67-6-702" in rows[2].detail
    assert rows[1].rule_name.startswith("Tennessee single article tax") and rows[1].tax_rate == Decimal("0.0275")
    assert rows[1].jurisdiction_code == rows[0].jurisdiction_code


@pytest.mark.parametrize(("price", "expected"), [
    (499900, 29994 + 4999),  # Miami: 6% of 4,999 = 299.94; 1% surtax 49.99
    (500000, 30000 + 5000),  # at the cap
    (720000, 43200 + 5000),  # 6% of 7,200 = 432.00; surtax on the first 5,000 only: 50.00
])
def test_florida_surtax_first_5000(table, rules, price, expected):
    res = calc(table, rules, mkline("1", "FL", GOODS, price=price, zip="33101"))
    assert res.tax_amount == expected


def test_band_with_discount_before_and_after(table, rules):
    # A $6,000 item discounted to $5,500: surtax base 5,000 either way (50.00 before and after);
    # state 6% of 5,500 = 330.00 after, of 6,000 = 360.00 before.
    res = calc(table, rules, mkline("1", "FL", GOODS, price=600000, zip="33101", discounts=(Discount("d", 50000),)))
    assert res.tax_amount == 33000 + 5000
    assert res.lines[0].tax_amount_before_discounts == 36000 + 5000


def test_services_are_not_single_articles(table, rules):
    # TN SERVICES are exempt by taxability anyway; the band's except_codes keep it off them.
    band = load_item_rules().bands_for("TN", "SERVICES.REPAIR.TANGIBLE", D)
    assert band == ()


def test_portion_per_article() -> None:
    band = Band("XX", frozenset({"county"}), 0, 160000, "cap", "src", date(2020, 1, 1))
    assert band.portion(500000, Decimal(1)) == 160000
    assert band.portion(500000, Decimal(5)) == 500000  # 1,000 each
    assert band.portion(1000001, Decimal(3)) == 480000  # 3,333.33... each, capped at 1,600 each
    upper = Band("XX", frozenset({"state"}), 160000, 320000, "extra", "src", date(2020, 1, 1), rate=Decimal("0.0275"))
    assert upper.portion(160000, Decimal(1)) == 0
    assert upper.portion(160001, Decimal(1)) == 1
    assert upper.portion(1000000, Decimal(2)) == 320000


def test_parse_refuses_bad_rows() -> None:
    with pytest.raises(ValueError):
        parse_rules({"bands": [{"state": "XX", "types": ["nation"], "band_from": 0, "band_to": 1, "name": "n",
                                "source": "s", "effective_from": "2020-01-01"}]})
    with pytest.raises(ValueError):
        parse_rules({"delivery": [{"state": "XX", "mode": "sometimes", "codes": ["SHIPPING"], "name": "n",
                                   "source": "s", "effective_from": "2020-01-01"}]})


def test_every_rule_is_sourced_and_dated() -> None:
    rules = load_item_rules()
    states = {s.code for s in load_states()}
    for state in states:
        for r in (*rules.delivery(state), *rules.bands(state)):
            assert r.source and r.name and r.effective_from
            assert "http" in r.source  # a primary link
        assert all(isinstance(r, DeliveryRule) for r in rules.delivery(state))


# ----------------------------------------------------------------- thresholds that count delivery
COAT = "CLOTHING.APPAREL.GENERAL"


def test_ct_luxury_threshold_counts_the_coats_delivery(table, rules):
    # Conn. Gen. Stat. 12-408(1)(H): 7.75% on clothing with a sales price above $1,000, and the sales price
    # includes delivery charges (12-407(a)(8)). A $990 coat alone: 6.35% of 990 = 62.865 -> 62.87.
    alone = calc(table, rules, mkline("1", "CT", COAT, price=99000))
    assert alone.tax_amount == 6287
    # With $20 delivery: 990 + 20 = 1,010 > 1,000: 7.75% of 990 = 76.725 -> 76.73 (the base stays the coat's
    # price); the delivery line at 6.35%: 1.27.
    res = calc(table, rules, mkline("1", "CT", COAT, price=99000), mkline("2", "CT", SHIP, price=2000))
    assert [li.tax_amount for li in res.lines] == [7673, 127]
    assert "share of delivery (2000 of delivery)" in res.lines[0].taxes[0].detail


def test_ct_delivery_shared_among_the_goods_by_price(table, rules):
    # $990 and $500 coats, $20 delivery: the first's share 2000 x 99000 / 149000 = 1328.86 -> 1329: 1,003.29 > 1,000:
    # 7.75% of 990 = 76.73; the second's 671: 506.71: 6.35% of 500 = 31.75.
    res = calc(table, rules, mkline("1", "CT", COAT, price=99000), mkline("2", "CT", COAT, price=50000),
               mkline("3", "CT", SHIP, price=2000))
    assert [li.tax_amount for li in res.lines] == [7673, 3175, 127]


def test_threshold_on_price_alone_is_unchanged(table, rules):
    # NY's $110 clothing exemption compares the price alone (threshold_counts price): a $100 shirt with
    # $20 delivery in Colonie stays exempt from the state tax.
    res = calc(table, rules, mkline("1", "NY", COAT, price=10000, zip="12203"),
               mkline("2", "NY", SHIP, price=2000, zip="12203"))
    assert res.lines[0].taxes[0].tax_amount == 0


# ----------------------------------------------------------------- delivery rules of other states
@pytest.mark.parametrize(("state", "ship_rows"), [
    # NE (316 NAC 1-079), 5.5%: $50 groceries (exempt) + $150 lamp: delivery base 1000 x 150/200 = 750 -> 41.25 -> 41.
    ("NE", [(750, 41)]),
    # WI (Tax 11.94(2)(c)), 5%: 750 -> 37.5 -> 38.
    ("WI", [(750, 38)]),
    # SD (ARSD 64:06:01:70), 4.2%: groceries are taxable in SD, so all the goods are: 1000 -> 42.
    ("SD", [(1000, 42)]),
    # NV (NRS 360B.255): separately stated delivery is exempt by the taxability rules (NRS 360B.290); the share
    # leaves exempt rows as they are: state and statewide local 0.
    ("NV", [(0, 0), (0, 0)]),
])
def test_delivery_of_a_mixed_shipment_in_other_states(table, rules, state, ship_rows):
    res = calc(table, rules, mkline("1", state, GROCERY, price=5000), mkline("2", state, GOODS, price=15000),
               mkline("3", state, SHIP, price=1000))
    assert [(r.taxable_base, r.tax_amount) for r in res.lines[2].taxes] == ship_rows
