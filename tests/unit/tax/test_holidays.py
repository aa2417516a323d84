"""Sales tax holidays (issue 31): the data, the choice of a holiday, and the engine's rows.
Figures worked by hand in each test."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL, mkline

from levy.domain.tax.engine import calculate
from levy.domain.tax.holidays import Holiday, HolidayItems, Holidays, parse_holidays
from levy.domain.tax.model import CalculationInput
from levy.domain.tax.rate_table import RateTable, ZipRateRow
from levy.ratefiles.builtin import _read_json, load_holidays, load_states, zip_directory
from levy.store.reference_data import catalogue as load_catalogue

APPAREL = "CLOTHING.APPAREL.GENERAL"


@pytest.fixture(scope="module")
def holidays() -> Holidays:
    return load_holidays()


def _dallas(county="0.02", city="0.01"):
    # Dallas 75201: state 6.25%, a county 2% and a city 1% (test figures).
    row = ZipRateRow("TX", "75201", "DALLAS", Decimal("0.0625"), Decimal(county), Decimal(city), Decimal(0),
                     date(2020, 1, 1), None, "test", 2)
    return RateTable.build(load_states(), [row], zip_directory())


def calc(table, rules, lines, on, holidays):
    return calculate(CalculationInput(lines=tuple(lines), transaction_date=on), table, rules, REG_ALL,
                     holidays=holidays)


# ----------------------------------------------------------------- the data
def test_every_holiday_is_sourced_dated_and_within_the_catalogue(holidays):
    assert len(holidays) >= 15
    for h in holidays.all():
        assert h.source.strip() and h.source_url.startswith("https://"), h
        assert h.first_day <= h.last_day
        assert h.items and all(i.codes for i in h.items)
    # Every year asked for: 2025, 2026 and 2027, for each state authored.
    for state in ("TX", "FL", "MO", "AL", "TN", "OK", "AR", "SC", "MS", "CT", "MD", "VA", "WV"):
        years = {h.first_day.year for h in holidays.of_state(state)}
        assert {2025, 2026, 2027} <= years, state


def test_periods_of_a_state_do_not_overlap(holidays):
    for state in {h.state for h in holidays.all()}:
        hs = holidays.of_state(state)
        for a, b in zip(hs, hs[1:]):
            assert a.last_day < b.first_day, (a.name, b.name)


@pytest.mark.parametrize("state,since,weekday_rule", [
    # TX (Tax Code 151.326 as amended from 2025-09-01; 2025 was Aug. 8-10 under the former rule) and MO
    # (RSMo 144.049): the first Friday in August to the following Sunday.
    ("TX", 2026, lambda d: d.month == 8 and d.day <= 7),
    ("MO", 2025, lambda d: d.month == 8 and d.day <= 7),
    # AL (Code of Ala. 40-23-211): the third Friday in July.
    ("AL", 2025, lambda d: d.month == 7 and 15 <= d.day <= 21),
    # TN (T.C.A. 67-6-393): the last Friday in July.
    ("TN", 2025, lambda d: d.month == 7 and d.day >= 25),
    # OK (68 O.S. 1357.10), SC (S.C. Code 12-36-2120(57)), VA (Va. Code 58.1-611.2): the first Friday in August.
    ("OK", 2025, lambda d: d.month == 8 and d.day <= 7),
    ("SC", 2025, lambda d: d.month == 8 and d.day <= 7),
    ("VA", 2025, lambda d: d.month == 8 and d.day <= 7),
    # MS (Miss. Code 27-65-111, SB 2470 of 2024): the second Friday in July.
    ("MS", 2025, lambda d: d.month == 7 and 8 <= d.day <= 14),
])
def test_weekend_holidays_follow_the_statutes_rule(holidays, state, since, weekday_rule):
    for h in holidays.of_state(state):
        if h.first_day.year < since:
            continue
        assert h.first_day.weekday() == 4 and weekday_rule(h.first_day), h.name  # a Friday
        assert h.last_day == h.first_day + timedelta(days=2), h.name  # to the Sunday


@pytest.mark.parametrize("state,first_weekday,first_rule,days", [
    # CT (Conn. Gen. Stat. 12-407e): the third Sunday in August to the following Saturday.
    ("CT", 6, lambda d: d.month == 8 and 15 <= d.day <= 21, 6),
    # MD (Tax-General 11-228): the second Sunday in August to the following Saturday.
    ("MD", 6, lambda d: d.month == 8 and 8 <= d.day <= 14, 6),
    # AR (Ark. Code 26-52-444): the first Saturday in August and the Sunday after.
    ("AR", 5, lambda d: d.month == 8 and d.day <= 7, 1),
    # WV (W. Va. Code 11-15-9s): the Friday before the first Sunday in August to the Monday after it.
    ("WV", 4, lambda d: (d + timedelta(days=2)).month == 8 and (d + timedelta(days=2)).day <= 7, 3),
])
def test_other_statutory_periods(holidays, state, first_weekday, first_rule, days):
    hs = holidays.of_state(state)
    assert {h.first_day.year for h in hs} >= {2025, 2026, 2027}, state
    for h in hs:
        assert h.first_day.weekday() == first_weekday and first_rule(h.first_day), h.name
        assert h.last_day == h.first_day + timedelta(days=days), h.name


def test_florida_is_the_whole_of_august_every_year(holidays):
    for h in holidays.of_state("FL"):
        assert (h.first_day.month, h.first_day.day, h.last_day.month, h.last_day.day) == (8, 1, 8, 31)


def test_the_parser_refuses_bad_entries():
    ok = {"state": "TX", "name": "x", "first_day": "2026-08-07", "last_day": "2026-08-09", "levels": "state",
          "source": "s", "items": [{"codes": [APPAREL], "limit": 10000}]}
    codes = [t.code for t in load_catalogue().tax_codes]
    assert len(parse_holidays({"holidays": [ok]}, codes)) == 1
    for bad in ({"source": ""}, {"levels": "local"}, {"last_day": "2026-08-01"}, {"colour": "red"},
                {"items": [{"codes": ["CLOTHING.NOPE"]}]}, {"items": [{"codes": [APPAREL], "limit_mode": "under"}]},
                {"items": [{"codes": [APPAREL], "per": "dozen"}]}):
        with pytest.raises(ValueError):
            parse_holidays({"holidays": [{**ok, **bad}]}, codes)


def test_the_shipped_file_lists_what_it_left_out():
    left = _read_json("holidays.json")["not_included"]
    assert all(e["what"] and e["why"] for e in left)
    # Every state asked for in issue 31 is authored (2025 at least) or left out with why.
    authored = {h.state for h in load_holidays().all() if h.first_day.year == 2025}
    for state in ("OK", "AR", "SC", "MS", "CT", "IA", "MA", "MD", "NM", "OH", "VA", "WV"):
        assert state in authored or state in {e["state"] for e in left}, state
    # The parts left out of authored holidays are said: MD's February Energy Star week, MS's Second Amendment
    # weekend, the years of MA and OH not yet designated, Iowa's unconfirmed status.
    assert {"IA", "MA", "MD", "MS", "OH", "VA"} <= {e["state"] for e in left}


def test_massachusetts_ohio_and_new_mexico_2026_are_left_out_saying_why():
    # No primary source for their 2026 holidays (the MA resolution, the OH Commissioner's designation, the NM
    # Department's announcement) was found: none is authored, and not_included says what was searched.
    left = {e["state"]: e for e in _read_json("holidays.json")["not_included"] if "2026" in e["what"]}
    for state in ("MA", "OH", "NM"):
        assert not [h for h in load_holidays().of_state(state) if h.first_day.year >= 2026], state
        why = left[state]["why"]
        assert "No primary source" in why or "not found" in why or "was found" in why, state
        assert "taxed, the cautious side" in why.casefold(), state


# ----------------------------------------------------------------- choosing a holiday
def test_limit_below_and_at_or_below(holidays):
    on = date(2026, 8, 7)
    one = Decimal(1)
    # Texas: under $100 (9999 qualifies, 10000 does not).
    assert holidays.find("TX", APPAREL, 9999, one, on) is not None
    assert holidays.find("TX", APPAREL, 10000, one, on) is None
    # Florida: $100 or less (10000 qualifies, 10001 does not).
    assert holidays.find("FL", APPAREL, 10000, one, on) is not None
    assert holidays.find("FL", APPAREL, 10001, one, on) is None
    # The price is per item: 3 x $90 = 27000 qualifies, each item being $90.
    assert holidays.find("TX", "CLOTHING.APPAREL.FOOTWEAR", 27000, Decimal(3), on) is not None
    # Categories outside the holiday, other states, other days.
    assert holidays.find("TX", "CLOTHING.ACCESSORIES.GENERAL", 5000, one, on) is None
    assert holidays.find("TX", "GENERAL.TANGIBLE.GOODS", 5000, one, on) is None
    assert holidays.find("NY", APPAREL, 5000, one, on) is None
    assert holidays.find("TX", APPAREL, 5000, one, date(2026, 8, 10)) is None


def test_per_pair_counts_two_units():
    items = HolidayItems(("CLOTHING.ACCESSORIES.HATS_GLOVES",), "gloves", 10000, "below", "pair")
    h = Holidays([Holiday("TX", "Test", date(2026, 8, 7), date(2026, 8, 9), (items,), "state", "test")])
    on = date(2026, 8, 8)
    code = "CLOTHING.ACCESSORIES.HATS_GLOVES"
    # One glove alone at $60: a line of one unit is priced as it is ($60, under $100).
    assert h.find("TX", code, 6000, Decimal(1), on) is not None
    # Two at $60 each: the pair is $120, not under $100.
    assert h.find("TX", code, 12000, Decimal(2), on) is None
    # Four at $45: a pair is $90, under $100.
    assert h.find("TX", code, 18000, Decimal(4), on) is not None


# ----------------------------------------------------------------- the engine's rows
def test_texas_clothing_exempt_on_first_and_last_day_taxed_the_day_after(rules, holidays):
    table = _dallas()
    line = mkline(state="TX", zip="75201", cat=APPAREL, price=5000)
    for day in (date(2026, 8, 7), date(2026, 8, 9)):
        res = calc(table, rules, [line], day, holidays)
        assert res.tax_amount == 0
        rows = res.lines[0].taxes
        assert [r.jurisdiction_type for r in rows] == ["state", "county", "city"]
        for r in rows:
            assert r.exempt_reason == "non_taxable_product" and r.taxable_base == 0 and r.tax_rate == 0
            assert r.rule_name == "Exempt: Texas sales tax holiday 2026 (2026-08-07 to 2026-08-09)"
            assert "sales tax holiday: clothing and footwear, under $100 per item" in r.detail
    # The day after: $50 x (6.25% + 2% + 1%) = 312.5 + 100 + 50 = 462.5 -> 313 + 100 + 50 = 463.
    res = calc(table, rules, [line], date(2026, 8, 10), holidays)
    assert [r.tax_amount for r in res.lines[0].taxes] == [313, 100, 50]
    assert res.tax_amount == 463


def test_at_and_above_the_limit_the_line_is_taxed(rules, holidays):
    table = _dallas()
    on = date(2026, 8, 8)
    # $100.00 is not under $100: 10000 x 9.25% = 625 + 200 + 100 = 925.
    at = calc(table, rules, [mkline(state="TX", zip="75201", cat=APPAREL, price=10000)], on, holidays)
    assert at.tax_amount == 925
    assert all("holiday" not in r.rule_name for r in at.lines[0].taxes)
    # $99.99: exempt; one line of each together: only the $100 line is taxed.
    both = calc(table, rules, [mkline(id="a", state="TX", zip="75201", cat=APPAREL, price=9999),
                               mkline(id="b", state="TX", zip="75201", cat=APPAREL, price=10000)], on, holidays)
    assert [ln.tax_amount for ln in both.lines] == [0, 925]


def test_a_discount_that_brings_the_item_under_the_limit(rules, holidays):
    from levy.domain.tax.model import Discount

    # $120 shirt with a $30 discount: $90 per item after the discount, under $100: exempt.
    line = mkline(state="TX", zip="75201", cat=APPAREL, price=12000, discounts=(Discount("d", 3000),))
    assert calc(_dallas(), rules, [line], date(2026, 8, 8), holidays).tax_amount == 0


def test_state_only_holiday_keeps_local_tax(rules):
    items = HolidayItems((APPAREL,), "clothing", 10000, "at_or_below")
    h = Holidays([Holiday("TX", "State-only test holiday", date(2026, 8, 7), date(2026, 8, 9), (items,), "state",
                          "test")])
    res = calc(_dallas(), rules, [mkline(state="TX", zip="75201", cat=APPAREL, price=5000)], date(2026, 8, 8), h)
    rows = {r.jurisdiction_type: r for r in res.lines[0].taxes}
    # State exempt; county 5000 x 2% = 100, city 5000 x 1% = 50.
    assert rows["state"].tax_amount == 0 and rows["state"].rule_name.startswith("Exempt: State-only test holiday")
    assert (rows["county"].tax_amount, rows["city"].tax_amount) == (100, 50)
    assert "exempts the state level only" in rows["county"].detail
    assert res.tax_amount == 150


def test_opted_out_local_jurisdiction_is_taxed(rules):
    table = _dallas()
    on = date(2026, 8, 8)
    city = next(r.jurisdiction_code for r in calc(table, rules, [mkline(state="TX", zip="75201")], on, None)
                .lines[0].taxes if r.jurisdiction_type == "city")
    items = HolidayItems((APPAREL,), "clothing", 10000, "at_or_below")
    h = Holidays([Holiday("TX", "Opt-out test holiday", date(2026, 8, 7), date(2026, 8, 9), (items,),
                          "state_and_local", "test", local_opt_outs=(city,))])
    res = calc(table, rules, [mkline(state="TX", zip="75201", cat=APPAREL, price=5000)], on, h)
    rows = {r.jurisdiction_type: r for r in res.lines[0].taxes}
    # State and county exempt; the city (opted out) 5000 x 1% = 50.
    assert (rows["state"].tax_amount, rows["county"].tax_amount, rows["city"].tax_amount) == (0, 0, 50)
    assert "opted out" in rows["city"].detail and rows["city"].exempt_reason is None


def test_without_holidays_nothing_changes(rules):
    res = calc(_dallas(), rules, [mkline(state="TX", zip="75201", cat=APPAREL, price=5000)], date(2026, 8, 8), None)
    assert res.tax_amount == 463  # as on the day after, worked above


def test_the_general_holidays_leave_out_what_their_statutes_exclude(holidays):
    # MA (M.G.L. c. 64H s. 6A) and OH (R.C. 5739.41): most tangible goods, but not alcohol, tobacco, services,
    # software or leases; MA not meals either. Machinery and raw materials (business inputs) are left out.
    ma, oh = date(2025, 8, 9), date(2025, 8, 5)
    one = Decimal(1)
    for state, on in (("MA", ma), ("OH", oh)):
        assert holidays.find(state, "GENERAL.TANGIBLE.FURNITURE", 50000, one, on) is not None
        for code in ("FOOD.GROCERY.ALCOHOL", "FOOD.GROCERY.TOBACCO", "SERVICES.REPAIR.TANGIBLE",
                     "SOFTWARE.DOWNLOADED.PREWRITTEN", "GENERAL.TANGIBLE.LEASE", "GENERAL.TANGIBLE.MACHINERY"):
            assert holidays.find(state, code, 1000, one, on) is None, (state, code)
    assert holidays.find("MA", "FOOD.PREPARED.RESTAURANT", 1000, one, ma) is None
    assert holidays.find("OH", "FOOD.PREPARED.RESTAURANT", 1000, one, oh) is not None  # meals are goods in Ohio
    # The limits: MA $2,500 or less, OH $500 or less, per item (a line of 2 at $500 qualifies in Ohio).
    assert holidays.find("MA", "GENERAL.TANGIBLE.GOODS", 250000, one, ma) is not None
    assert holidays.find("MA", "GENERAL.TANGIBLE.GOODS", 250001, one, ma) is None
    assert holidays.find("OH", "GENERAL.TANGIBLE.GOODS", 100000, Decimal(2), oh) is not None
    assert holidays.find("OH", "GENERAL.TANGIBLE.GOODS", 50001, one, oh) is None
