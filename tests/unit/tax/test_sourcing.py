"""Sourcing in the engine (issue 19): the cases of tests/sourcing_cases.py (hand-worked figures)
run through :func:`levy.domain.tax.engine.calculate` with the synthetic records, plus the data
file's shape: one entry per state, DC and PR, each rule cited."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from levy.domain.tax import engine
from levy.domain.tax.model import Address, CalculationInput, LineInput, Registration
from levy.ratefiles.builtin import _read_json, builtin_rate_table, load_sourcing, load_states, load_taxability
from sourcing_cases import HOUSTON_ROWS, INTERSTATE, INTRASTATE, RECORDS, STATES

ON = date(2026, 5, 1)
REG = tuple(Registration(f"US-ST-{s}", date(2000, 1, 1)) for s in [*STATES, "TX"])


@pytest.fixture(scope="module")
def table():
    return builtin_rate_table(RECORDS)


def _line(delivery: tuple[str, str], origin: tuple[str, str] | None) -> LineInput:
    return LineInput("1", Decimal(1), 10000, "GENERAL.TANGIBLE.GOODS", address=Address(state=delivery[0],
                     postal_code=delivery[1]), pointer="/line_items/0",
                     ship_from=Address(state=origin[0], postal_code=origin[1]) if origin else None,
                     ship_from_label="test", ship_from_pointer="/line_items/0/ship_from/address")


def _run(table, delivery, origin):
    res = engine.calculate(CalculationInput((_line(delivery, origin),), transaction_date=ON), table, load_taxability(),
                           REG, sourcing=load_sourcing())
    li = res.lines[0]
    assert res.tax_amount == li.tax_amount == sum(r.tax_amount for r in li.taxes)
    return li


@pytest.mark.parametrize("case", INTRASTATE, ids=[c[0] for c in INTRASTATE])
def test_intrastate(case, table) -> None:
    _, origin, delivery, kind, total, rows = case
    li = _run(table, delivery, origin)
    assert (li.sourcing, str(li.tax_amount)) == (kind, total)
    assert [(r.jurisdiction_code, str(r.tax_amount), r.sourcing) for r in li.taxes] == rows
    assert all("sourced" in r.detail for r in li.taxes)


@pytest.mark.parametrize("state, origin", INTERSTATE, ids=[s for s, _ in INTERSTATE])
def test_interstate_is_destination(state, origin, table) -> None:
    li = _run(table, ("TX", "77002"), origin)
    assert li.sourcing == "destination" and li.tax_amount == 825
    assert [(r.jurisdiction_code, str(r.tax_amount), r.sourcing) for r in li.taxes] == [
        (c, t, "destination") for c, t, _ in HOUSTON_ROWS]
    assert "interstate sales are destination-sourced" in li.taxes[0].detail


def test_no_ship_from_is_unchanged(table) -> None:
    li = _run(table, ("TX", "77002"), None)
    assert li.sourcing == "" and [(r.jurisdiction_code, str(r.tax_amount), r.sourcing) for r in li.taxes] == HOUSTON_ROWS
    assert not any("sourced" in r.detail for r in li.taxes)


def test_invalid_ship_from_points_at_it(table) -> None:
    with pytest.raises(Exception) as e:
        _run(table, ("TX", "77002"), ("TX", "90210"))  # 90210 is a California ZIP
    assert e.value.items[0].pointer == "/line_items/0/ship_from/address/postal_code"


def test_new_mexico_was_origin_before_july_2021() -> None:
    rule = load_sourcing().rule("NM", date(2021, 6, 30))
    assert rule.kind == "origin" and load_sourcing().rule("NM", date(2021, 7, 1)).kind == "destination"


def test_data_covers_every_state_with_sources() -> None:
    raw = _read_json("sourcing.json")
    assert set(raw["states"]) == {s.code for s in load_states()}  # 50 states, DC, PR
    assert raw["interstate"] == "destination"
    for state, rules in raw["states"].items():
        assert rules, state
        for r in rules:
            assert r["source"] and r["summary"] and r["services"] and r["effective_from"], state
            assert r["kind"] in ("destination", "origin", "mixed"), state
    origin = {s for s, rs in raw["states"].items() if any(r["kind"] != "destination" and r["effective_to"] is None
                                                           for r in rs)}
    assert origin == {"AZ", "CA", "IL", "MO", "OH", "PA", "TN", "TX", "UT", "VA"}
    # The engine reads no state code: every rule comes from the data.
    from pathlib import Path
    import levy.domain.tax.sourcing as mod
    text = Path(mod.__file__).read_text()
    assert not any(f'"{s}"' in text for s in raw["states"])


def test_docs_list_every_state_rule() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "sourcing.md").read_text()
    raw = _read_json("sourcing.json")
    for state, rules in raw["states"].items():
        for r in rules:
            assert f"| {state} | {r['effective_from']} | {r['effective_to'] or ''} | {r['kind']}" in doc, (state, r)
