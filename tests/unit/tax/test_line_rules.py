"""The line rules of levy.domain.tax.line_rules, without a database: which tax
codes a line is taxed by (spec 4.5 rule 2: a product preset's codes; 4.7: a
preset marked SALES_TAX), and which customer a preset names (4.5 rules 2-4).
Every expectation follows from the spec's text, quoted beside it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.tax import line_rules
from levy.domain.tax.line_rules import CustomerMatch, SoldAs, is_marked_product, match_customer
from levy.domain.tax.model import CustomerExemption
from levy.store.reference_data import catalogue

what_is_sold = partial(line_rules.what_is_sold, catalogue=catalogue())

P = "/line_items/3"


@pytest.mark.parametrize(("own", "preset", "marked", "default", "expected"), [
    # No codes anywhere: the organization's default tax code.
    ((), None, False, "FOOD.GROCERY.GENERAL", SoldAs("FOOD.GROCERY.GENERAL")),
    ((), None, False, None, SoldAs(None)),
    # 4.5 rule 2: "A line with product.preset uses the tax codes saved on that product" (over the default).
    ((), ("FOOD.CANDY.GENERAL",), False, "FOOD.GROCERY.GENERAL", SoldAs("FOOD.CANDY.GENERAL")),
    ((), ("FOOD.CANDY.GENERAL", "_RESALE"), False, None, SoldAs("FOOD.CANDY.GENERAL", ("_RESALE",))),
    # The line's own category wins over the preset's.
    (("FOOD.GROCERY.BOTTLED_WATER",), ("FOOD.CANDY.GENERAL",), False, None, SoldAs("FOOD.GROCERY.BOTTLED_WATER")),
    # Own attributes alone keep the preset's category ...
    (("_RESALE",), ("FOOD.CANDY.GENERAL",), False, "FOOD.GROCERY.GENERAL", SoldAs("FOOD.CANDY.GENERAL", ("_RESALE",))),
    # ... or, with no preset, take the default (4.5 rule 3: "Sending _RESALE ... works in both modes").
    (("_RESALE",), None, False, "FOOD.GROCERY.GENERAL", SoldAs("FOOD.GROCERY.GENERAL", ("_RESALE",))),
    # 4.7: a product marked SALES_TAX makes a collected-tax line ...
    ((), ("SALES_TAX",), True, "FOOD.GROCERY.GENERAL", SoldAs(None, (), True, False, True)),
    # ... unless the line carries its own attributes (a marked preset's codes give no category).
    (("_RESALE",), ("SALES_TAX",), True, "FOOD.GROCERY.GENERAL", SoldAs("FOOD.GROCERY.GENERAL", ("_RESALE",))),
    # 4.7: exactly ["SALES_TAX"] is a collected-tax line; anything beside it or a suffix violates rule 1.
    (("SALES_TAX",), None, False, None, SoldAs(None, (), True, False)),
    (("SALES_TAX", "_RESALE"), None, False, None, SoldAs(None, (), True, True)),
    (("SALES_TAX._B2B",), ("FOOD.CANDY.GENERAL",), False, None, SoldAs(None, (), True, True)),
])
def test_what_is_sold_by_precedence(own, preset, marked, default, expected) -> None:  # type: ignore[no-untyped-def]
    assert what_is_sold(own, preset, marked, default, P) == expected


def test_an_unknown_code_points_below_the_line() -> None:
    with pytest.raises(ValidationFailed) as e:
        what_is_sold(("FOOD.GROCERY.GENERAL", "NOT_A_CODE"), None, False, None, P)
    assert [i.pointer for i in e.value.items] == [f"{P}/product/tax_attributes/1"]


@pytest.mark.parametrize(("codes", "flag", "marked"), [
    (("SALES_TAX",), False, True),  # "marked with SALES_TAX as its only tax code" (spec 2 / 4.7)
    (("FOOD.CANDY.GENERAL",), True, True),  # stored as marked
    (("SALES_TAX", "_RESALE"), False, False),
    ((), False, False),
])
def test_a_marked_product(codes, flag, marked) -> None:  # type: ignore[no-untyped-def]
    assert is_marked_product(codes, flag) is marked


@dataclass(frozen=True)
class Cust:
    id: str
    source_id: str
    source_account_id: str
    source: str = "native"
    exemption: CustomerExemption = CustomerExemption()
    merged_into_customer_id: str | None = None


EXEMPT = CustomerExemption(exempt=True)
ROWS = [
    Cust("cust_a1", "c-100", "acct-1", exemption=EXEMPT),
    Cust("cust_a2", "c-100", "acct-2"),
    Cust("cust_b", "c-200", "acct-1", exemption=EXEMPT, merged_into_customer_id="cust_z"),
    Cust("cust_s", "c-300", "acct-1", source="stripe", exemption=EXEMPT),
]


def test_one_match_gives_its_exemption_and_merge() -> None:
    assert match_customer(ROWS, "native", "c-200", None) == CustomerMatch("cust_b", EXEMPT, "cust_z")
    # source_account_id picks one of several accounts.
    assert match_customer(ROWS, "native", "c-100", "acct-1") == CustomerMatch("cust_a1", EXEMPT, None)


def test_several_matches_without_an_account_tax_the_line() -> None:
    # 4.5 rule 4: "an id held in several accounts without source_account_id" -> the line is taxed.
    m = match_customer(ROWS, "native", "c-100", None)
    assert (m.customer_id, m.exemption) == (None, None)
    assert m.detail == ("customer preset 'c-100' (source native) matches 2 customers in different accounts: "
                        "send source_account_id; line taxed without exemptions")


def test_no_match_taxes_the_line() -> None:
    # The source is part of the identity: c-300 is a stripe customer, not a native one.
    m = match_customer(ROWS, "native", "c-300", None)
    assert (m.customer_id, m.exemption) == (None, None)
    assert m.detail == "no customer matches preset 'c-300' (source native): line taxed without exemptions"
    assert match_customer(ROWS, "native", "c-100", "acct-9").customer_id is None
