"""The write path of issue 20 through REST and gRPC on SQLite and PostgreSQL: what a create
answers (its lines rendered from the request's own messages, its rows inserted one statement
per table) is what a later read of the stored transaction answers, for a 10-line sale with
every kind of line input, a tax-only transaction with its attribution, and a taken
reference id (409 naming the holder, nothing stored).

Figures by hand: TX address without postal code -> Texas 6.25% only; CA -> 6% + 1.25%.
"""

from __future__ import annotations

from txn_api import Txn, body, line, tax_line, tx, uid  # noqa: F401  (fixture)


def _lines() -> list[dict]:
    out = []
    for i in range(10):
        extra: dict = {}
        if i % 3 == 0:
            extra["discount_amount"] = "100"
        if i % 4 == 1:
            extra["customer"] = {"address": {"state": "CA", "city": "Sacramento", "line1": "1 Main St"}}
        out.append(line(f"l{i}", 1000 + i, "TX", ["GENERAL.TANGIBLE.GOODS"], qty=str(1 + i % 3), **extra))
    return out


def test_created_transaction_reads_back_as_answered(tx: Txn) -> None:
    out = tx.create(body(*_lines(), status="finalized", reference_id=f"wp-{uid()}", discount_amount="50"))
    assert len(out["line_items"]) == 10
    # l0: 1 x 1000, less its own 100 and its share of the 50 -> about 900 taxable at 6.25%: some tax.
    assert int(out["line_items"][0]["tax_amount"]) > 0
    assert tx.get(out["id"]) == out
    listed = tx.list(reference_id=out["reference_id"])
    assert listed["data"] == [out]


def test_tax_only_transaction_reads_back_with_its_attribution(tx: Txn) -> None:
    out = tx.create(body(tax_line("T", 625, "TX"), status="finalized"))
    # A tax-only transaction: no goods lines stored, the 625 attributed to Texas.
    assert out["tax_amount"] == "625"
    assert tx.get(out["id"]) == out


def test_a_taken_reference_id_is_refused_and_nothing_is_stored(tx: Txn) -> None:
    ref = f"wp-{uid()}"
    first = tx.create(body(line("a", 10000), status="finalized", reference_id=ref))
    status, err = tx.create_raw(body(line("b", 2000, "CA"), status="finalized", reference_id=ref))
    assert status == 409
    assert err["errors"][0]["meta"]["existing_transaction_id"] == first["id"]
    assert [t["id"] for t in tx.list(reference_id=ref)["data"]] == [first["id"]]
    assert tx.get(first["id"]) == first
