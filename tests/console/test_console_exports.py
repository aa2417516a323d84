"""The console's CSV exports and lists for a finance user (issue 36), against a real server on
SQLite and PostgreSQL: transactions (the list's filters applied), customers and the liability
report, streamed, with a header row, money in major units beside its currency, and cells that a
spreadsheet would run as a formula prefixed with '; the transactions list's columns and count,
its links to customers, a customer's link to its transactions, nexus's measurement period,
"approaching" and link to the state's sales.

Texas charges its state rate 6.25 % when no postal code is sent (state tax only, ROUND_HALF_UP).
"""

from __future__ import annotations

import csv
import io
import re
import uuid

import httpx

from consolekit import ConsoleClient
from test_console import admin, member, new_customer  # noqa: F401  (fixtures)


def register(admin_http: httpx.Client, state: str) -> None:
    r = admin_http.post("/organization/registrations", json={"jurisdiction": f"US-ST-{state}",
                                                             "effective_from": "2020-01-01"})
    assert r.status_code == 201, r.text


def sale(http: httpx.Client, ref: str, day: str, cents: int, *, state: str = "TX", status: str = "finalized",
         currency: str = "USD", **customer: object) -> str:
    body: dict[str, object] = {
        "type": "sale", "status": status, "transaction_date": f"2026-03-{day}T12:00:00Z", "reference_id": ref,
        "currency": currency,
        "line_items": [{"id": "1", "quantity": "1", "unit_price": str(cents),
                        "customer": {"address": {"state": state}, **customer},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]}
    if currency == "JPY":
        body["exchange_rate"] = "0.0066"
    r = http.post("/transactions", json=body)
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def rows(resp: httpx.Response) -> list[dict[str, str]]:
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "text/csv; charset=utf-8"
    # Streamed: no Content-Length, the body comes in chunks.
    assert "content-length" not in resp.headers and resp.headers.get("transfer-encoding") == "chunked"
    assert resp.text.endswith("\r\n")
    return list(csv.DictReader(io.StringIO(resp.text)))


def test_the_transactions_export_is_what_the_filters_find(admin: ConsoleClient, member: ConsoleClient,  # noqa: F811
                                                         http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    tag = uuid.uuid4().hex[:8]
    cust = new_customer(admin_http, name='=HYPERLINK("http://evil.example","x")', email=f"ap-{tag}@acme.example")
    # $100.00 in TX: 6.25 % = $6.25, total $106.25; its reference starts with '=' and its customer's
    # name is a formula: both written with a leading '.
    tx = sale(http, f"=cmd-{tag}", "15", 10000, preset={"id": cust["source_id"]})
    # A CA draft of $50.00, not registered in California: tax $0.00 (its tax rows still name CA).
    ca = sale(http, f"exp-{tag}-2", "16", 5000, state="CA", status="draft")
    # ¥10,000 in TX: 6.25 % = ¥625 (JPY has no minor unit), total ¥10,625.
    jp = sale(http, f"exp-{tag}-3", "14", 10000, currency="JPY")
    sale(http, "other-" + uuid.uuid4().hex[:8], "15", 700)  # not matched by the reference
    got = rows(admin.get("/transactions/export.csv", params={"reference": tag}))
    assert list(got[0]) == ["transaction_id", "transaction_date", "reference_id", "type", "status", "customer_id",
                            "customer", "ship_to_state", "amount", "tax", "total", "currency",
                            "parent_transaction_id"]
    # Newest first by date, as the list.
    assert [(r["transaction_id"], r["transaction_date"], r["reference_id"], r["status"], r["ship_to_state"],
             r["amount"], r["tax"], r["total"], r["currency"]) for r in got] == [
        (ca, "2026-03-16", f"exp-{tag}-2", "draft", "CA", "50.00", "0.00", "50.00", "USD"),
        (tx, "2026-03-15", f"'=cmd-{tag}", "finalized", "TX", "100.00", "6.25", "106.25", "USD"),
        (jp, "2026-03-14", f"exp-{tag}-3", "finalized", "TX", "10000", "625", "10625", "JPY"),
    ]
    assert (got[1]["customer_id"], got[1]["customer"]) == (cust["id"], '\'=HYPERLINK("http://evil.example","x")')
    # The filters apply: the drafts only; the customer by email.
    assert [r["transaction_id"] for r in rows(admin.get("/transactions/export.csv",
                                                        params={"reference": tag, "status": "draft"}))] == [ca]
    assert [r["transaction_id"] for r in rows(member.get("/transactions/export.csv",
                                                         params={"customer": f"ap-{tag}"}))] == [tx]
    # The list's link carries its filters; a bad filter is the list's 422, not a file.
    page = admin.get("/transactions", params={"reference": tag, "status": "draft"})
    assert f'href="/console/transactions/export.csv?status=draft&amp;reference={tag}"' in page.text
    bad = admin.get("/transactions/export.csv", params={"state": "Texas"})
    assert bad.status_code == 422 and "two-letter" in bad.text


def test_the_transactions_list_shows_a_finance_users_columns_and_the_count(
        admin: ConsoleClient, http: httpx.Client, admin_http: httpx.Client) -> None:  # noqa: F811
    register(admin_http, "TX")
    tag = uuid.uuid4().hex[:8]
    cust = new_customer(admin_http, name=f"Acme {tag}")
    tx = sale(http, f"col-{tag}-1", "15", 10000, preset={"id": cust["source_id"]})
    sale(http, f"col-{tag}-2", "16", 5000, state="CA")
    page = admin.get("/transactions", params={"reference": tag})
    assert page.status_code == 200
    assert '<p id="count" role="status">2 transactions match; this page shows 2.</p>' in page.text
    for head in ("Date", "Reference", "Customer", "State", "Type", "Status", "Amount", "Tax"):
        assert f">{head}</th>" in page.text
    row = re.search(rf"<tr><td class=\"nowrap\">2026-03-15</td>.*?</tr>", page.text, re.S).group(0)
    # $100.00 and its 6.25 % = $6.25; the reference links the transaction, the customer its page.
    assert f'<a href="/console/transactions/{tx}">col-{tag}-1</a>' in row
    assert f'<a href="/console/customers/{cust["id"]}">Acme {tag}</a>' in row
    assert '<td class="opt">TX</td>' in row and "$100.00" in row and "$6.25" in row
    one = admin.get("/transactions", params={"reference": f"{tag}-1"})
    assert '<p id="count" role="status">1 transaction matches; this page shows 1.</p>' in one.text
    # The customer's page links its transactions, which the list finds by its id.
    detail = admin.get(f"/customers/{cust['id']}")
    assert f'<a id="customer-transactions" href="/console/transactions?customer={cust["id"]}">' in detail.text
    assert re.findall(r'<a href="/console/transactions/(txn_\w+)">',
                      admin.get("/transactions", params={"customer": cust["id"]}).text) == [tx]


def test_the_customers_export_guards_formulas(admin: ConsoleClient, admin_http: httpx.Client) -> None:  # noqa: F811
    tag = uuid.uuid4().hex[:8]
    first = new_customer(admin_http, name=f"-1+2 {tag}", source_id=f"@src-{tag}")
    second = new_customer(admin_http, name=f"Plain {tag}")
    new_customer(admin_http, name="someone else")
    got = rows(admin.get("/customers/export.csv", params={"q": tag}))
    assert list(got[0]) == ["customer_id", "source", "source_account_id", "source_id", "name", "email",
                            "merged_into_customer_id", "created_at", "deleted_at"]
    assert [(r["customer_id"], r["name"], r["email"], r["source_id"]) for r in got] == [
        (second["id"], f"Plain {tag}", "", second["source_id"]),  # newest first
        (first["id"], f"'-1+2 {tag}", "", f"'@src-{tag}"),
    ]
    assert admin.get("/customers", params={"q": tag}).text.count(f"/console/customers/export.csv?q={tag}") == 1
    # Deleted customers export apart.
    assert admin_http.delete(f"/customers/{second['id']}").status_code in (200, 204)
    gone = rows(admin.get("/customers/export.csv", params={"q": tag, "deleted": "1"}))
    assert [r["customer_id"] for r in gone] == [second["id"]] and gone[0]["deleted_at"]


def test_the_liability_export_has_each_jurisdiction_and_state_total(
        admin: ConsoleClient, member: ConsoleClient, http: httpx.Client,  # noqa: F811
        admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    sale(http, "liab-" + uuid.uuid4().hex[:8], "05", 10000)  # $100.00, 6.25 % = $6.25
    sale(http, "liab-" + uuid.uuid4().hex[:8], "06", 5000)  # $50.00, 312.5 -> 313 = $3.13
    got = rows(admin.get("/returns/liability/export.csv", params={"from": "2026-03-01", "to": "2026-03-31"}))
    assert [(r["row"], r["jurisdiction"], r["gross_sales"], r["taxable_sales"], r["filing_tax_amount"], r["currency"],
             r["from"], r["to"]) for r in got] == [
        # Gross 100.00 + 50.00 = 150.00; tax 6.25 + 3.13 = 9.38.
        ("jurisdiction", "US-ST-TX", "150.00", "150.00", "9.38", "USD", "2026-03-01", "2026-03-31"),
        ("state_total", "US-ST-TX", "150.00", "150.00", "9.38", "USD", "2026-03-01", "2026-03-31"),
    ]
    page = admin.get("/returns/liability", params={"from": "2026-03-01", "to": "2026-03-31"})
    assert 'href="/console/returns/liability/export.csv?from=2026-03-01&amp;to=2026-03-31"' in page.text
    assert member.get("/returns/liability/export.csv").status_code == 403  # the API's admin-only report
    assert admin.get("/returns/liability/export.csv", params={"from": "2026-13-01"}).status_code == 422


def test_nexus_shows_the_period_approaching_and_links_the_sales(admin: ConsoleClient,  # noqa: F811
                                                                http: httpx.Client) -> None:
    # California: $500,000 of sales over the previous or current calendar year (docs/filing.md).
    # $450,000.00 on March 5 is 450,000 / 500,000 = 90 %, at least 80 %: approaching.
    sale(http, "nx-" + uuid.uuid4().hex[:8], "05", 45_000_000, state="CA")
    page = admin.get("/nexus", params={"as_of": "2026-03-31"})
    row = re.search(r'<tr id="nexus-CA".*?</tr>', page.text, re.S).group(0)
    assert '<td class="standing"><strong>approaching</strong> (90 %)</td>' in row
    assert re.search(r'<td class="period">2026-01-01 to 2026-03-31<br><small>[^<]+</small></td>', row), row
    assert ('<a href="/console/transactions?state=CA&amp;date_from=2026-01-01&amp;date_to=2026-03-31"'
            in row)
    # Texas, with no sales: below.
    tx = re.search(r'<tr id="nexus-TX".*?</tr>', page.text, re.S).group(0)
    assert '<td class="standing">below</td>' in tx
