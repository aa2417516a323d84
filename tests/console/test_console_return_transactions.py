"""The console's return page lists the transactions on the return (issue 37), each linking to its
own page, paged, with the export's second file; on SQLite and PostgreSQL. Texas 6.25% only (no
postal code), ROUND_HALF_UP."""

from __future__ import annotations

import csv
import io
import re

import httpx

from consolekit import ConsoleClient
from test_console import admin  # noqa: F401  (fixture)


def sale(http: httpx.Client, day: str, cents: int) -> str:
    r = http.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": f"2026-03-{day}T12:00:00Z",
        "line_items": [{"id": "1", "quantity": "1", "unit_price": str(cents), "customer": {"address": {"state": "TX"}},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def test_the_return_page_lists_its_transactions(admin: ConsoleClient, http: httpx.Client,  # noqa: F811
                                                admin_http: httpx.Client) -> None:
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX", "effective_from": "2020-01-01"})
    assert r.status_code == 201, r.text
    first = sale(http, "05", 10000)  # $100.00, tax $6.25
    second = sale(http, "06", 5000)  # $50.00, tax 312.5 -> 313 = $3.13
    r = admin.post("/returns", {"jurisdiction": "US-ST-TX", "period_start": "2026-03-01", "period_end": "2026-03-31"})
    assert r.status_code == 303, r.text
    fid = r.headers["location"].rsplit("/", 1)[1]
    page = admin.get(f"/returns/{fid}")
    assert page.status_code == 200
    rows = re.findall(r'<tr><td><a href="/console/transactions/(txn_\w+)">[^<]*</a></td><td>([^<]*)</td>'
                      r"<td>sale</td><td>finalized</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", page.text)
    assert rows == [(first, "2026-03-05", "$100.00", "$100.00", "$6.25"),
                    (second, "2026-03-06", "$50.00", "$50.00", "$3.13")], page.text
    assert "More transactions" not in page.text
    # Each link opens the transaction.
    assert admin.get(f"/transactions/{first}").status_code == 200
    # Paged by 100: past the first transaction, the second only.
    later = admin.get(f"/returns/{fid}", params={"after": first})
    assert second in later.text and f"/console/transactions/{first}" not in later.text
    # The transactions file, as the API exports it.
    export = admin.get(f"/returns/{fid}/export", params={"file": "transactions"})
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    assert export.headers["content-disposition"] == f'attachment; filename="{fid}-transactions.csv"'
    assert export.text == admin_http.get(f"/filings/{fid}/export", params={"file": "transactions"}).text
    assert [row["transaction_id"] for row in csv.DictReader(io.StringIO(export.text))] == [first, second]
