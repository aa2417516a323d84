"""Returns outside the US (issue 34): the EU One-Stop-Shop quarter in EUR and Canada's GST/HST and QST
in CAD, through REST and gRPC against a real server on SQLite and PostgreSQL.

The server imports the ECB reference rates below (``levy rates import``); every figure is worked by hand:

ECB, units per euro: 2026-02-16: USD 1.2, CAD 1.4; 2026-03-31: USD 1.25, CAD 1.5.

**OSS, Q1 2026 (EUR; a sale in another currency at the ECB rate of the quarter's last day, Directive
2006/112/EC Art. 369h: USD -> EUR = 1 / 1.25 = 0.8)**

* T1 2026-02-10, EUR: Paris SaaS 100.00 (FR 20 %: 2000) and a Paris e-book 100.00 (FR 5.5 %: 550).
* T2 2026-02-11, EUR: Dublin SaaS 200.00 (IE 23 %: 4600); T5 2026-03-05 credits 50.00 of it (1150).
* T3 2026-02-16, USD: Paris SaaS 125.00 (12500 cents, 2500 tax) -> 12500 x 0.8 = 10000, 2500 x 0.8 = 2000 EUR.
* T4 2026-02-20, EUR: Berlin B2B 100.00 with a valid DE VAT id: reverse charged, tax 0.
* T6 2026-04-02 (Q2): Paris 100.00, not on the Q1 return.

Rows: FR VAT 5.5 %: 10000 / 550. FR VAT 20 %: 10000 + 10000 = 20000 / 2000 + 2000 = 4000. IE VAT 23 %:
20000 - 5000 = 15000 / 4600 - 1150 = 3450 (sales 4600, credits 1150). Apart: DE reverse charge 10000 / 0.
Totals (taxed rows only): 45000 / 550 + 4000 + 3450 = 8000.

**Canada, Q1 2026 (CAD; a sale in another currency at the rate of its own day, ETA s. 159: 2026-02-16
USD -> CAD = 1.4 / 1.2 = 1.1666666667, ten places half up)**

* Toronto SaaS 100.00 CAD: HST 13 % 1300. Montreal SaaS 100.00 CAD: GST 5 % 500 and QST 9.975 % 997.5 -> 998.
* Calgary SaaS 80.00 USD on 2026-02-16 (GST 400 cents): 8000 x 1.1666666667 = 9333.33 -> 9333 CAD;
  400 x 1.1666666667 = 466.67 -> 467.
* Toronto B2B 100.00 CAD with a valid business number (RT program): reverse charged (tax 0).

CA return: GST 5 %: 10000 + 9333 = 19333 / 500 + 467 = 967; HST 13 % (Ontario): 10000 / 1300; apart:
Ontario reverse charge 10000 / 0. Totals 29333 / 2267. CA-PR-QC return: QST 9.975 %: 10000 / 998.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from levyserver import LevyServer, Tenant, own_server
from test_calculations import _levy
from test_filings import Filings
from test_international_api import (
    BERLIN,
    CALGARY,
    DUBLIN,
    EBOOK,
    LONDON,
    MONTREAL,
    PARIS,
    SAAS,
    TORONTO,
    VALID_DE_VAT,
)
from txn_api import Txn

ECB_CSV = """Date,USD,CAD,
2026-03-31,1.2500,1.5000,
2026-02-16,1.2000,1.4000,
"""
Q1 = {"period_start": "2026-01-01", "period_end": "2026-03-31"}
VALID_CA_BN = "123456782RT0001"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    directory: Path = tmp_path_factory.mktemp("i34r")
    with own_server(request.param, directory, {}) as srv:
        ecb = directory / "eurofxref-hist.csv"
        ecb.write_text(ECB_CSV)
        done = _levy(srv.database_url, "rates", "import", str(ecb), "--no-progress")
        assert done.returncode == 0 and "imported 4 exchange rates" in done.stdout, done.stdout + done.stderr
        yield srv


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


class Api:
    def __init__(self, transport: str, server: LevyServer, channel: grpc.Channel, tenant: Tenant) -> None:
        self.transport = transport
        self.tx = Txn(transport, server, channel, tenant.key)
        self.fil = Filings(transport, server, channel, tenant.admin_key)

    def sale(self, day: str, currency: str, *lines: dict[str, Any], **extra: Any) -> dict[str, Any]:
        body = {"type": "sale", "status": "finalized", "transaction_date": f"{day}T12:00:00Z", "currency": currency,
                "line_items": list(lines), **extra}
        if currency != "USD":
            body.setdefault("exchange_rate", "1.1")  # to the US filing currency (docs/transactions.md)
        status, out = self.tx.create_raw(body)
        assert status in (200, 201), out
        return out


@pytest.fixture(params=["rest", "grpc"])
def api(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant) -> Iterator[Api]:
    a = Api(request.param, server, channel, tenant)
    yield a
    a.tx.close()
    a.fil.close()


def register(admin_http: httpx.Client, *codes: str) -> None:
    for code in codes:
        r = admin_http.post("/organization/registrations", json={"jurisdiction": code, "effective_from": "2025-01-01"})
        assert r.status_code == 201, r.text


def item(address: dict[str, str], price: int, codes: list[str] | None = None, id: str = "1",
         **customer: Any) -> dict[str, Any]:
    return {"id": id, "quantity": "1", "unit_price": str(price), "product": {"tax_attributes": codes or SAAS},
            "customer": {"address": address, **customer}}


def figures(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(jurisdiction, name, tax type, rate, gross, taxable, tax) of each row."""
    return [(r["jurisdiction"], r["jurisdiction_name"], r.get("tax_type"), r.get("tax_rate"), r["gross_sales"],
             r["taxable_sales"], r["filing_tax_amount"]) for r in rows]


