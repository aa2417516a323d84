"""GET /transactions filters (Levy's choice; the spec shows none)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.transactions import rules as transactions
from levy.domain.transactions.rules import ListFilters
from levy.store.reference_data import customer_sources

parse_list_filters = partial(transactions.parse_list_filters, sources=customer_sources())


def test_no_filters():
    assert parse_list_filters() == ListFilters()


def test_all_filters():
    f = parse_list_filters(
        status="finalized", type="credit", reference_id="INV-9", customer_id="cust_1", source="stripe",
        transaction_date_from="2026-01-01", transaction_date_to="2026-02-01T05:00:00-05:00",
    )
    assert f.status == "finalized" and f.type == "credit" and f.reference_id == "INV-9"
    assert f.customer_id == "cust_1" and f.source == "stripe"
    assert f.transaction_date_from == datetime(2026, 1, 1, tzinfo=UTC)
    assert f.transaction_date_to == datetime(2026, 2, 1, 10, 0, tzinfo=UTC)  # -05:00 -> 10:00 UTC


def test_z_suffix():
    assert parse_list_filters(transaction_date_from="2026-03-01T00:00:00Z").transaction_date_from == datetime(
        2026, 3, 1, tzinfo=UTC)


def test_every_bad_filter_reported_by_parameter():
    with pytest.raises(ValidationFailed) as ei:
        parse_list_filters(status="open", type="refund", source="Stripe", transaction_date_from="yesterday")
    assert [i.parameter for i in ei.value.items] == ["status", "type", "source", "transaction_date_from"]


def test_date_range_must_not_be_empty():
    with pytest.raises(ValidationFailed) as ei:
        parse_list_filters(transaction_date_from="2026-02-01", transaction_date_to="2026-02-01")
    assert ei.value.first.parameter == "transaction_date_to"


# -- the console's search (issue 36) ----------------------------------------------------------


def test_search_to_date_is_inclusive_and_text_is_kept_as_typed():
    from levy.domain.transactions.rules import parse_search

    s = parse_search(reference=" INV-2026 ", customer="Acme", state="tx", date_from="2026-03-15", date_to="2026-03-15")
    # From = To = March 15 is that whole day: [Mar 15 00:00, Mar 16 00:00) UTC.
    assert s.filters.transaction_date_from == datetime(2026, 3, 15, tzinfo=UTC)
    assert s.filters.transaction_date_to == datetime(2026, 3, 16, tzinfo=UTC)
    assert (s.reference_text, s.customer_text, s.state, s.customer_id) == ("INV-2026", "Acme", "TX", None)
    assert parse_search(customer="cust_01ABC").customer_id == "cust_01ABC"
    # A date-time "To" stays exclusive, as the API's.
    assert parse_search(date_to="2026-03-15T12:00:00Z").filters.transaction_date_to == datetime(2026, 3, 15, 12,
                                                                                                  tzinfo=UTC)


def test_search_errors_come_together():
    from levy.domain.transactions.rules import parse_search

    with pytest.raises(ValidationFailed) as e:
        parse_search(status="voided", state="Texas", date_from="2026-03-16", date_to="2026-03-15")
    details = [item.detail for item in e.value.items]
    assert len(details) == 3, details
    assert any("status must be one of draft, finalized, filed, void" in d for d in details)
    assert any("state must be a two-letter" in d for d in details)
    assert any("transaction_date_to must be after" in d for d in details)
