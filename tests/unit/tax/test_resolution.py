"""Address resolution from imported records (issue 17): street range, ZIP+4,
city, ZIP default, state; source precedence and dates. Records are written here
by hand with round rates, so every expected figure is plain arithmetic."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from tax_helpers import REG_ALL

from levy.domain.tax.engine import calculate
from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange
from levy.domain.tax.model import Address, CalculationInput, LineInput
from levy.domain.tax.rate_table import RateTable
from levy.ratefiles.builtin import load_states, zip_directory

D = date(2026, 4, 15)


def comp(kind: str, name: str, rate: str) -> Component:
    prefix = {"county": "CO", "city": "CI", "special": "SP"}[kind]
    return Component(kind, name, Decimal(rate), f"US-{prefix}-MN-{name.upper().replace(' ', '_')}")  # type: ignore[arg-type]


def rec(zip5: str | None, *components: Component, kind: str = "official_address", start: date = date(2026, 4, 1),
        end: date | None = None, source: str = "test.csv", state: str = "MN", **kw: object) -> LocalRecord:
    return LocalRecord(state=state, zip5=zip5, components=components, effective_from=start, effective_to=end,
                       source=source, source_kind=kind, **kw)  # type: ignore[arg-type]


HENNEPIN = comp("county", "Hennepin County", "0.0015")
EVEN = comp("city", "Even Side", "0.01")
ODD = comp("city", "Odd Side", "0.02")
PLUS4 = comp("special", "Plus Four District", "0.005")
DEFAULT = comp("city", "Minneapolis", "0.005")

RECORDS = [
    rec("55401", HENNEPIN, DEFAULT, kind="official_zip", primary=True, line=1),
    rec("55401", HENNEPIN, EVEN, street=StreetRange(100, 198, "even", "MAIN", "N", "ST"), line=2),
    rec("55401", HENNEPIN, ODD, street=StreetRange(101, 199, "odd", "MAIN", "N", "ST"), line=3),
    rec("55401", HENNEPIN, PLUS4, plus4_low="0001", plus4_high="0099", line=4),
]


@pytest.fixture(scope="module")
def table() -> RateTable:
    return RateTable.build(load_states(), RECORDS, zip_directory())


def resolve(table: RateTable, on: date = D, **address: str) -> tuple[str, list[tuple[str, str]], str]:
    res = table.resolve(Address(**address), on)
    return res.level, [(r.name, str(r.rate)) for r in res.rows if r.type != "state"], res.how


@pytest.mark.parametrize(("line1", "expected"), [
    ("150 North Main Street", "Even Side"),  # even number, directional and suffix spelled out
    ("150 n. main st.", "Even Side"),
    ("151 N Main St Apt 4", "Odd Side"),  # odd side; the unit left out
    ("199 N MAIN ST # 12", "Odd Side"),
    ("150 Main", "Even Side"),  # a directional or suffix left out matches either
    ("100 N Main St", "Even Side"),  # both ends of a range are in it
    ("198 N Main St", "Even Side"),
])
def test_street_range_by_side(table: RateTable, line1: str, expected: str) -> None:
    level, rows, how = resolve(table, state="MN", postal_code="55401-0050", line1=line1)
    assert level == "address"  # before the ZIP+4 range, which this postal code is also in
    assert rows == [("Hennepin County", "0.0015"), (expected, "0.01" if expected == "Even Side" else "0.02")]
    assert how.startswith("resolved by street range ") and "in ZIP 55401 (official_address: test.csv line" in how


@pytest.mark.parametrize("line1", ["150 S Main St", "200 N Main St", "150 N Main Ave", "150 N Oak St", "N Main St"])
def test_street_range_misses_fall_through(table: RateTable, line1: str) -> None:
    # Another directional, out of range, another suffix, another street, no house number: not the street ranges.
    level, rows, _ = resolve(table, state="MN", postal_code="55401", line1=line1)
    assert (level, rows) == ("zip5", [("Hennepin County", "0.0015"), ("Minneapolis", "0.005")])


@pytest.mark.parametrize("postal", ["55401-0050", "554010050", "55401-0001", "55401-0099"])
def test_zip4_range(table: RateTable, postal: str) -> None:
    level, rows, how = resolve(table, state="MN", postal_code=postal)
    assert (level, rows) == ("zip4", [("Hennepin County", "0.0015"), ("Plus Four District", "0.005")])
    assert how == "resolved by ZIP+4 range 55401-0001..55401-0099 (official_address: test.csv line 4)"


def test_zip4_outside_the_ranges_is_the_zip_default(table: RateTable) -> None:
    level, rows, how = resolve(table, state="MN", postal_code="55401-0100")
    assert (level, rows) == ("zip5", [("Hennepin County", "0.0015"), ("Minneapolis", "0.005")])
    assert how == "ZIP 55401 default (official_zip: test.csv line 1); send the city or ZIP+4 for a more precise rate"


def test_records_are_dated(table: RateTable) -> None:
    # Every record starts 2026-04-01: on 2026-03-31 MN has no local record for 55401.
    res = table.resolve(Address(state="MN", postal_code="55401-0050", line1="150 N Main St"), date(2026, 3, 31))
    assert res.local_missing and [r.type for r in res.rows] == ["state"]


# ------------------------------------------------------------------ city level
CA_RECORDS = [
    # 91302 spans Calabasas and unincorporated Los Angeles County; the estimated table has one row for it.
    rec("91302", comp("special", "Estimated District", "0.0225"), kind="estimated", state="CA", primary=True,
        start=date(2026, 3, 1), source="TAXRATES_ZIP5_CA202603.csv"),
    rec("91302", comp("city", "Calabasas", "0.01"), kind="official_zip", state="CA", city="Calabasas", source="ca.csv"),
    rec("91302", comp("county", "Los Angeles County", "0.0225"), kind="official_zip", state="CA",
        city="Unincorporated Los Angeles County", primary=True, source="ca.csv"),
    # Place-wide records (zip5 None), matched by the address city and the ZIP's county from the directory.
    rec(None, comp("city", "Saint Paul", "0.015"), kind="official_zip", city="St. Paul", county="Ramsey", source="mn.csv"),
    rec(None, comp("county", "Monterey County", "0.0025"), kind="official_zip", state="CA", county="Monterey",
        unincorporated=True, source="cdtfa.csv"),
    rec(None, comp("city", "Salinas", "0.015"), kind="official_zip", state="CA", city="Salinas", county="Monterey",
        source="cdtfa.csv"),
]


CA_LOCAL = "California statewide local tax (Bradley-Burns 1% + transportation 0.25%)"


@pytest.fixture(scope="module")
def ca_table() -> RateTable:
    return RateTable.build(load_states(), CA_RECORDS, zip_directory())


@pytest.mark.parametrize("city", ["Calabasas", "CALABASAS", " calabasas ", "City of Calabasas", "Calabasas City"])
def test_city_among_the_zip_candidates(ca_table: RateTable, city: str) -> None:
    level, rows, how = resolve(ca_table, state="CA", postal_code="91302", city=city)
    # Built-in CA 1.25% statewide local portion, then the Calabasas record's 1% city component.
    assert (level, rows) == ("city", [(CA_LOCAL, "0.0125"), ("Calabasas", "0.01")])
    assert how == f"resolved by city '{city.strip()}' among 3 candidates for ZIP 91302 (official_zip: ca.csv)"


def test_unknown_city_falls_back_to_the_zip_default(ca_table: RateTable) -> None:
    level, rows, how = resolve(ca_table, state="CA", postal_code="91302", city="Agoura")
    # The official_zip primary record beats the estimated one (official over estimated).
    assert (level, rows[1:]) == ("zip5", [("Los Angeles County", "0.0225")])
    assert how == "city 'Agoura' matches no candidate for ZIP 91302: ZIP 91302 default (official_zip: ca.csv)"


def test_no_city_is_the_zip_default_with_a_hint(ca_table: RateTable) -> None:
    level, rows, how = resolve(ca_table, state="CA", postal_code="91302")
    assert (level, rows[1:]) == ("zip5", [("Los Angeles County", "0.0225")])
    assert how.endswith("send the city or ZIP+4 for a more precise rate") and "among 3 candidates" in how


def test_place_wide_city_in_the_zip_county(ca_table: RateTable) -> None:
    # 55101 is Saint Paul, Ramsey County in the ZIP directory; no record names the ZIP itself.
    for spelling in ("St. Paul", "Saint Paul", "ST PAUL"):
        level, rows, how = resolve(ca_table, state="MN", postal_code="55101", city=spelling)
        assert (level, rows) == ("city", [("Saint Paul", "0.015")])
        assert how == f"resolved by city '{spelling}' in Ramsey County (official_zip: mn.csv)"
    # Salinas is in Monterey County, and 93901 too.
    assert resolve(ca_table, state="CA", postal_code="93901", city="Salinas")[1][1:] == [("Salinas", "0.015")]


def test_place_wide_city_of_another_county_does_not_match(ca_table: RateTable) -> None:
    # 91601 is in Los Angeles County: the Monterey County "Salinas" record is not for it; nothing else is.
    res = ca_table.resolve(Address(state="CA", postal_code="91601", city="Salinas"), D)
    assert res.local_missing and res.level == "state"


def test_unincorporated_county_when_the_zip_has_no_record(ca_table: RateTable) -> None:
    # 93920 (Big Sur, Monterey County) has no ZIP record; Big Sur is no incorporated city of the data.
    level, rows, how = resolve(ca_table, state="CA", postal_code="93920", city="Big Sur")
    assert (level, rows[1:]) == ("city", [("Monterey County", "0.0025")])
    assert how.startswith("resolved by county: 'Big Sur' is not an incorporated city")


# ------------------------------------------------------- precedence and dates
def test_precedence_and_dates() -> None:
    tx = lambda name, rate: Component("city", name, Decimal(rate), f"US-CI-TX-{name.upper()}")  # noqa: E731
    records = [
        rec("75201", tx("March", "0.01"), kind="estimated", state="TX", start=date(2026, 3, 1), primary=True),
        rec("75201", tx("Official", "0.02"), kind="official_zip", state="TX", start=date(2026, 4, 1),
            end=date(2026, 6, 30)),
        rec("75201", tx("Reimport", "0.015"), kind="estimated", state="TX", start=date(2026, 3, 1), primary=True),
        rec("75201", tx("Older", "0.005"), kind="estimated", state="TX", start=date(2026, 1, 1), primary=True),
    ]
    table = RateTable.build(load_states(), records, zip_directory())

    def city_on(on: date) -> str:
        return [r.name for r in table.resolve(Address(state="TX", postal_code="75201"), on).rows if r.type == "city"][0]

    assert city_on(date(2026, 2, 15)) == "Older"  # only the January record is in force
    assert city_on(date(2026, 3, 15)) == "Reimport"  # same start, same kind: the later import
    assert city_on(date(2026, 4, 15)) == "Official"  # official over estimated while it is in force
    assert city_on(date(2026, 7, 1)) == "Reimport"  # after it ended


def test_state_only_without_postal_code(table: RateTable) -> None:
    res = table.resolve(Address(state="MN", city="Minneapolis"), D)
    assert res.level == "state" and res.local_missing and [r.type for r in res.rows] == ["state"]


def test_resolution_is_keyed_by_city_and_line1(table: RateTable) -> None:
    a = table.resolve(Address(state="MN", postal_code="55401", line1="150 N Main St"), D)
    b = table.resolve(Address(state="MN", postal_code="55401", line1="151 N Main St"), D)
    assert (a.level, b.level) == ("address", "address") and a.rows != b.rows
    assert table.resolve(Address(state="MN", postal_code="55401", line1="150 N Main St"), D) is a  # kept


def test_every_row_says_how_and_the_line_its_level(table: RateTable, rules) -> None:  # type: ignore[no-untyped-def]
    line = LineInput(id="1", quantity=Decimal(1), unit_price=10000, category="GENERAL.TANGIBLE.GOODS",
                     attributes=(), address=Address(state="MN", postal_code="55401-0050"), pointer="/line_items/0")
    res = calculate(CalculationInput(lines=(line,), transaction_date=D), table, rules, REG_ALL)
    [li] = res.lines
    # 100.00 x 6.875% = 687.5 -> 688; county 0.15% = 15; ZIP+4 district 0.5% = 50.
    assert res.tax_amount == 688 + 15 + 50
    assert li.resolution == "zip4"
    assert all(t.detail.startswith("resolved by ZIP+4 range 55401-0001..55401-0099") for t in li.taxes)


def test_outside_the_us_is_state_level_with_the_country_note(table: RateTable, rules) -> None:  # type: ignore[no-untyped-def]
    line = LineInput(id="1", quantity=Decimal(1), unit_price=10000, category="GENERAL.TANGIBLE.GOODS",
                     attributes=(), address=Address(country="CH", postal_code="8001"), pointer="/line_items/0")
    [li] = calculate(CalculationInput(lines=(line,), transaction_date=D), table, rules, REG_ALL).lines
    assert li.resolution == "state" and li.tax_amount == 0
    assert [t.detail for t in li.taxes] == [
        "country 'CH' not supported yet: Levy calculates US sales tax, and VAT or GST in the EU, GB, CA and AU"]


def test_overlapping_zip4_ranges_best_first() -> None:
    # Three ZIP+4 records of 55401, in import order: a wide one, an older narrower one, a newer narrower one.
    c = lambda name: comp("special", name, "0.001")  # noqa: E731
    records = [
        rec("55401", c("Wide"), plus4_low="0000", plus4_high="9999", start=date(2026, 1, 1)),
        rec("55401", c("Older"), plus4_low="0001", plus4_high="0500", start=date(2026, 1, 1)),
        rec("55401", c("Newer"), plus4_low="0100", plus4_high="0200", start=date(2026, 4, 1)),
    ]
    table = RateTable.build(load_states(), records, zip_directory())

    def name(plus4: str, on: date) -> str:
        res = table.resolve(Address(state="MN", postal_code=f"55401-{plus4}"), on)
        assert res.level == "zip4"
        return res.rows[-1].name

    assert name("0150", date(2026, 4, 15)) == "Newer"  # the later start among the three that cover it
    assert name("0150", date(2026, 3, 1)) == "Older"  # Newer not in force yet; same start: the later import
    assert name("0300", date(2026, 4, 15)) == "Older"  # past Newer's end, still within Older
    assert name("0600", date(2026, 4, 15)) == "Wide"  # only the wide range reaches it
    assert name("0000", date(2026, 4, 15)) == "Wide"
