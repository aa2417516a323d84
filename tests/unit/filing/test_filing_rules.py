"""Filing rules: state code, period, statuses, a period and a transaction filed once."""

from __future__ import annotations

from datetime import date
from functools import partial

import pytest
from filing_helpers import ST, line, row, txn

from levy.domain import filing_rules
from levy.domain.errors import Conflict, FailedPrecondition, ValidationFailed
from levy.domain.filing import prepare_return
from levy.domain.filing_rules import (
    FiledPeriod,
    check_filing_transition,
    check_no_overlap,
    check_not_already_filed,
    check_period_ended,
    check_unchanged,
    parse_period,
    validate_create_status,
)
from levy.store.reference_data import nexus_thresholds

validate_state_code = partial(filing_rules.validate_state_code, thresholds=nexus_thresholds())

ON = date(2026, 4, 15)


def test_state_code_shape_and_sales_tax():
    assert validate_state_code("US-ST-CA", on=ON) == "CA"
    assert validate_state_code("US-ST-DC", on=ON) == "DC"
    with pytest.raises(ValidationFailed) as e:
        validate_state_code("us-st-ca", on=ON)
    assert "did you mean 'US-ST-CA'" in e.value.detail and e.value.first.pointer == "/jurisdiction"
    with pytest.raises(ValidationFailed, match="filed per state"):
        validate_state_code("US-CO-CA-LOS_ANGELES", on=ON)
    with pytest.raises(ValidationFailed, match="not a US state"):
        validate_state_code("US-ST-XX", on=ON)
    for no_tax in ("US-ST-OR", "US-ST-DE", "US-ST-MT", "US-ST-NH"):
        with pytest.raises(ValidationFailed, match="no sales tax"):
            validate_state_code(no_tax, on=ON)
    with pytest.raises(ValidationFailed):
        validate_state_code(None, on=ON)
    assert validate_state_code("US-ST-OR", on=ON, taxing_states={"OR"}) == "OR"


def test_period_dates_and_order():
    assert parse_period("2026-01-01", "2026-03-31") == (date(2026, 1, 1), date(2026, 3, 31))
    assert parse_period("2026-01-01", "2026-01-01") == (date(2026, 1, 1), date(2026, 1, 1))
    with pytest.raises(ValidationFailed) as e:
        parse_period("2026-13-01", "soon")
    assert [i.pointer for i in e.value.items] == ["/period_start", "/period_end"]
    with pytest.raises(ValidationFailed, match="after it ends") as e:
        parse_period("2026-04-01", "2026-03-31")
    assert e.value.first.pointer == "/period_end"


def test_a_period_is_filed_only_after_it_ended():
    check_period_ended(date(2026, 3, 31), today=date(2026, 4, 1))
    with pytest.raises(FailedPrecondition):
        check_period_ended(date(2026, 3, 31), today=date(2026, 3, 31))


def test_filing_statuses():
    assert validate_create_status(None) == "prepared"
    assert validate_create_status("filed") == "filed"
    with pytest.raises(ValidationFailed):
        validate_create_status("draft")
    assert check_filing_transition("prepared", "filed") is True
    assert check_filing_transition("filed", "filed") is False
    with pytest.raises(FailedPrecondition) as e:
        check_filing_transition("filed", "prepared")
    assert e.value.first.meta == {"current_status": "filed", "requested_status": "prepared"}
    with pytest.raises(ValidationFailed):
        check_filing_transition("prepared", "void")


def test_double_filing_of_a_period_is_refused():
    filed = [FiledPeriod("fil_1", "US-ST-CA", date(2026, 1, 1), date(2026, 3, 31))]
    with pytest.raises(Conflict) as e:
        check_no_overlap("US-ST-CA", date(2026, 1, 1), date(2026, 3, 31), filed)
    assert e.value.status == 409 and e.value.first.meta["filing_id"] == "fil_1"
    with pytest.raises(Conflict, match="overlaps"):
        check_no_overlap("US-ST-CA", date(2026, 3, 31), date(2026, 4, 30), filed)
    check_no_overlap("US-ST-CA", date(2026, 4, 1), date(2026, 6, 30), filed)
    check_no_overlap("US-ST-NY", date(2026, 1, 1), date(2026, 3, 31), filed)
    check_no_overlap("US-ST-CA", date(2026, 1, 1), date(2026, 3, 31), filed, exclude_id="fil_1")


def test_a_transaction_is_filed_once_per_state():
    with pytest.raises(Conflict) as e:
        check_not_already_filed("US-ST-CA", [("T1", set()), ("T2", {"CA"}), ("T3", {"NY"})])
    assert e.value.first.meta == {"transaction_ids": ["T2"]}
    check_not_already_filed("US-ST-NY", [("T1", set()), ("T2", {"CA"})])
    # prepare_return leaves out what a filed return of the state already holds
    on_ca = txn("T2", [line("L", 1000, [row(ST, 60, 1000)])], status="filed", filed_states={"CA"})
    assert prepare_return("US-ST-CA", date(2026, 1, 1), date(2026, 3, 31), [on_ca]).transaction_ids == ()


def test_confirming_a_return_whose_transactions_changed_is_refused():
    q1 = (date(2026, 1, 1), date(2026, 3, 31))
    first = prepare_return("US-ST-CA", *q1, [txn("T", [line("L", 1000, [row(ST, 60, 1000)])])])
    same = prepare_return("US-ST-CA", *q1, [txn("T", [line("L", 1000, [row(ST, 60, 1000)])])])
    check_unchanged(first, same, "fil_1")
    changed = prepare_return("US-ST-CA", *q1, [txn("T", [line("L", 2000, [row(ST, 120, 2000)])])])
    with pytest.raises(Conflict, match="prepare it again"):
        check_unchanged(first, changed, "fil_1")
