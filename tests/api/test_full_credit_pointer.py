"""A full credit sends no line_items (issue 16): a refusal about the lines it copied points at the
field naming its parent, not at /line_items. REST and gRPC, SQLite and PostgreSQL.

Figures by hand: TX without postal code = Texas 6.25% only (10000 -> 625)."""

from __future__ import annotations

import pytest

from txn_api import D, Txn, body, error_of, line, pointers, uid, tx  # noqa: F401  (fixture)


@pytest.mark.parametrize("field", ["parent_transaction_id", "parent_reference_id"])
def test_second_full_credit_points_at_the_parent_field(tx: Txn, field: str) -> None:
    ref = f"s-{uid()}"
    sale = tx.create(body(line("a", 10000), status="finalized", reference_id=ref))  # tax 625
    parent = sale["id"] if field == "parent_transaction_id" else ref
    full = {"type": "credit", "status": "finalized", "transaction_date": D, field: parent}
    assert tx.create(full)["tax_amount"] == "625"
    # Nothing is left to credit: 10000 - 10000 = 0 amount, 625 - 625 = 0 tax.
    errs = error_of(tx.create_raw(full))
    assert pointers(errs) == {f"/{field}"}, errs
    assert errs[0]["meta"] == {"remaining_amount": 0, "remaining_tax": 0}
    if tx.transport == "grpc":
        code, out = tx.create_raw(full)
        assert [v[0] for v in out["violations"]] == [f"/{field}"]