def ok(pair: tuple[int, Any], status: int = 201) -> Any:
    """The body of an answer with ``status`` (a create: 201 over REST, OK over gRPC)."""
    assert pair[0] in ((200, 201) if status == 201 else (status,)), pair
    return pair[1]


def test_an_oss_quarter_in_eur(api: Api, admin_http: httpx.Client) -> None:
    register(admin_http, "EU-OSS")
    t1 = api.sale("2026-02-10", "EUR", item(PARIS, 10000, id="saas"), item(PARIS, 10000, EBOOK, id="ebook"))
    t2 = api.sale("2026-02-11", "EUR", item(DUBLIN, 20000, id="ie"))
    t3 = api.sale("2026-02-16", "USD", item(PARIS, 12500))
    assert t3["tax_amount"] == "2500"
    t4 = api.sale("2026-02-20", "EUR", item(BERLIN, 10000, tax_ids=[{"type": "eu_vat", "value": VALID_DE_VAT}]))
    assert t4["tax_amount"] == "0"
    status, t5 = api.tx.create_raw({"type": "credit", "status": "finalized", "transaction_date": "2026-03-05T12:00:00Z",
                                    "currency": "EUR", "parent_transaction_id": t2["id"],
                                    "line_items": [item(DUBLIN, 5000, id="ie")]})
    assert status in (200, 201) and t5["tax_amount"] == "1150", t5
    api.sale("2026-04-02", "EUR", item(PARIS, 10000))

    ret = ok(api.fil.create({"jurisdiction": "EU-OSS", **Q1}))
    assert ret["currency"] == "EUR"
    assert figures(ret["jurisdictions"]) == [
        ("FR", "France", "vat", "0.055", "10000", "10000", "550"),
        ("FR", "France", "vat", "0.2", "20000", "20000", "4000"),
        ("IE", "Ireland", "vat", "0.23", "15000", "15000", "3450"),
        ("DE", "Germany", "reverse_charge", "0", "10000", "10000", "0"),
    ]
    ie = ret["jurisdictions"][2]
    assert (ie["sales_filing_tax"], ie["credits_filing_tax"]) == ("4600", "1150")
    totals = ret["totals"]
    assert (totals["gross_sales"], totals["taxable_sales"], totals["filing_tax_amount"]) == ("45000", "45000", "8000")
    assert ret["filing_tax_amount"] == "8000" and ret["transaction_count"] == 5
    (conv,) = ret["converted_transactions"]
    assert (conv["transaction_id"], conv["currency"], conv["exchange_rate"], conv["exchange_rate_date"],
            conv["original_gross_sales"], conv["gross_sales"]) == (t3["id"], "USD", "0.8", "2026-03-31", "12500",
                                                                   "10000")
    assert {t["id"] for t in (t1, t2, t3, t4, t5)} and ret["held_transactions"] == []

    csv_text = ok(api.fil.export(ret["id"]), 200)
    header, *lines = csv_text.splitlines()
    assert header.endswith(",currency,tax_type,tax_rate")
    assert lines[1].startswith("FR,France,country,20000,") and lines[1].endswith(",EUR,vat,0.2")
    assert lines[-1].startswith("TOTAL,Total EU-OSS,")

    if api.transport == "rest":  # each transaction's amounts on the return, in EUR (T3: 10000 / 2000)
        r = api.fil.http.get(f"/filings/{ret['id']}/transactions")
        assert r.status_code == 200, r.text
        amounts = {e["transaction_id"]: (e["amounts"]["gross_sales"], e["amounts"]["filing_tax_amount"])
                   for e in r.json()["data"]}
        assert amounts == {t1["id"]: ("20000", "2550"), t2["id"]: ("20000", "4600"), t3["id"]: ("10000", "2000"),
                           t4["id"]: ("0", "0"), t5["id"]: ("-5000", "-1150")}

    filed = ok(api.fil.update(ret["id"], {"status": "filed"}), 200)
    assert filed["status"] == "filed" and filed["filing_tax_amount"] == "8000"
    again = ok(api.fil.create({"jurisdiction": "EU-OSS", **Q1}))  # every transaction is on the filed return
    assert again["transaction_count"] == 0 and again["jurisdictions"] == []

    # The liability report: no US state; the OSS figures of the quarter apart, in EUR, filed ones included
    # (and the Q2 sale of 2026-04-02 outside the range).
    report = ok(api.fil.liability(**{"from": "2026-01-01", "to": "2026-03-31"}), 200)
    assert report["jurisdictions"] == [] and report["state_totals"] == [] and report["currency"] == "USD"
    (oss,) = report["international"]
    assert (oss["jurisdiction"], oss["currency"]) == ("EU-OSS", "EUR")
    assert figures(oss["jurisdictions"]) == figures(ret["jurisdictions"])
    assert oss["totals"]["filing_tax_amount"] == "8000" and len(oss["converted_transactions"]) == 1


