"""Transactions (spec 2.8, 3.1, 4.6) through REST and gRPC on SQLite and PostgreSQL:
create/get/list, tax provided or calculated, lifecycle moves (allowed and refused),
updates, credits (full, partial, over-credit), reference_id uniqueness, merged
customers, idempotent retries. Collected-tax lines: test_transactions_collected.py.

Figures by hand: TX without postal code = Texas 6.25% only (10000 -> 625);
CA without postal code = 6% + 1.25% (10000 -> 600 + 125)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from levyserver import LevyServer
from txn_api import D, Txn, body, error_of, line, pointers, tax_line, uid, tx  # noqa: F401  (fixture)


def set_status_sql(server: LevyServer, tid: str, status: str) -> None:
    """Filing (another issue) moves finalized -> filed; the tests set it directly."""
    from sqlalchemy import update

    from levy.store.db import create_engine, transaction
    from levy.store.tables.transactions import transactions

    async def go() -> None:
        engine = create_engine(server.database_url, pool_size=1)
        try:
            async with transaction(engine, write=True) as conn:
                await conn.execute(update(transactions).where(transactions.c.id == tid).values(status=status))
        finally:
            await engine.dispose()

    asyncio.run(go())


# ------------------------------------------------------------------ create, get, list


def test_create_calculated_sale_and_get(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000, "TX"), line("b", 2000, "CA")))
    assert out["id"].startswith("txn_") and out["type"] == "sale" and out["status"] == "draft"
    # TX 10000 x 6.25% = 625; CA 2000 x 6% = 120 + 2000 x 1.25% = 25.
    assert [li["tax_amount"] for li in out["line_items"]] == ["625", "145"]
    assert out["tax_amount"] == "770" and out["calculated_tax_amount"] == "770"
    assert out["filing_tax_amount"] == "770" and out["filing_tax_amount_source"] == "calculated"
    assert out["source"] == "native" and out["currency"] == "USD"
    a = out["line_items"][0]
    assert (a["id"], a["unit_price"], a["quantity"]) == ("a", "10000", "1")
    assert a["customer"]["address"]["state"] == "TX"
    assert a["taxes"][0]["jurisdiction_name"] == "Texas" and a["taxes"][0]["tax_rate"] == "0.0625"
    assert a["taxes"][0]["is_registered"] is True and a["taxes"][0]["rule_name"]
    assert out["transaction_date"] == D
    got = tx.get(out["id"])
    assert got == out


def test_tax_provided_by_tax_amount(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), status="finalized", tax_amount="700"))
    assert out["status"] == "finalized"
    assert (out["tax_amount"], out["filing_tax_amount"], out["filing_tax_amount_source"]) == ("700", "700", "provided")
    assert out["calculated_tax_amount"] == "625"  # still stored for reporting
    assert out["line_items"][0]["tax_amount"] == "625"
    assert tx.get(out["id"])["filing_tax_amount_source"] == "provided"


def test_tax_amount_zero_is_provided(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), tax_amount="0"))
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("0", "provided")


def test_required_fields_and_bad_values(tx: Txn) -> None:
    errs = error_of(tx.create_raw({"line_items": [line()]}))
    assert pointers(errs) == {"/type", "/status"}
    assert {e["code"] for e in errs} == {"validation_required_field"}
    errs = error_of(tx.create_raw(body(line(), type="refund", status="filed")))
    assert pointers(errs) == {"/type", "/status"}
    errs = error_of(tx.create_raw(body(line(), tax_amount="-5")))
    assert pointers(errs) == {"/tax_amount"}
    errs = error_of(tx.create_raw(body()))  # a sale needs lines
    assert pointers(errs) == {"/line_items"}
    errs = error_of(tx.create_raw(body(line("a", 100, state=None))))
    assert "/line_items/0/customer/address" in pointers(errs)
    errs = error_of(tx.create_raw(body(line(), parent_transaction_id="txn_x")))
    assert pointers(errs) == {"/parent_transaction_id"}


def test_list_newest_first_paged_and_filtered(tx: Txn, admin_http: httpx.Client) -> None:
    cust = admin_http.post("/customers", json={"source_id": f"c-{uid()}"}).json()
    ref = f"ref-{uid()}"
    a = tx.create(body(line("a"), status="finalized"))
    b = tx.create(body(line("b"), reference_id=ref, transaction_date="2026-04-02T00:00:00Z"))
    c = tx.create(body(line("c", customer={"address": {"state": "TX"}, "preset": {"id": cust["source_id"]}}),
                       status="finalized", source="stripe"))
    page = tx.list(limit=2)
    assert [t["id"] for t in page["data"]] == [c["id"], b["id"]] and page["has_more"] is True
    rest = tx.list(limit=2, starting_after=b["id"])
    assert [t["id"] for t in rest["data"]] == [a["id"]] and rest["has_more"] is False
    assert [t["id"] for t in tx.list(status="finalized")["data"]] == [c["id"], a["id"]]
    assert [t["id"] for t in tx.list(reference_id=ref)["data"]] == [b["id"]]
    assert [t["id"] for t in tx.list(customer_id=cust["id"])["data"]] == [c["id"]]
    assert [t["id"] for t in tx.list(source="stripe")["data"]] == [c["id"]]
    assert [t["id"] for t in tx.list(transaction_date_from="2026-04-01")["data"]] == [b["id"]]
    assert [t["id"] for t in tx.list(transaction_date_to="2026-04-01")["data"]] == [c["id"], a["id"]]
    assert tx.list(type="credit")["data"] == []
    errs = error_of(tx.list_raw(status="open", transaction_date_from="yesterday"))
    assert {e["source"].get("parameter") for e in errs} == {"status", "transaction_date_from"}


def test_unknown_id_is_404(tx: Txn) -> None:
    assert error_of(tx.get_raw("txn_nope"), 404)[0]["code"] == "not_found"
    assert error_of(tx.update_raw("txn_nope", {"status": "void"}), 404)[0]["code"] == "not_found"


# ------------------------------------------------------------------ lifecycle (3.1)


@pytest.mark.parametrize("moves", [
    ["finalized"], ["void"], ["finalized", "void"], ["finalized", "draft", "finalized"],
])
def test_allowed_moves(tx: Txn, moves: list[str]) -> None:
    tid = tx.create(body(line()))["id"]
    for m in moves:
        assert tx.update(tid, {"status": m})["status"] == m
    assert tx.get(tid)["status"] == moves[-1]


@pytest.mark.parametrize("start,path,requested", [
    ("draft", [], "filed"),
    ("finalized", [], "filed"),
    ("void", ["void"], "draft"),
    ("void", ["void"], "finalized"),
    ("filed", ["finalized", "@filed"], "void"),
    ("filed", ["finalized", "@filed"], "draft"),
])
def test_refused_moves(tx: Txn, server: LevyServer, start: str, path: list[str], requested: str) -> None:
    tid = tx.create(body(line(), status="finalized" if start == "finalized" else "draft"))["id"]
    for m in path:
        if m.startswith("@"):
            set_status_sql(server, tid, m[1:])
        else:
            tx.update(tid, {"status": m})
    errs = error_of(tx.update_raw(tid, {"status": requested}))
    e = errs[0]
    assert e["code"] == "invalid_state" and e["source"]["pointer"] == "/status"
    assert f"'{start}'" in e["detail"] and f"'{requested}'" in e["detail"]
    assert e["meta"] == {"current_status": start, "requested_status": requested}
    assert tx.get(tid)["status"] == start


def test_line_items_change_only_in_draft(tx: Txn, server: LevyServer) -> None:
    tid = tx.create(body(line("a", 10000), status="finalized"))["id"]
    errs = error_of(tx.update_raw(tid, {"line_items": [line("a", 20000)]}))
    assert errs[0]["code"] == "invalid_state" and "move it to 'draft' first" in errs[0]["detail"]
    # finalized -> draft, then line_items with status finalized in a second call.
    tx.update(tid, {"status": "draft"})
    out = tx.update(tid, {"line_items": [line("a", 20000)], "status": "finalized"})
    assert out["status"] == "finalized" and out["tax_amount"] == "1250"  # 20000 x 6.25%
    assert tx.get(tid)["line_items"][0]["unit_price"] == "20000"
    set_status_sql(server, tid, "filed")
    errs = error_of(tx.update_raw(tid, {"line_items": [line("a", 1)]}))
    assert "final" in errs[0]["detail"]
    errs = error_of(tx.update_raw(tid, {"tax_amount": "1"}))
    assert errs[0]["code"] == "invalid_state"


def test_update_fields(tx: Txn) -> None:
    tid = tx.create(body(line("a", 10000)))["id"]
    errs = error_of(tx.update_raw(tid, {"type": "credit", "transaction_date": "2026-05-01T00:00:00Z"}))
    assert pointers(errs) == {"/type", "/transaction_date"}
    out = tx.update(tid, {"line_items": [line("a", 10000)], "discount_amount": "2000",
                          "transaction_date": "2026-05-01T00:00:00Z"})
    assert out["tax_amount"] == "500" and out["transaction_date"] == "2026-05-01T00:00:00Z"  # 8000 x 6.25%
    ref = f"r-{uid()}"
    assert tx.update(tid, {"reference_id": ref})["reference_id"] == ref
    assert "reference_id" not in {k for k, v in tx.update(tid, {"reference_id": None}).items() if v}


def test_update_tax_amount_provided_then_cleared(tx: Txn) -> None:
    tid = tx.create(body(line("a", 10000)))["id"]
    out = tx.update(tid, {"tax_amount": "900"})
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("900", "provided")
    out = tx.update(tid, {"tax_amount": None})
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("625", "calculated")


# ------------------------------------------------------------------ concurrency


def _parallel(calls: list) -> list:  # type: ignore[type-arg]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda f: f(), calls))


def test_concurrent_moves_are_serialised(tx: Txn) -> None:
    """Moves lock the row: each one sees the status the other left, never the same starting status."""
    for _ in range(4):
        tid = tx.create(body(line(), status="finalized"))["id"]
        # From finalized: -> void and -> draft at once. Serial outcomes only: void first (then draft
        # is refused: void is final), or draft first (then draft -> void is allowed).
        results = _parallel([lambda: tx.update_raw(tid, {"status": "void"}),
                             lambda: tx.update_raw(tid, {"status": "draft"})])
        (sv, ov), (sd, od) = results
        assert sv == 200 and ov["status"] == "void", results
        if sd == 422:
            assert od["errors"][0]["meta"] == {"current_status": "void", "requested_status": "draft"}
        else:
            assert sd == 200 and od["status"] == "draft"
        assert tx.get(tid)["status"] == "void"


def test_concurrent_credits_respect_the_limit(tx: Txn) -> None:
    """Credits lock their parent while checking the limit: 4 credits of 4000 on a 10000 sale -> 2 fit."""
    sale = tx.create(body(line("a", 10000), status="finalized"))
    results = _parallel([
        lambda: tx.create_raw(body(line("a", 4000), type="credit", status="finalized",
                                   parent_transaction_id=sale["id"]))
        for _ in range(4)
    ])
    assert sorted(r[0] for r in results) == [200, 200, 422, 422], results
    assert {r[1]["errors"][0]["meta"]["remaining_amount"] for r in results if r[0] == 422} == {2000}


def test_reference_id_unique_and_concurrent(tx: Txn, server: LevyServer) -> None:
    ref = f"inv-{uid()}"
    first = tx.create(body(line(), reference_id=ref))
    status, out = tx.create_raw(body(line(), reference_id=ref))
    assert status == 409, out
    e = out["errors"][0]
    assert e["meta"] == {"existing_transaction_id": first["id"],
                         "existing_transaction_path": f"/transactions/{first['id']}"}
    other = tx.create(body(line()))
    status, out = tx.update_raw(other["id"], {"reference_id": ref})
    assert status == 409 and out["errors"][0]["meta"]["existing_transaction_id"] == first["id"]
    # Many creates of one new reference at once: exactly one transaction.
    ref2 = f"inv-{uid()}"
    results = _parallel([lambda: tx.create_raw(body(line(), reference_id=ref2)) for _ in range(6)])
    codes = sorted(r[0] for r in results)
    assert codes == [200] + [409] * 5, results
    winner = next(r[1]["id"] for r in results if r[0] == 200)
    assert all(r[1]["errors"][0]["meta"]["existing_transaction_id"] == winner for r in results if r[0] == 409)
    assert [t["id"] for t in tx.list(reference_id=ref2)["data"]] == [winner]


# ------------------------------------------------------------------ credits (4.6 workflows 3-5)


def test_full_credit_copies_parent_and_over_credit_refused(tx: Txn) -> None:
    sale = tx.create(body(line("a", 10000, "TX"), line("b", 2000, "CA"), status="finalized"))
    full = {"type": "credit", "status": "finalized", "transaction_date": D, "parent_transaction_id": sale["id"]}
    credit = tx.create(full)
    assert credit["type"] == "credit" and credit["parent_transaction_id"] == sale["id"]
    assert [li["id"] for li in credit["line_items"]] == ["a", "b"]
    assert [li["tax_amount"] for li in credit["line_items"]] == ["625", "145"]  # the stored rows, reused
    assert (credit["tax_amount"], credit["filing_tax_amount_source"]) == ("770", "calculated")
    # A second full credit exceeds what is left.
    errs = error_of(tx.create_raw(full))
    assert errs[0]["meta"] == {"remaining_amount": 0, "remaining_tax": 0}
    assert "remaining amount 0, remaining tax 0" in errs[0]["detail"]


def test_full_credit_of_a_sale_with_collected_tax(tx: Txn) -> None:
    # The sale's tax is provided by its collected line: 300 (calculated 770 kept for reporting).
    sale = tx.create(body(line("a", 10000, "TX"), line("b", 2000, "CA"), tax_line("T", 300), status="finalized"))
    assert (sale["tax_amount"], sale["calculated_tax_amount"]) == ("300", "770")
    assert [li["id"] for li in sale["line_items"]] == ["a", "b"]
    full = {"type": "credit", "status": "finalized", "transaction_date": D, "parent_transaction_id": sale["id"]}
    # Copying reverses the calculated 770, more than the 300 charged: refused with what is left.
    errs = error_of(tx.create_raw(full))
    assert errs[0]["meta"] == {"remaining_amount": 12000, "remaining_tax": 300}
    # Sending the credit's tax_amount reverses everything (4.7 tax-only rule 4).
    credit = tx.create({**full, "tax_amount": "300"})
    assert [li["id"] for li in credit["line_items"]] == ["a", "b"]
    assert (credit["tax_amount"], credit["filing_tax_amount_source"]) == ("300", "provided")


def test_partial_credits_by_reference_and_limits(tx: Txn) -> None:
    ref = f"s-{uid()}"
    sale = tx.create(body(line("a", 10000), status="finalized", reference_id=ref))
    c1 = tx.create(body(line("a", 4000), type="credit", status="finalized", parent_reference_id=ref))
    assert c1["parent_transaction_id"] == sale["id"] and c1["tax_amount"] == "250"  # 4000 x 6.25%
    errs = error_of(tx.create_raw(body(line("a", 7000), type="credit", status="finalized",
                                       parent_transaction_id=sale["id"])))
    assert errs[0]["meta"] == {"remaining_amount": 6000, "remaining_tax": 375}
    # A void credit no longer counts.
    tx.update(c1["id"], {"status": "void"})
    c2 = tx.create(body(line("a", 7000), type="credit", status="draft", parent_transaction_id=sale["id"]))
    # Raising the draft credit's lines over the limit is refused too.
    errs = error_of(tx.update_raw(c2["id"], {"line_items": [line("a", 12000)]}))
    assert errs[0]["meta"]["remaining_amount"] == 10000
    # A credit without parent uses its lines.
    free = tx.create(body(line("x", 500), type="credit", status="finalized"))
    assert free["tax_amount"] == "31" and "parent_transaction_id" not in {k for k, v in free.items() if v}


def test_credit_parent_rules(tx: Txn) -> None:
    errs = error_of(tx.create_raw(body(line(), type="credit", status="finalized", parent_transaction_id="txn_none")))
    assert pointers(errs) == {"/parent_transaction_id"}
    errs = error_of(tx.create_raw({"type": "credit", "status": "finalized", "transaction_date": D}))
    assert pointers(errs) == {"/line_items"}
    errs = error_of(tx.create_raw(body(line("a", -100), type="credit", status="finalized")))
    assert pointers(errs) == {"/line_items/0/unit_price"}
    draft = tx.create(body(line()))
    errs = error_of(tx.create_raw(body(type="credit", status="finalized", parent_transaction_id=draft["id"])))
    assert errs[0]["code"] == "invalid_state"


# ------------------------------------------------------------------ merged customers


def test_merged_customer_cannot_be_in_a_new_sale(tx: Txn, admin_http: httpx.Client) -> None:
    old = admin_http.post("/customers", json={"source_id": f"old-{uid()}"}).json()
    new = admin_http.post("/customers", json={"source_id": f"new-{uid()}"}).json()
    r = admin_http.post(f"/customers/{old['id']}/merge", json={"into_customer_id": new["id"]})
    assert r.status_code == 200, r.text
    bad = line("a", customer={"address": {"state": "TX"}, "preset": {"id": old["source_id"]}})
    errs = error_of(tx.create_raw(body(bad)))
    assert pointers(errs) == {"/line_items/0/customer/preset"}
    assert new["id"] in errs[0]["detail"] and "line 'a'" in errs[0]["detail"]
    # A credit may still name it.
    assert tx.create(body(bad, type="credit", status="finalized"))["type"] == "credit"


# ------------------------------------------------------------------ idempotency


def test_idempotent_create_and_update(tx: Txn) -> None:
    key = f"k-{uid()}"
    b = body(line("a", 10000))
    first = tx.create(b, headers={"Idempotency-Key": key})
    again = tx.create(b, headers={"Idempotency-Key": key})
    assert again == first
    assert len([t for t in tx.list(limit=1000)["data"] if t["id"] == first["id"]]) == 1
    errs = error_of(tx.create_raw(body(line("a", 1)), headers={"Idempotency-Key": key}))
    assert errs[0]["code"] == "idempotency_key_reused"
    ukey = f"u-{uid()}"
    up = tx.update(first["id"], {"tax_amount": "10"}, headers={"Idempotency-Key": ukey})
    assert tx.update(first["id"], {"tax_amount": "10"}, headers={"Idempotency-Key": ukey}) == up
    tx.update(first["id"], {"tax_amount": "20"})
    # The replay answers the first response, without applying it again.
    assert tx.update(first["id"], {"tax_amount": "10"}, headers={"Idempotency-Key": ukey})["tax_amount"] == "10"
    assert tx.get(first["id"])["tax_amount"] == "20"
