"""Returns you can open (issue 37): ``GET /filings/{id}/transactions`` (gRPC
``FilingService.ListFilingTransactions``), paged, each transaction with its amounts on the
return, and the export's second file (``?file=transactions``); REST and gRPC, SQLite and
PostgreSQL.

Figures by hand: a TX address without postal code is Texas state 6.25% only (ROUND_HALF_UP)."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx

from levy.v1 import filings_pb2 as pb
from test_filings import JAN, Filings, fil, period, txn  # noqa: F401  (fixture)
from txn_api import line, register


def listing(fil: Filings, filing_id: str, **params: Any) -> tuple[int, Any]:  # noqa: F811
    if fil.transport == "rest":
        return fil._rest(fil.http.get(f"/filings/{filing_id}/transactions", params=params))
    return fil._grpc(fil.stub.ListFilingTransactions, pb.ListFilingTransactionsRequest(filing_id=filing_id, **params))


def export_transactions(fil: Filings, filing_id: str, file: str = "transactions") -> tuple[int, Any]:  # noqa: F811
    if fil.transport == "rest":
        return fil._rest(fil.http.get(f"/filings/{filing_id}/export", params={"file": file}))
    return fil._grpc(fil.stub.ExportFiling, pb.ExportFilingRequest(filing_id=filing_id, file=file))


def amounts(entry: dict[str, Any], *names: str) -> tuple[str, ...]:
    return tuple(entry["amounts"][n] for n in names)


FIGURES = ("gross_sales", "taxable_sales", "tax_calculated", "filing_tax_amount")


def test_a_returns_transactions_listed_and_paged(fil: Filings, http: httpx.Client,  # noqa: F811
                                                 admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    s1 = txn(http, "2026-01-05", line("a", 10000, "TX"))  # 625
    s2 = txn(http, "2026-01-10", line("a", 5000, "TX"))  # 312.5 -> 313
    s3 = txn(http, "2026-01-20", line("a", 3000, "TX"), reference_id="inv-3")  # 187.5 -> 188
    # A credit by amount of s1: 2125 = tax 2125 x 625 / 10625 = 125 + amount 2000.
    r = http.post("/transactions", json={"type": "credit", "status": "finalized", "parent_transaction_id": s1,
                                         "transaction_date": "2026-01-25T12:00:00Z", "flat_amount": "2125"})
    assert r.status_code == 200, r.text
    c1 = r.json()["id"]
    txn(http, "2026-01-12", line("a", 7000, "CA"))  # another state: not on the TX return
    txn(http, "2026-01-13", line("a", 7000, "TX"), status="draft")  # a draft: on no return
    filing = fil.ok(fil.create(period(JAN)), 201)
    # 625 + 313 + 188 - 125 = 1001; gross 10000 + 5000 + 3000 - 2000 = 16000.
    assert (filing["transaction_count"], filing["filing_tax_amount"]) == (4, "1001")

    first = fil.ok(listing(fil, filing["id"], limit=3))
    assert [e["transaction_id"] for e in first["data"]] == [s1, s2, s3] and first["has_more"] is True
    rest = fil.ok(listing(fil, filing["id"], limit=3, starting_after=s3))
    assert [e["transaction_id"] for e in rest["data"]] == [c1] and rest["has_more"] is False
    entries = {e["transaction_id"]: e for e in first["data"] + rest["data"]}
    assert amounts(entries[s1], *FIGURES) == ("10000", "10000", "625", "625")
    assert amounts(entries[s2], *FIGURES) == ("5000", "5000", "313", "313")
    assert amounts(entries[s3], *FIGURES) == ("3000", "3000", "188", "188")
    assert amounts(entries[c1], *FIGURES) == ("-2000", "-2000", "-125", "-125")
    assert amounts(entries[c1], "sales_filing_tax", "credits_filing_tax") == ("0", "125")
    e3 = entries[s3]
    assert (e3["type"], e3["status"], e3["transaction_date"], e3["currency"], e3["reference_id"]) == (
        "sale", "finalized", "2026-01-20", "USD", "inv-3")
    assert entries[c1]["type"] == "credit" and entries[s3]["amounts"]["jurisdiction"] == "US-ST-TX"
    # The entries add up to the return: 16000 gross, 1001 tax.
    assert sum(int(e["amounts"]["gross_sales"]) for e in entries.values()) == 16000 == int(
        filing["totals"]["gross_sales"])
    assert sum(int(e["amounts"]["filing_tax_amount"]) for e in entries.values()) == 1001

    # The export's second file: the same rows.
    text = fil.ok(export_transactions(fil, filing["id"]))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["transaction_id"] for r in rows] == [s1, s2, s3, c1]
    assert (rows[3]["type"], rows[3]["gross_sales"], rows[3]["filing_tax_amount"]) == ("credit", "-2000", "-125")
    assert rows[2]["reference_id"] == "inv-3" and rows[0]["reference_id"] == ""
    assert fil.ok(export_transactions(fil, filing["id"], "return")).startswith("jurisdiction_code,")

    # Filed: the same transactions, now 'filed'.
    fil.ok(fil.update(filing["id"], {"status": "filed"}))
    after = fil.ok(listing(fil, filing["id"]))
    assert [e["transaction_id"] for e in after["data"]] == [s1, s2, s3, c1] and after["has_more"] is False
    assert {e["status"] for e in after["data"]} == {"filed"}


def test_listing_refusals(fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:  # noqa: F811
    register(admin_http, "TX")
    txn(http, "2026-01-05", line("a", 10000, "TX"))
    filing = fil.ok(fil.create(period(JAN)), 201)
    code, out = listing(fil, filing["id"], starting_after="txn_00000000000000000000000000")
    assert code == 422 and out["errors"][0]["source"]["parameter"] == "starting_after", out
    code, out = listing(fil, filing["id"], limit=0)
    assert code == 422, out
    code, out = export_transactions(fil, filing["id"], "everything")
    assert code == 422 and out["errors"][0]["source"]["parameter"] == "file", out
    code, out = listing(fil, "fil_00000000000000000000000000")
    assert code == 404, out
    # An empty return lists nothing.
    empty = fil.ok(fil.create(period(("2025-01-01", "2025-01-31"))), 201)
    assert fil.ok(listing(fil, empty["id"])) == {"data": [], "has_more": False}