def test_a_canadian_quarter_in_cad_with_hst_gst_and_qst(api: Api, admin_http: httpx.Client) -> None:
    register(admin_http, "CA", "CA-PR-QC")
    api.sale("2026-02-02", "CAD", item(TORONTO, 10000))
    mtl = api.sale("2026-02-03", "CAD", item(MONTREAL, 10000))
    assert mtl["tax_amount"] == "1498"
    yyc = api.sale("2026-02-16", "USD", item(CALGARY, 8000))
    assert yyc["tax_amount"] == "400"
    b2b = api.sale("2026-02-17", "CAD", item(TORONTO, 10000, tax_ids=[{"type": "ca_bn", "value": VALID_CA_BN}]))
    assert b2b["tax_amount"] == "0"

    ca = ok(api.fil.create({"jurisdiction": "CA", **Q1}))
    assert ca["currency"] == "CAD"
    assert figures(ca["jurisdictions"]) == [
        ("CA", "Canada", "gst", "0.05", "19333", "19333", "967"),
        ("CA", "Canada (HST, Ontario)", "hst", "0.13", "10000", "10000", "1300"),
        ("CA", "Canada (HST, Ontario)", "reverse_charge", "0", "10000", "10000", "0"),
    ]
    assert (ca["totals"]["gross_sales"], ca["totals"]["filing_tax_amount"]) == ("29333", "2267")
    (conv,) = ca["converted_transactions"]
    assert (conv["transaction_id"], conv["exchange_rate"], conv["exchange_rate_date"], conv["gross_sales"]) == (
        yyc["id"], "1.1666666667", "2026-02-16", "9333")

    qc = ok(api.fil.create({"jurisdiction": "CA-PR-QC", **Q1}))
    assert qc["currency"] == "CAD"
    assert figures(qc["jurisdictions"]) == [("CA-PR-QC", "Quebec", "qst", "0.09975", "10000", "10000", "998")]
    assert qc["filing_tax_amount"] == "998" and qc["transaction_count"] == 1


