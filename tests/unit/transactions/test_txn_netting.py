"""Marked-product netting for the three integrated sources (spec 4.7 marked products rule 3)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from txn_helpers import indexed, line, st

import levy
from levy.domain.errors import ValidationFailed
from levy.domain.transactions import collected as transactions_collected, rules as transactions
from levy.domain.transactions.rules import tax_on_create
from levy.domain.transactions.collected import (
    RULE_MARKED_NEGATIVE,
)
from levy.store.reference_data import netting_policies as load_netting_policies

nets_marked_lines = partial(transactions_collected.nets_marked_lines, load_netting_policies())
split_lines = partial(transactions_collected.split_lines, netting=load_netting_policies())
plan_lines = partial(transactions.plan_lines, netting=load_netting_policies())

NETTING = ["quickbooks", "chargebee", "stripe"]


def test_data_file_three_sources_and_their_negative_only_rule():
    doc = json.loads((Path(levy.__file__).parent / "data" / "customer_sources.json").read_text())
    got = {e["source"]: e.get("negative_marked_only_document") for e in doc["sources"] if e["nets_marked_lines"]}
    assert got == {"quickbooks": "not_recorded", "chargebee": "not_recorded", "stripe": "store_off_returns"}
    assert all("negative_marked_only_document" not in e for e in doc["sources"] if not e["nets_marked_lines"])
    assert {s for s, p in load_netting_policies().items() if p.nets_marked_lines} == set(NETTING)


def test_which_documents_net():
    assert nets_marked_lines("quickbooks", "sale") and nets_marked_lines("quickbooks", "credit")
    assert nets_marked_lines("chargebee", "credit")
    assert nets_marked_lines("stripe", "sale")
    assert not nets_marked_lines("stripe", "credit")  # the payments source's credit notes are not netted
    assert not nets_marked_lines("native", "sale") and not nets_marked_lines("unknown-source", "sale")


@pytest.mark.parametrize("source", NETTING)
def test_non_negative_net_kept_as_one_line(source):
    lines = indexed(line("G", 1000), line("M1", 500, marked=True), line("M2", 100, marked=True, discounts=(300,)))
    s = split_lines(lines, source=source)
    # 500 + (100 - 300) = 300 kept as one collected line; goods unchanged
    assert s.collected_amount == 300 and len(s.collected) == 1 and s.reduction == 0 and s.netted
    assert [t.id for t in s.goods] == ["G"] and s.goods[0].line.unit_price == 1000


@pytest.mark.parametrize("source", NETTING)
def test_no_negative_marked_line_nothing_netted(source):
    s = split_lines(indexed(line("M1", 500, marked=True), line("M2", 20, marked=True)), source=source)
    assert s.collected_amount == 520 and len(s.collected) == 2 and not s.netted


def test_negative_net_lowers_the_document_tax_never_below_zero():
    lines = indexed(line("G", 1000), line("M1", 100, marked=True), line("M2", -250, marked=True))
    s = split_lines(lines, source="quickbooks")
    # net 100 - 250 = -150: no collected line kept, tax lowered by 150
    assert s.collected_amount == 0 and s.collected == () and s.reduction == 150
    assert [t.id for t in s.goods] == ["G"]
    assert tax_on_create(calculated=80, tax_amount=400, split=s).tax_amount == 250  # 400 - 150
    assert tax_on_create(calculated=80, tax_amount=100, split=s).tax_amount == 0  # 100 - 150 -> 0, not -50
    t = tax_on_create(calculated=80, tax_amount=None, split=s)
    assert t.tax_amount == 0 and t.filing_tax_amount_source == "provided"


def test_plain_collected_lines_are_not_netted_but_lowered_by_the_negative_net():
    lines = indexed(line("G", 1000), st("T", 50), line("M", -80, marked=True))
    s = split_lines(lines, source="chargebee")
    assert s.collected_amount == 50 and [t.id for t in s.collected] == ["T"] and s.reduction == 80
    assert tax_on_create(calculated=0, tax_amount=None, split=s).tax_amount == 0  # 50 - 80 -> 0
    assert tax_on_create(calculated=0, tax_amount=100, split=s).tax_amount == 70  # 100 + 50 - 80


def test_stripe_credit_notes_not_netted_negative_refused():
    lines = indexed(line("G", 1000), line("M1", 100, marked=True), line("M2", -250, marked=True))
    with pytest.raises(ValidationFailed) as ei:
        split_lines(lines, source="stripe", transaction_type="credit")
    assert [i.meta["rule"] for i in ei.value.items] == [RULE_MARKED_NEGATIVE]
    s = split_lines(lines, source="quickbooks", transaction_type="credit")
    assert s.reduction == 150


@pytest.mark.parametrize("source", ["quickbooks", "chargebee"])
@pytest.mark.parametrize(("ttype", "parent"), [("sale", False), ("credit", False)])
def test_negative_only_marked_document_not_recorded(source, ttype, parent):
    lines = indexed(line("M1", 100, marked=True), line("M2", -300, marked=True))
    plan = plan_lines(lines, transaction_type=ttype, source=source, has_parent=parent)
    assert plan.record is False and not plan.needs_attribution


def test_negative_only_marked_document_stored_off_returns_on_stripe():
    lines = indexed(line("M1", 100, marked=True), line("M2", -300, marked=True))
    plan = plan_lines(lines, transaction_type="sale", source="stripe")
    assert plan.record and plan.tax_only and plan.split.goods == ()
    assert plan.held_off_reason == "negative_marked_only" and not plan.needs_attribution
    assert tax_on_create(calculated=0, tax_amount=None, split=plan.split).tax_amount == 0


def test_negative_only_marked_credit_naming_a_parent_is_recorded_and_held_off():
    lines = indexed(line("M1", 100, marked=True), line("M2", -300, marked=True))
    plan = plan_lines(lines, transaction_type="credit", source="quickbooks", has_parent=True)
    assert plan.record and plan.held_off_reason == "credit_with_parent"


def test_marked_only_netting_to_zero_or_more_is_an_ordinary_tax_only_document():
    lines = indexed(line("M1", 300, marked=True), line("M2", -300, marked=True))
    plan = plan_lines(lines, transaction_type="sale", source="quickbooks")
    assert plan.record and plan.tax_only and plan.needs_attribution and plan.split.collected_amount == 0


def test_negative_net_with_a_plain_line_is_not_marked_only():
    lines = indexed(st("T", 40), line("M", -300, marked=True))
    plan = plan_lines(lines, transaction_type="sale", source="quickbooks")
    assert plan.record and plan.split.disposition == "record" and plan.needs_attribution
