"""Credits by amount (issue 37): ``flat_amount`` on a credit naming its parent, spread over what
remains of the parent's lines; REST and gRPC, SQLite and PostgreSQL.

Figures by hand (docs/transactions.md, "Credits by amount"): TX without postal code = Texas
6.25% only, CA = California 6% + statewide local 1.25%. A line's remaining total is its
remaining net amount plus its remaining tax; the flat amount is split over the lines in
proportion to those totals (largest remainder), then each share into tax = share x remaining
tax / remaining total (ROUND_HALF_UP) and amount = share - tax."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from txn_api import D, Txn, body, error_of, line, pointers, tx  # noqa: F401  (fixture)


def sale(tx: Txn, *lines: dict[str, Any]) -> dict[str, Any]:
    return tx.create(body(*lines, status="finalized"))


def flat(sale_id: str, amount: str, **extra: Any) -> dict[str, Any]:
    return {"type": "credit", "status": "finalized", "transaction_date": D, "parent_transaction_id": sale_id,
            "flat_amount": amount, **extra}


def lines_of(credit: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """Per line id: (quantity, unit_price, tax_amount) as the credit shows them."""
    return {li["id"]: (li["quantity"], li["unit_price"], li["tax_amount"]) for li in credit["line_items"]}


def total_of(credit: dict[str, Any]) -> int:
    return sum(int(li["unit_price"]) for li in credit["line_items"]) + int(credit["tax_amount"])


def test_flat_credit_splits_evenly(tx: Txn) -> None:
    # Two TX lines of 10000, each taxed 625: remaining totals 10625 and 10625.
    s = sale(tx, line("a", 10000), line("b", 10000))
    assert s["tax_amount"] == "1250"
    credit = tx.create(flat(s["id"], "4250"))
    # 4250 x 10625 / 21250 = 2125 each; tax 2125 x 625 / 10625 = 125, amount 2125 - 125 = 2000.
    assert lines_of(credit) == {"a": ("1", "2000", "125"), "b": ("1", "2000", "125")}
    assert (credit["type"], credit["tax_amount"], credit["parent_transaction_id"]) == ("credit", "250", s["id"])
    assert credit.get("flat_amount") is None  # an input: the credit is its lines
    assert tx.get(credit["id"])["line_items"] == credit["line_items"]


def test_flat_credit_uneven_largest_remainder_then_to_the_last_cent(tx: Txn) -> None:
    # TX lines 10000, 5000, 3000 taxed 625, 312.5 -> 313, 187.5 -> 188: totals 10625, 5313, 3188 = 19126.
    s = sale(tx, line("a", 10000), line("b", 5000), line("c", 3000))
    assert s["tax_amount"] == "1126"
    first = tx.create(flat(s["id"], "1000"))
    # Quotas 1000 x 10625/19126 = 555.53, x 5313/19126 = 277.79, x 3188/19126 = 166.68: floors 555 + 277 + 166
    # = 998; the 2 left go to the largest remainders, b (.79) and c (.68): 555, 278, 167.
    # Tax a: 555 x 625/10625 = 32.65 -> 33, amount 522; b: 278 x 313/5313 = 16.38 -> 16, amount 262;
    # c: 167 x 188/3188 = 9.85 -> 10, amount 157. 941 + 59 = 1000.
    assert lines_of(first) == {"a": ("1", "522", "33"), "b": ("1", "262", "16"), "c": ("1", "157", "10")}
    assert first["tax_amount"] == "59" and total_of(first) == 1000
    # What remains: a 9478 + 592 = 10070, b 4738 + 297 = 5035, c 2843 + 178 = 3021; 18126 in all.
    errs = error_of(tx.create_raw(flat(s["id"], "18127")))
    assert pointers(errs) == {"/flat_amount"} and errs[0]["meta"]["remaining_total"] == 18126
    rest = tx.create(flat(s["id"], "18126"))
    assert lines_of(rest) == {"a": ("1", "9478", "592"), "b": ("1", "4738", "297"), "c": ("1", "2843", "178")}
    # The sale is refunded to the minor unit: 522 + 9478 = 10000, 33 + 592 = 625, and so on.
    assert int(first["tax_amount"]) + int(rest["tax_amount"]) == 1126
    # Nothing is left: one more cent is refused.
    errs = error_of(tx.create_raw(flat(s["id"], "1")))
    assert pointers(errs) == {"/flat_amount"} and errs[0]["meta"]["remaining_total"] == 0


def test_flat_credit_over_the_remainder_is_refused(tx: Txn) -> None:
    s = sale(tx, line("a", 10000))  # 10000 + 625 = 10625
    errs = error_of(tx.create_raw(flat(s["id"], "10626")))
    assert len(errs) == 1 and errs[0]["source"]["pointer"] == "/flat_amount", errs
    assert errs[0]["code"] == "validation_error" and "10625" in errs[0]["detail"]
    assert errs[0]["meta"] == {"remaining_total": 10625, "remaining_amount": 10000, "remaining_tax": 625}
    if tx.transport == "grpc":
        assert tx.create_raw(flat(s["id"], "10626"))[1]["grpc_code"].name == "INVALID_ARGUMENT"
    # After a line credit of 4000 (tax 4000 x 625/10000 = 250), 10625 - 4250 = 6375 remain.
    tx.create(body(line("a", 4000), type="credit", status="finalized", parent_transaction_id=s["id"]))
    assert error_of(tx.create_raw(flat(s["id"], "6376")))[0]["meta"]["remaining_total"] == 6375
    whole = tx.create(flat(s["id"], "6375"))
    assert lines_of(whole) == {"a": ("1", "6000", "375")}


def test_flat_credit_rows_of_a_line(tx: Txn) -> None:
    # CA 10000: state 600 + local 125 = 725, total 10725. Flat 1000: tax 1000 x 725/10725 = 67.6 -> 68,
    # amount 932. Over the rows' remaining tax 600 : 125: 56.28 and 11.72 -> floors 56 + 11 = 67, the 1 left
    # to the larger remainder (local .72): 56 and 12. Each row's base: 10000 x 932/10000 = 932.
    s = sale(tx, line("a", 10000, "CA"))
    credit = tx.create(flat(s["id"], "1000"))
    (li,) = credit["line_items"]
    assert (li["unit_price"], li["tax_amount"]) == ("932", "68")
    assert sorted((t["tax_amount"], t["taxable_base"]) for t in li["taxes"]) == [("12", "932"), ("56", "932")]


def test_flat_credit_refusals(tx: Txn) -> None:
    s = sale(tx, line("a", 10000))
    cases = [
        (flat(s["id"], "0"), {"/flat_amount"}),
        (flat(s["id"], "-5"), {"/flat_amount"}),
        (flat(s["id"], "12.5"), {"/flat_amount"}),
        (flat(s["id"], "100", line_items=[line("a", 100)]), {"/line_items"}),
        (flat(s["id"], "100", tax_amount="6"), {"/tax_amount"}),
        ({**flat(s["id"], "100"), "parent_transaction_id": None}, {"/flat_amount"}),
        (body(line("a", 100), status="finalized", flat_amount="100"), {"/flat_amount"}),
    ]
    for b, expected in cases:
        b = {k: v for k, v in b.items() if v is not None}
        errs = error_of(tx.create_raw(b))
        assert pointers(errs) == expected, (b, errs)
    credit = tx.create(flat(s["id"], "100"))
    assert pointers(error_of(tx.update_raw(credit["id"], {"flat_amount": "50"}))) == {"/flat_amount"}


def test_eight_concurrent_flat_credits_never_over_refund(tx: Txn) -> None:
    s = sale(tx, line("a", 10000))  # 10625 to refund in all
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: tx.create_raw(flat(s["id"], "2000")), range(8)))
    # 5 x 2000 = 10000 fit in 10625; a sixth would make 12000.
    done = [out for code, out in results if code == 200]
    refused = [out for code, out in results if code != 200]
    assert len(done) == 5, results
    assert all(total_of(c) == 2000 for c in done)
    assert len(refused) == 3 and all(
        out["errors"][0]["source"]["pointer"] == "/flat_amount" and out["errors"][0]["meta"]["remaining_total"] == 625
        for out in refused
    ), refused
    # What is left (625) is refunded exactly, and nothing more.
    last = tx.create(flat(s["id"], "625"))
    credits = [tx.get(c["id"]) for c in done] + [last]
    assert sum(int(c["line_items"][0]["unit_price"]) for c in credits) == 10000
    assert sum(int(c["tax_amount"]) for c in credits) == 625
    assert error_of(tx.create_raw(flat(s["id"], "1")))[0]["meta"]["remaining_total"] == 0