def test_bad_return_requests_are_422_with_pointers(api: Api) -> None:
    status, body = api.fil.create({"jurisdiction": "EU-OSS", "period_start": "2026-01-01", "period_end": "2026-02-28"})
    assert status == 422
    assert [e["source"]["pointer"] for e in body["errors"]] == ["/period_start"]
    assert "calendar quarter" in body["errors"][0]["detail"]
    status, body = api.fil.create({"jurisdiction": "XX-VAT", **Q1})
    assert status == 422 and [e["source"]["pointer"] for e in body["errors"]] == ["/jurisdiction"]
    assert "EU-OSS" in body["errors"][0]["detail"]


def test_a_sale_without_a_published_rate_is_held_off(api: Api, admin_http: httpx.Client) -> None:
    """A CAD return of a USD sale on a day with no reference rate within the look-back: held off, said why."""
    register(admin_http, "CA")
    held = api.sale("2026-01-05", "USD", item(CALGARY, 8000))
    ca = ok(api.fil.create({"jurisdiction": "CA", **Q1}))
    assert ca["jurisdictions"] == [] and ca["transaction_count"] == 0
    assert [(h["transaction_id"], h["reason"]) for h in ca["held_transactions"]] == [(held["id"], "no_exchange_rate")]


def test_thresholds_outside_the_us_in_their_own_currency(api: Api, admin_http: httpx.Client) -> None:
    """As of 2026-03-31, registered under EU-OSS only. Worked by hand (ECB rates above):

    * EU (EUR 10,000 = 1000000 cents, current or previous calendar year; B2C only): Paris 6,000.00 EUR
      (600000) + Dublin 5,000.00 USD on 2026-02-16 at 1 / 1.2 = 0.8333333333 -> 416666.67 -> 416667;
      the reverse-charged Berlin sale does not count; a USD sale of 2026-01-05 has no published rate within
      the look-back: not counted, listed. 1016667 > 1000000: exceeded, share 1.0167; registered.
    * Canada (CAD 30,000 = 3000000, the 12 months 2025-04-01..2026-03-31): Toronto 250.00 CAD (25000) +
      Calgary 100.00 USD at 1.1666666667 -> 11667 = 36667; share 0.0122; not exceeded.
    * Australia (AUD 75,000): no sale, 0. UK: no threshold; one sale of 10.00 GBP: registration needed.
    """
    register(admin_http, "EU-OSS")
    api.sale("2026-02-10", "EUR", item(PARIS, 600000))
    api.sale("2026-02-16", "USD", item(DUBLIN, 500000))
    api.sale("2026-02-20", "EUR", item(BERLIN, 2000000, tax_ids=[{"type": "eu_vat", "value": VALID_DE_VAT}]))
    early = api.sale("2026-01-05", "USD", item(PARIS, 100000))
    api.sale("2026-02-02", "CAD", item(TORONTO, 25000))
    api.sale("2026-02-16", "USD", item(CALGARY, 10000))
    api.sale("2026-03-10", "GBP", item(LONDON, 1000))

    report = ok(api.fil.nexus(as_of="2026-03-31"), 200)
    assert report["states"] and all(len(s["state"]) == 2 for s in report["states"])  # the US states as before
    got = {n["jurisdiction"]: n for n in report["international"]}
    assert list(got) == ["EU-OSS", "CA", "AU", "GB"]

    def summary(n: dict[str, Any]) -> tuple[Any, ...]:
        return (n["currency"], n["sales_amount"], n["transaction_count"], n.get("sales_threshold"),
                n.get("threshold_share"), n["period_start"], n["period_end"], n["exceeded"], n["is_registered"],
                n["needs_registration"])

    assert summary(got["EU-OSS"]) == ("EUR", "1016667", 2, "1000000", "1.0167", "2026-01-01", "2026-03-31",
                                      True, True, False)
    assert [(h["transaction_id"], h["reason"]) for h in got["EU-OSS"]["held_transactions"]] == [
        (early["id"], "no_exchange_rate")]
    assert summary(got["CA"]) == ("CAD", "36667", 2, "3000000", "0.0122", "2025-04-01", "2026-03-31",
                                  False, False, False)
    assert summary(got["AU"])[:5] == ("AUD", "0", 0, "7500000", "0.0000")
    assert summary(got["GB"]) == ("GBP", "1000", 1, None, None, "2025-04-01", "2026-03-31", True, False, True)
    assert "59c" in got["EU-OSS"]["threshold_source"] and "211.22" in got["CA"]["threshold_source"]


