"""Credits never exceed what their sale charged (issue 16, first section), through REST and gRPC
on SQLite and PostgreSQL: the five reproductions of the issue, and the refusals' shape.

Figures by hand: CA without postal code = California 6% + statewide local 1.25%, so a sale of
10000 charges 600 + 125 = 725 and a line of 1000 is taxed 60 + 12.5 -> 13 = 73 by the engine."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from txn_api import D, Txn, body, error_of, line, tx  # noqa: F401  (fixture)

MARCH = {"from": "2026-03-01", "to": "2026-03-31"}


def finalized_sale(tx: Txn, *lines: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return tx.create(body(*(lines or (line("a", 10000, "CA"),)), status="finalized", **extra))


def full_credit(sale_id: str) -> dict[str, Any]:
    return {"type": "credit", "status": "finalized", "transaction_date": D, "parent_transaction_id": sale_id}


def partial_credit(sale_id: str, *lines: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return body(*lines, type="credit", status="finalized", parent_transaction_id=sale_id, **extra)


def credited_sale(tx: Txn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A sale of 10000 in CA (tax 725), finalized, then fully credited (tax 725)."""
    sale = finalized_sale(tx)
    assert sale["tax_amount"] == "725"
    credit = tx.create(full_credit(sale["id"]))
    assert (credit["tax_amount"], credit["line_items"][0]["unit_price"]) == ("725", "10000")
    return sale, credit


def refusal(result: tuple[int, dict[str, Any]], pointer: str, credit_ids: list[str]) -> dict[str, Any]:
    """The one error of a refused change to a credited sale: 422 invalid_state naming the credits."""
    errs = error_of(result)
    assert len(errs) == 1, errs
    e = errs[0]
    assert (e["code"], e["source"]["pointer"]) == ("invalid_state", pointer), e
    assert e["meta"]["credit_transaction_ids"] == credit_ids
    assert all(cid in e["detail"] for cid in credit_ids)
    return e


def state_totals(http: httpx.Client) -> dict[str, tuple[str, str]]:
    r = http.get("/reports/liability", params=MARCH)
    assert r.status_code == 200, r.text
    return {t["jurisdiction"]: (t["gross_sales"], t["filing_tax_amount"]) for t in r.json()["state_totals"]}


# ------------------------------------------------------------------ 1. back to draft, refinalized smaller


def test_credited_sale_cannot_move_back_to_draft(tx: Txn) -> None:
    sale, credit = credited_sale(tx)
    e = refusal(tx.update_raw(sale["id"], {"status": "draft"}), "/status", [credit["id"]])
    assert "'draft'" in e["detail"] and "void the credits first" in e["detail"]
    assert (e["meta"]["credited_amount"], e["meta"]["credited_tax"]) == (10000, 725)
    assert tx.get(sale["id"]) == sale
    # With the credit voided, the sale moves and is refinalized smaller: 100 -> 6 + 1.25 -> 1 = 7.
    tx.update(credit["id"], {"status": "void"})
    tx.update(sale["id"], {"status": "draft"})
    out = tx.update(sale["id"], {"line_items": [line("a", 100, "CA")], "status": "finalized"})
    assert (out["status"], out["tax_amount"]) == ("finalized", "7")


# ------------------------------------------------------------------ 2. tax_amount lowered below the credits


def test_credited_sale_tax_cannot_go_below_the_credits(tx: Txn) -> None:
    sale, credit = credited_sale(tx)
    e = refusal(tx.update_raw(sale["id"], {"tax_amount": "1"}), "/tax_amount", [credit["id"]])
    assert "tax 1 is below the 725 credited" in e["detail"]
    assert tx.get(sale["id"])["tax_amount"] == "725"
    # 724 is still below; 725 (what it charged) and more are fine.
    refusal(tx.update_raw(sale["id"], {"tax_amount": "724"}), "/tax_amount", [credit["id"]])
    assert tx.update(sale["id"], {"tax_amount": "725"})["filing_tax_amount"] == "725"
    assert tx.update(sale["id"], {"tax_amount": "900"})["filing_tax_amount"] == "900"


def test_partly_credited_sale_tax_lowered_to_what_is_credited(tx: Txn) -> None:
    sale = finalized_sale(tx)
    c = tx.create(partial_credit(sale["id"], line("a", 4000, "CA")))
    assert c["tax_amount"] == "290"  # 600 x 4000/10000 = 240; 125 x 0.4 = 50
    assert tx.update(sale["id"], {"tax_amount": "290"})["tax_amount"] == "290"
    refusal(tx.update_raw(sale["id"], {"tax_amount": "289"}), "/tax_amount", [c["id"]])
    # A further credit only gets what is left: tax 0.
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("a", 1000, "CA"))))
    assert errs[0]["meta"] == {"remaining_amount": 6000, "remaining_tax": 0}


# ------------------------------------------------------------------ 3. voided while a credit stands


def test_credited_sale_cannot_be_voided_and_the_report_stays_whole(tx: Txn, admin_http: httpx.Client) -> None:
    sale, credit = credited_sale(tx)
    e = refusal(tx.update_raw(sale["id"], {"status": "void"}), "/status", [credit["id"]])
    assert "'void'" in e["detail"]
    assert tx.get(sale["id"])["status"] == "finalized"
    # March: 10000 - 10000 and 725 - 725; never the -10000 / -725 of a voided sale.
    assert state_totals(admin_http) == {"US-ST-CA": ("0", "0")}
    # A draft credit counts too (it is not void).
    tx.update(credit["id"], {"status": "void"})
    draft = tx.create({**full_credit(sale["id"]), "status": "draft"})
    refusal(tx.update_raw(sale["id"], {"status": "void"}), "/status", [draft["id"]])
    tx.update(draft["id"], {"status": "void"})
    assert tx.update(sale["id"], {"status": "void"})["status"] == "void"
    assert state_totals(admin_http) == {}


