"""Lifecycle (spec 3.1): every move, allowed and refused, and line editability."""

from __future__ import annotations

import itertools
from functools import partial

import pytest

from levy.domain.errors import FailedPrecondition, RequiredField, ValidationFailed
from levy.domain.transactions import rules as transactions
from levy.domain.transactions.rules import (
    STATUSES,
    check_lines_editable,
    check_parent_fields,
    check_transition,
    validate_create_status,
    validate_type,
)
from levy.store.reference_data import customer_sources

validate_source_field = partial(transactions.validate_source_field, sources=customer_sources())

# The table of 3.1, written out by hand: (from, to, needs filing).
ALLOWED = {
    ("draft", "finalized"): False,
    ("draft", "void"): False,
    ("finalized", "void"): False,
    ("finalized", "draft"): False,
    ("finalized", "filed"): True,
}


@pytest.mark.parametrize(("current", "requested"), [m for m, f in ALLOWED.items() if not f])
def test_allowed_api_moves(current, requested):
    assert check_transition(current, requested) is True


def test_finalized_to_filed_only_by_filing():
    assert check_transition("finalized", "filed", by_filing=True) is True
    with pytest.raises(FailedPrecondition) as ei:
        check_transition("finalized", "filed")
    item = ei.value.first
    assert item.status == 422 and item.pointer == "/status"
    assert "'finalized'" in item.detail and "'filed'" in item.detail
    assert item.meta == {"current_status": "finalized", "requested_status": "filed"}


# 4 statuses give 12 ordered pairs of different statuses; 5 are allowed, so these 7 are refused.
REFUSED = [
    (a, b) for a, b in itertools.product(STATUSES, STATUSES) if a != b and (a, b) not in ALLOWED
]


@pytest.mark.parametrize(("current", "requested"), REFUSED)
@pytest.mark.parametrize("by_filing", [False, True])
def test_refused_moves_name_both_statuses(current, requested, by_filing):
    with pytest.raises(FailedPrecondition) as ei:
        check_transition(current, requested, by_filing=by_filing)
    item = ei.value.first
    assert item.status == 422 and item.pointer == "/status" and item.code == "invalid_state"
    assert f"'{current}'" in item.detail and f"'{requested}'" in item.detail


@pytest.mark.parametrize("terminal", ["filed", "void"])
def test_terminal_statuses_say_final(terminal):
    for other in STATUSES:
        if other == terminal:
            continue
        with pytest.raises(FailedPrecondition, match="final"):
            check_transition(terminal, other, by_filing=True)


@pytest.mark.parametrize("status", STATUSES)
def test_unchanged_status_is_a_noop(status):
    assert check_transition(status, status) is False


@pytest.mark.parametrize("bad", ["FINALIZED", "deleted", "", None, 1])
def test_unknown_requested_status(bad):
    with pytest.raises(ValidationFailed) as ei:
        check_transition("draft", bad)
    assert ei.value.first.pointer == "/status"
    assert not isinstance(ei.value, FailedPrecondition)


def test_lines_editable_only_in_draft():
    check_lines_editable("draft")
    with pytest.raises(FailedPrecondition, match="move it to 'draft' first") as ei:
        check_lines_editable("finalized")
    assert ei.value.first.pointer == "/line_items"
    for st in ("filed", "void"):
        with pytest.raises(FailedPrecondition, match=f"'{st}' transactions are final"):
            check_lines_editable(st)


def test_create_status():
    assert validate_create_status("draft") == "draft"
    assert validate_create_status("finalized") == "finalized"
    for st in ("filed", "void"):
        with pytest.raises(FailedPrecondition, match=f"not '{st}'"):
            validate_create_status(st)
    with pytest.raises(RequiredField):
        validate_create_status(None)
    with pytest.raises(ValidationFailed):
        validate_create_status("Draft")


def test_type_field():
    assert validate_type("sale") == "sale" and validate_type("credit") == "credit"
    with pytest.raises(RequiredField):
        validate_type(None)
    for bad in ("refund", "Sale", "", 0):
        with pytest.raises(ValidationFailed) as ei:
            validate_type(bad)
        assert ei.value.first.pointer == "/type"


def test_source_field_defaults_to_native_and_must_be_known():
    assert validate_source_field(None) == "native"
    assert validate_source_field("stripe") == "stripe"
    with pytest.raises(ValidationFailed) as ei:
        validate_source_field("Stripe")
    assert ei.value.first.pointer == "/source"


def test_parent_fields():
    assert check_parent_fields("credit", "txn_1", None) is True
    assert check_parent_fields("credit", None, "INV-1") is True
    assert check_parent_fields("credit", None, None) is False
    assert check_parent_fields("sale", None, None) is False
    with pytest.raises(ValidationFailed) as ei:
        check_parent_fields("sale", None, "INV-1")
    assert ei.value.first.pointer == "/parent_reference_id"