def test_e_book_rates_added_for_five_member_states(api: Api, admin_http: httpx.Client) -> None:
    """E-books (DIGITAL.EBOOKS) at 100.00 each under EU-OSS: HR 5 % 500, MT 5 % 500, PT 6 % 600, LU 3 % 300,
    SI 5 % 500 (src/levy/data/tax/international/eu.json, sources per row); 2400 in all."""
    register(admin_http, "EU-OSS")
    places = {"hr": {"city": "Zagreb", "country": "HR", "postal_code": "10000"},
              "mt": {"city": "Valletta", "country": "MT", "postal_code": "VLT 1117"},
              "pt": {"city": "Lisboa", "country": "PT", "postal_code": "1100-148"},
              "lu": {"city": "Luxembourg", "country": "LU", "postal_code": "L-1111"},
              "si": {"city": "Ljubljana", "country": "SI", "postal_code": "1000"}}
    out = api.sale("2026-06-01", "EUR", *(item(a, 10000, EBOOK, id=k) for k, a in places.items()))
    got = {li["id"]: (li["taxes"][0]["tax_rate"], li["taxes"][0]["tax_amount"]) for li in out["line_items"]}
    assert {k: (str(float(r)), t) for k, (r, t) in got.items()} == {
        "hr": ("0.05", "500"), "mt": ("0.05", "500"), "pt": ("0.06", "600"), "lu": ("0.03", "300"),
        "si": ("0.05", "500")}
    assert out["tax_amount"] == "2400"


def test_the_cli_prints_a_return_in_its_own_currency(server: LevyServer, tenant: Tenant, admin_http: httpx.Client,
                                                     http: httpx.Client) -> None:
    import json

    register(admin_http, "CA")
    r = http.post("/transactions", json={"type": "sale", "status": "finalized", "currency": "CAD", "exchange_rate": "0.75",
                                         "transaction_date": "2026-02-02T12:00:00Z",
                                         "line_items": [item(CALGARY, 10000)]})
    assert r.status_code == 200 and r.json()["tax_amount"] == "500", r.text  # GST 5% of 100.00
    org = ["--organization", tenant.organization_id]
    done = _levy(server.database_url, "filings", "prepare", "--jurisdiction", "CA", "--period-start", "2026-01-01",
                 "--period-end", "2026-03-31", *org)
    assert done.returncode == 0, done.stderr
    prepared = json.loads(done.stdout)
    assert (prepared["currency"], prepared["filing_tax_amount"]) == ("CAD", "500")
    done = _levy(server.database_url, "filings", "show", prepared["id"], *org)
    assert done.returncode == 0 and json.loads(done.stdout)["currency"] == "CAD", done.stdout + done.stderr