def test_void_and_credit_at_once_never_both_succeed(tx: Txn) -> None:
    """The sale's row lock serialises its void and a credit against it: one of them wins."""
    for _ in range(4):
        sale = finalized_sale(tx)
        with ThreadPoolExecutor(2) as pool:
            void = pool.submit(tx.update_raw, sale["id"], {"status": "void"})
            credit = pool.submit(tx.create_raw, full_credit(sale["id"]))
            (sv, ov), (sc, oc) = void.result(), credit.result()
        assert sorted([sv, sc]) == [200, 422], (ov, oc)
        if sv == 200:  # the credit came second: its parent is void
            assert oc["errors"][0]["meta"] == {"parent_status": "void"}
        else:
            assert ov["errors"][0]["meta"]["credit_transaction_ids"] == [oc["id"]]


# ------------------------------------------------------------------ 4. another currency


def test_credit_in_another_currency_is_refused(tx: Txn) -> None:
    sale = finalized_sale(tx, line("a", 10000, "CA"), currency="JPY", exchange_rate="0.0066")
    assert sale["currency"] == "JPY"
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("a", 10000, "CA"), currency="USD")))
    assert len(errs) == 1 and errs[0]["source"]["pointer"] == "/currency"
    assert "JPY" in errs[0]["detail"] and errs[0]["meta"] == {"parent_currency": "JPY"}
    # No currency sent means USD: refused the same way; in JPY it is accepted.
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("a", 10000, "CA"))))
    assert errs[0]["source"]["pointer"] == "/currency"
    ok = tx.create(partial_credit(sale["id"], line("a", 10000, "CA"), currency="JPY"))
    assert (ok["currency"], ok["tax_amount"]) == ("JPY", "725")


# ------------------------------------------------------------------ 5. partial credits add up to the sale


def test_ten_partial_credits_complete_the_sale_to_the_cent(tx: Txn) -> None:
    sale = finalized_sale(tx)
    taxes = [tx.create(partial_credit(sale["id"], line("a", 1000, "CA")))["tax_amount"] for _ in range(10)]
    # Nine partial credits: 60 + 12.5 -> 13 = 73 each, 657 in all. The tenth completes the line and
    # takes what remains of each row: 600 - 540 = 60 and 125 - 117 = 8, tax 68. 657 + 68 = 725.
    assert taxes == ["73"] * 9 + ["68"]
    assert sum(int(t) for t in taxes) == 725
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("a", 1, "CA"))))
    assert errs[0]["meta"] == {"remaining_amount": 0, "remaining_tax": 0}


def test_credit_line_reverses_its_sale_line(tx: Txn) -> None:
    # Lines a (CA 10000: 725) and b (TX 2000: 6.25% = 125). A credit of line b reverses the TX row,
    # whatever address it sends; 2500 of b is more than b charged, even though 12000 remain in total.
    sale = finalized_sale(tx, line("a", 10000, "CA"), line("b", 2000, "TX"))
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("b", 2500, "TX"))))
    assert errs[0]["source"]["pointer"] == "/line_items/0"
    assert errs[0]["meta"] == {"line_id": "b", "remaining_amount": 2000, "remaining_tax": 125}
    out = tx.create(partial_credit(sale["id"], line("b", 1000, "CA")))
    rows = out["line_items"][0]["taxes"]
    assert [(r["jurisdiction_name"], r["tax_amount"]) for r in rows] == [("Texas", "63")]  # 62.5 -> 63
    assert out["tax_amount"] == "63"


def test_credit_line_naming_no_sale_line_is_bounded_per_state(tx: Txn, admin_http: httpx.Client) -> None:
    # The spec lets a partial credit send any lines. A CA sale credited by a TX line 'z' would put
    # -1000 / -63 on Texas, which the sale never charged: refused by the per-jurisdiction bound.
    sale = finalized_sale(tx)
    errs = error_of(tx.create_raw(partial_credit(sale["id"], line("a", 500, "CA"), line("z", 1000, "TX"))))
    assert len(errs) == 1 and errs[0]["source"]["pointer"] == "/line_items"
    assert errs[0]["meta"] == {"jurisdictions": ["US-ST-TX"]}
    assert "US-ST-TX (gross, taxable, tax)" in errs[0]["detail"]
    # Only the sale counts, once in its state's total (issue 37): gross 10000; tax 600 + 125.
    assert state_totals(admin_http) == {"US-ST-CA": ("10000", "725")}
    # A CA line with an id of its own is taxed as calculated: 1000 x 6% = 60, 1000 x 1.25% = 12.5 -> 13.
    assert tx.create(partial_credit(sale["id"], line("refund-1", 1000, "CA")))["tax_amount"] == "73"
    assert state_totals(admin_http) == {"US-ST-CA": ("9000", "652")}  # 10000 - 1000; 725 - 73
    # Without a parent, such a line is a credit of its own.
    assert tx.create(body(line("z", 1000, "TX"), type="credit", status="finalized"))["tax_amount"] == "63"
