"""Issue 37, part A, through REST and gRPC against a real server and database (SQLite and
PostgreSQL): a sale counted once in its state's total; currencies converted to the filing
currency; marketplace sales off the seller's return but counted toward nexus where the
state's rule counts them. Every expected figure is worked out by hand in the comments.

Rates used: an address with postal code 78701 is Austin, TX: state 6.25 %, city of Austin 1 %,
Austin MTA 1 % (the shared rate data); a TX address without postal code is the state 6.25 % only.
"""

from __future__ import annotations

import asyncio
import csv
import io
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from levyserver import LevyServer, fresh_database, start_server
from test_calculations import _levy
from test_filing_transactions import listing
from test_filings import JAN, Filings, fil, period, row, txn  # noqa: F401  (fil is a fixture)
from rates_servers import _import_records
from sourcing_cases import RECORDS, SOURCE
from txn_api import Txn, error_of, line, register

AUSTIN = {"line1": "100 Congress Ave", "city": "Austin", "state": "TX", "postal_code": "78701", "country": "US"}


#: A synthetic file in the ECB's euro reference-rate layout (units per euro; a trailing comma
#: and N/A as published). Friday 2026-01-09: 1 EUR = 1.2 USD = 160 JPY; nothing on the weekend.
ECB_CSV = """Date,USD,JPY,BGN,
2026-01-09,1.2000,160.00,N/A,
2026-01-08,1.1900,159.00,N/A,
"""


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    """A server on a database of its own with Austin's local rates imported (they are server-wide)
    and the ECB reference rates above imported the way a user does it (``levy rates import``)."""
    with fresh_database(request.param, tmp_path_factory.mktemp("i37a-db")) as url:
        srv = start_server(url, tmp_path_factory.mktemp("i37a-logs"), extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.3"})
        try:
            asyncio.run(_import_records(url, SOURCE, RECORDS))  # 78701: Austin city 1 %, Austin MTA 1 %
            ecb = tmp_path_factory.mktemp("i37a-ecb") / "eurofxref-hist.csv"
            ecb.write_text(ECB_CSV)
            done = _levy(url, "rates", "import", str(ecb), "--no-progress")
            assert done.returncode == 0 and "imported 4 exchange rates" in done.stdout, done.stdout + done.stderr
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


def _wait_for_austin(http: httpx.Client) -> None:
    """Until the server has picked the import up (Austin's line has three rows)."""
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r = http.post("/calculations", json={"transaction_date": "2026-01-05T12:00:00Z",
                                             "line_items": [austin_line("1", 10000)]})
        if r.status_code == 200 and len(r.json()["line_items"][0]["taxes"]) == 3:
            return
        time.sleep(0.2)
    raise AssertionError("the server did not pick the Austin rates up")


def austin_line(id: str, price: int, **extra: Any) -> dict[str, Any]:
    return line(id, price, None, customer={"address": AUSTIN}, **extra)


# ------------------------------------------------------------------ a sale counted once


def test_a_sale_with_three_jurisdictions_counts_once_in_its_state_total(
        fil: Filings, http: httpx.Client, admin_http: httpx.Client) -> None:  # noqa: F811
    register(admin_http, "TX")
    _wait_for_austin(http)
    txn(http, "2026-01-05", austin_line("1", 10000))  # 625 + 100 + 100 = 825
    txn(http, "2026-01-06", line("1", 4000, "TX"))  # state only: 4000 x 6.25 % = 250
    out = fil.ok(fil.create(period(JAN)), 201)
    codes = [j["jurisdiction"] for j in out["jurisdictions"]]
    assert codes == ["US-ST-TX", "US-CI-TX-AUSTIN", "US-SP-TX-AUSTIN_MTA"]
    # Each jurisdiction keeps its own figures: the state taxes both sales, Austin and the MTA the first.
    assert (row(out, "US-ST-TX")["gross_sales"], row(out, "US-ST-TX")["filing_tax_amount"]) == ("14000", "875")
    assert (row(out, "US-CI-TX-AUSTIN")["gross_sales"], row(out, "US-CI-TX-AUSTIN")["filing_tax_amount"]) == (
        "10000", "100")
    assert row(out, "US-SP-TX-AUSTIN_MTA")["taxable_sales"] == "10000"
    # The total counts each sale once: 10000 + 4000 = 14000 (not 14000 + 10000 + 10000 = 34000);
    # its tax sums the rows: 875 + 100 + 100 = 1075.
    t = out["totals"]
    assert (t["gross_sales"], t["taxable_sales"], t["tax_calculated"], t["filing_tax_amount"]) == (
        "14000", "14000", "1075", "1075")
    assert out["filing_tax_amount"] == "1075"

    rows = list(csv.DictReader(io.StringIO(fil.ok(fil.export(out["id"])))))
    assert [r["jurisdiction_code"] for r in rows] == [*codes, "TOTAL"]
    assert (rows[-1]["gross_sales"], rows[-1]["taxable_sales"], rows[-1]["filing_tax_amount"]) == (
        "14000", "14000", "1075")

    rep = fil.ok(fil.liability(**{"from": "2026-01-01", "to": "2026-01-31"}))
    (tx,) = rep["state_totals"]
    assert (tx["jurisdiction"], tx["gross_sales"], tx["taxable_sales"], tx["filing_tax_amount"]) == (
        "US-ST-TX", "14000", "14000", "1075")


# ------------------------------------------------------------------ currencies


class Api:
    """Transactions (plain key) and filings (admin key) through one transport."""

    def __init__(self, transport: str, server: LevyServer, channel: grpc.Channel, tenant: Any) -> None:
        self.transport = transport
        self.tx = Txn(transport, server, channel, tenant.key)
        self.fil = Filings(transport, server, channel, tenant.admin_key)

    def close(self) -> None:
        self.tx.close()
        self.fil.close()


@pytest.fixture(params=["rest", "grpc"])
def api(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Any,
        admin_http: httpx.Client) -> Iterator[Api]:
    register(admin_http, "TX", "CA")
    a = Api(request.param, server, channel, tenant)
    yield a
    a.close()


def sale(day: str, *lines: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "sale", "status": "finalized", "transaction_date": f"{day}T12:00:00Z",
            "line_items": list(lines), **extra}


def test_a_eur_sale_needs_a_rate_and_is_converted_at_it(api: Api) -> None:
    # No rate sent and none imported for 2026-01-20 (the table ends on 2026-01-09): refused.
    errs = error_of(api.tx.create_raw(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR")))
    assert [e["source"]["pointer"] for e in errs] == ["/exchange_rate"], errs
    assert "EUR" in errs[0]["detail"] and "USD" in errs[0]["detail"]
    if api.transport == "grpc":
        _, out = api.tx.create_raw(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR"))
        assert out["grpc_code"] == grpc.StatusCode.INVALID_ARGUMENT
    # A bad rate is 422 at the same pointer; a draft may wait for its rate.
    errs = error_of(api.tx.create_raw(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR",
                                           exchange_rate="-1")))
    assert errs[0]["source"]["pointer"] == "/exchange_rate"
    draft = api.tx.create(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR", status="draft"))
    assert draft.get("exchange_rate") is None
    errs = error_of(api.tx.update_raw(draft["id"], {"status": "finalized"}))
    assert errs[0]["source"]["pointer"] == "/exchange_rate"

    # 100.00 EUR at 1.1 USD per EUR: Texas 6.25 % of 10000 EUR cents = 625 EUR cents.
    out = api.tx.create(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR", exchange_rate="1.1"))
    assert (out["currency"], out["tax_amount"], out["exchange_rate"], out["exchange_rate_date"]) == (
        "EUR", "625", "1.1", "2026-01-20")
    # Finalizing the draft with its rate sent (100.00 EUR at 1.1), then dating that rate the day before.
    api.tx.update(draft["id"], {"status": "finalized", "exchange_rate": "1.1"})
    moved = api.tx.update(draft["id"], {"exchange_rate_date": "2026-01-19"})
    assert (moved["exchange_rate"], moved["exchange_rate_date"]) == ("1.1", "2026-01-19")
    ret = api.fil.ok(api.fil.create(period(JAN)), 201)
    tx = row(ret, "US-ST-TX")
    # gross 10000 x 1.1 = 11000 cents, twice (the draft was 10000 EUR cents too): 22000;
    # tax 625 x 1.1 = 687.5 -> 688 per sale: 1376.
    assert (tx["gross_sales"], tx["taxable_sales"], tx["filing_tax_amount"]) == ("22000", "22000", "1376")
    assert ret["currency"] == "USD" and ret["totals"]["gross_sales"] == "22000"
    conv = {c["transaction_id"]: c for c in ret["converted_transactions"]}
    assert {k: conv[out["id"]][k] for k in ("currency", "exchange_rate", "original_gross_sales", "gross_sales")} == {
        "currency": "EUR", "exchange_rate": "1.1", "original_gross_sales": "10000", "gross_sales": "11000"}
    rep = api.fil.ok(api.fil.liability(**{"from": "2026-01-01", "to": "2026-01-31"}))
    assert rep["state_totals"][0]["filing_tax_amount"] == "1376" and len(rep["converted_transactions"]) == 2


def test_a_eur_sale_takes_the_imported_rate_of_its_day(api: Api) -> None:
    # Saturday 2026-01-10 has no publication: the latest before it, Friday 2026-01-09, 1.2 USD per EUR.
    out = api.tx.create(sale("2026-01-10", line("1", 10000, "TX"), currency="EUR"))
    assert (out["exchange_rate"], out["exchange_rate_date"]) == ("1.2", "2026-01-09")
    # On 2026-01-08 the table says 1.19.
    assert api.tx.create(sale("2026-01-08", line("1", 10000, "TX"), currency="EUR"))["exchange_rate"] == "1.19"
    rep = api.fil.ok(api.fil.liability(**{"from": "2026-01-10", "to": "2026-01-10"}))
    # 10000 x 1.2 = 12000 cents; tax 625 x 1.2 = 750.
    (t,) = rep["state_totals"]
    assert (t["gross_sales"], t["filing_tax_amount"]) == ("12000", "750")
    # A JPY sale on that day with no rate: USD per JPY = 1.2 / 160 = 0.0075 (from the same publication).
    jpy = api.tx.create(sale("2026-01-10", line("1", 10000, "TX"), currency="JPY"))
    assert (jpy["exchange_rate"], jpy["exchange_rate_date"]) == ("0.0075", "2026-01-09")


def test_a_jpy_sale_and_its_jpy_credit(api: Api) -> None:
    # 10000 JPY (exponent 0) at 0.0066 USD per JPY: 66.00 USD = 6600 cents;
    # tax 6.25 % x 10000 = 625 JPY -> 625 x 0.0066 = 4.125 USD = 412.5 cents -> 413.
    s = api.tx.create(sale("2026-01-12", line("1", 10000, "TX"), currency="JPY", exchange_rate="0.0066"))
    assert s["tax_amount"] == "625"
    # A credit of 4000 JPY of it, dated later: 6.25 % x 4000 = 250 JPY; at its sale's rate 0.0066:
    # 4000 -> 26.40 USD = 2640 cents, 250 -> 1.65 USD = 165 cents.
    c = api.tx.create({"type": "credit", "status": "finalized", "transaction_date": "2026-01-14T12:00:00Z",
                       "currency": "JPY", "parent_transaction_id": s["id"], "line_items": [line("1", 4000, "TX")]})
    assert (c["tax_amount"], c["exchange_rate"], c["exchange_rate_date"]) == ("250", "0.0066", "2026-01-12")
    # Another rate on the credit is refused: a credit uses its sale's rate.
    errs = error_of(api.tx.create_raw({"type": "credit", "status": "finalized", "currency": "JPY",
                                       "transaction_date": "2026-01-14T12:00:00Z", "parent_transaction_id": s["id"],
                                       "exchange_rate": "0.007", "line_items": [line("1", 1000, "TX")]}))
    assert errs[0]["source"]["pointer"] == "/exchange_rate"
    # Nor can the sale's rate change once it has credits at it (422 invalid_state).
    errs = error_of(api.tx.update_raw(s["id"], {"exchange_rate": "0.007"}))
    assert (errs[0]["source"]["pointer"], errs[0]["code"]) == ("/exchange_rate", "invalid_state")
    ret = api.fil.ok(api.fil.create(period(JAN)), 201)
    tx = row(ret, "US-ST-TX")
    # gross 6600 - 2640 = 3960; tax: sales 413, credits 165, due 248.
    assert (tx["gross_sales"], tx["sales_filing_tax"], tx["credits_filing_tax"], tx["filing_tax_amount"]) == (
        "3960", "413", "165", "248")
    conv = {x["transaction_id"]: (x["original_gross_sales"], x["gross_sales"]) for x in ret["converted_transactions"]}
    assert conv == {s["id"]: ("10000", "6600"), c["id"]: ("-4000", "-2640")}
    text = api.fil.ok(api.fil.export(ret["id"]))
    total = list(csv.DictReader(io.StringIO(text)))[-1]
    assert (total["jurisdiction_code"], total["gross_sales"], total["filing_tax_amount"], total["currency"]) == (
        "TOTAL", "3960", "248", "USD")


def test_a_usd_sale_takes_no_rate(api: Api) -> None:
    errs = error_of(api.tx.create_raw(sale("2026-01-12", line("1", 10000, "TX"), exchange_rate="1.1")))
    assert errs[0]["source"]["pointer"] == "/exchange_rate"


# ------------------------------------------------------------------ marketplace sales


def test_a_marketplace_sale_is_off_the_return_and_counts_toward_nexus_where_the_state_says(api: Api) -> None:
    own = api.tx.create(sale("2026-01-05", line("1", 10000, "CA")))  # 600 + 125
    mkt = api.tx.create(sale("2026-01-06", line("1", 20000, "CA"), marketplace_facilitator=" Amazon "))
    assert mkt["marketplace_facilitator"] == "Amazon" and mkt["tax_amount"] == "1450"  # 6 % 1200 + 1.25 % 250, for the record
    # Colorado does not count marketplace sales toward its threshold (nexus data); Arizona neither.
    api.tx.create(sale("2026-01-06", line("1", 30000, "CO"), marketplace_facilitator="Amazon"))
    errs = error_of(api.tx.create_raw(sale("2026-01-06", line("1", 100, "CA"), marketplace_facilitator="  ")))
    assert errs[0]["source"]["pointer"] == "/marketplace_facilitator"

    ret = api.fil.ok(api.fil.create(period(JAN, "US-ST-CA")), 201)
    # Only the seller's own sale: 10000; tax 600 + 125 = 725.
    assert (ret["totals"]["gross_sales"], ret["filing_tax_amount"], ret["transaction_count"]) == ("10000", "725", 1)
    assert [(m["transaction_id"], m["marketplace_facilitator"], m["gross_sales"], m["tax_amount"])
            for m in ret["marketplace_transactions"]] == [(mkt["id"], "Amazon", "20000", "1450")]
    rep = api.fil.ok(api.fil.liability(**{"from": "2026-01-01", "to": "2026-01-31"}))
    totals = {t["jurisdiction"]: t for t in rep["state_totals"]}
    assert (totals["US-ST-CA"]["gross_sales"], totals["US-ST-CA"]["filing_tax_amount"]) == ("10000", "725")
    # Colorado's only sale went through the marketplace: a state with nothing to file, its sale listed apart.
    assert (totals["US-ST-CO"]["gross_sales"], totals["US-ST-CO"]["filing_tax_amount"]) == ("0", "0")
    # Listed apart: the CA sale (20000, tax 1200 + 250) and the CO one (30000; the seller is not
    # registered in Colorado, so no tax was calculated).
    assert sorted((m["gross_sales"], m["tax_amount"]) for m in rep["marketplace_transactions"]) == [
        ("20000", "1450"), ("30000", "0")]

    states = {s["state"]: s for s in api.fil.ok(api.fil.nexus(as_of="2026-01-31"))["states"]}
    # California counts marketplace sales: 10000 + 20000 = 30000, 2 transactions.
    assert (states["CA"]["sales_amount"], states["CA"]["transaction_count"]) == ("30000", 2)
    # Colorado does not: nothing counted.
    assert (states["CO"]["sales_amount"], states["CO"]["transaction_count"]) == ("0", 0)
    assert own["status"] == "finalized"


# ------------------------------------------------------------------ rates: per transaction, and a credit's


def test_a_return_mixing_usd_eur_and_jpy_converts_each_transaction_half_up(api: Api) -> None:
    """Each transaction's figures are converted on their own and rounded half up, then added: the
    return is not the sum per currency converted once (that would give 2014 here, not 2016)."""
    usd = api.tx.create(sale("2026-02-02", line("1", 10000, "TX")))
    # USD: gross 10000, tax 6.25 % = 625 (no conversion).
    eur1 = api.tx.create(sale("2026-02-03", line("1", 10000, "TX"), currency="EUR", exchange_rate="1.1"))
    # EUR 100.00 at 1.1: gross 11000; tax 625 EUR cents x 1.1 = 687.5 -> 688.
    eur2 = api.tx.create(sale("2026-02-04", line("1", 3000, "TX"), currency="EUR", exchange_rate="1.1"))
    # EUR 30.00: tax 187.5 -> 188 EUR cents; at 1.1: gross 3300, tax 188 x 1.1 = 206.8 -> 207.
    jpy1 = api.tx.create(sale("2026-02-05", line("1", 10000, "TX"), currency="JPY", exchange_rate="0.0066"))
    # JPY 10000 at 0.0066: gross 66.00 USD = 6600; tax 625 JPY x 0.0066 = 4.125 USD = 412.5 -> 413.
    jpy2 = api.tx.create(sale("2026-02-06", line("1", 2000, "TX"), currency="JPY", exchange_rate="0.0066"))
    # JPY 2000: gross 13.20 USD = 1320; tax 125 JPY x 0.0066 = 0.825 USD = 82.5 -> 83.
    assert [s["tax_amount"] for s in (usd, eur1, eur2, jpy1, jpy2)] == ["625", "625", "188", "625", "125"]
    # Gross 10000 + 11000 + 3300 + 6600 + 1320 = 32220; tax 625 + 688 + 207 + 413 + 83 = 2016.
    # (Per currency first: EUR 813 x 1.1 = 894.3 -> 894, JPY 750 x 0.0066 = 495: 625 + 894 + 495 = 2014.)
    feb = ("2026-02-01", "2026-02-28")
    ret = api.fil.ok(api.fil.create(period(feb)), 201)
    assert (ret["currency"], ret["transaction_count"]) == ("USD", 5)
    assert (ret["totals"]["gross_sales"], ret["totals"]["taxable_sales"], ret["filing_tax_amount"]) == (
        "32220", "32220", "2016")
    conv = {c["transaction_id"]: (c["currency"], c["gross_sales"]) for c in ret["converted_transactions"]}
    assert conv == {eur1["id"]: ("EUR", "11000"), eur2["id"]: ("EUR", "3300"),
                    jpy1["id"]: ("JPY", "6600"), jpy2["id"]: ("JPY", "1320")}
    total = list(csv.DictReader(io.StringIO(api.fil.ok(api.fil.export(ret["id"])))))[-1]
    assert (total["jurisdiction_code"], total["gross_sales"], total["filing_tax_amount"], total["currency"]) == (
        "TOTAL", "32220", "2016", "USD")
    rep = api.fil.ok(api.fil.liability(**{"from": "2026-02-01", "to": "2026-02-28"}))
    (tx,) = rep["state_totals"]
    assert (tx["gross_sales"], tx["filing_tax_amount"]) == ("32220", "2016")
    # The return's transactions, each at its own converted figures (they add up to the totals above).
    listed = api.fil.ok(listing(api.fil, ret["id"]))["data"]
    assert [(e["transaction_id"], e["currency"], e["amounts"]["gross_sales"], e["amounts"]["filing_tax_amount"])
            for e in listed] == [(usd["id"], "USD", "10000", "625"), (eur1["id"], "EUR", "11000", "688"),
                                 (eur2["id"], "EUR", "3300", "207"), (jpy1["id"], "JPY", "6600", "413"),
                                 (jpy2["id"], "JPY", "1320", "83")]


#: Per transport its own month (the rates are server-wide and the test changes them): a Friday
#: publication, then the same day revised and the next Friday's added.
REVISED = {"rest": ("2026-03-06", "2026-03-13"), "grpc": ("2026-04-10", "2026-04-17")}


def test_a_credit_after_the_rate_table_changed_uses_its_sales_rate(api: Api, server: LevyServer,
                                                                   tmp_path: Any) -> None:
    day, week_on = REVISED[api.transport]
    first = tmp_path / "eurofxref-first.csv"
    first.write_text(f"Date,USD,JPY,\n{day},1.2000,160.00,\n")
    done = _levy(server.database_url, "rates", "import", str(first), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    s = api.tx.create(sale(day, line("1", 10000, "TX"), currency="EUR"))
    # 100.00 EUR at the table's 1.2: gross 12000 cents; tax 625 EUR cents x 1.2 = 750.
    assert (s["exchange_rate"], s["exchange_rate_date"], s["tax_amount"]) == ("1.2", day, "625")

    # The table changes: the day revised to 1.3, the next Friday published at 1.4.
    later = tmp_path / "eurofxref-later.csv"
    later.write_text(f"Date,USD,JPY,\n{week_on},1.4000,161.00,\n{day},1.3000,160.00,\n")
    done = _levy(server.database_url, "rates", "import", str(later), "--no-progress")
    assert done.returncode == 0, done.stdout + done.stderr
    # A new sale takes the new figures: on the day 1.3 (10000 x 1.3 = 13000; 625 x 1.3 = 812.5 -> 813),
    # a week on 1.4 (14000; 625 x 1.4 = 875).
    on_day = api.tx.create(sale(day, line("1", 10000, "TX"), currency="EUR"))
    week = api.tx.create(sale(week_on, line("1", 10000, "TX"), currency="EUR"))
    assert (on_day["exchange_rate"], week["exchange_rate"], week["exchange_rate_date"]) == ("1.3", "1.4", week_on)

    # The first sale's credits, a week on, keep its 1.2 of the day it was made.
    by_lines = api.tx.create({"type": "credit", "status": "finalized", "transaction_date": f"{week_on}T12:00:00Z",
                              "currency": "EUR", "parent_transaction_id": s["id"],
                              "line_items": [line("1", 4000, "TX")]})
    # 4000 EUR cents, tax 6.25 % = 250; what remains: 6000 + 375 = 6375. A flat 2125 of it:
    # tax 2125 x 375 / 6375 = 125, amount 2000.
    flat = api.tx.create({"type": "credit", "status": "finalized", "transaction_date": f"{week_on}T12:00:00Z",
                          "currency": "EUR", "parent_transaction_id": s["id"], "flat_amount": "2125"})
    for c in (by_lines, flat):
        assert (c["exchange_rate"], c["exchange_rate_date"]) == ("1.2", day), c
    assert (flat["line_items"][0]["unit_price"], flat["tax_amount"]) == ("2000", "125")

    month = (day[:8] + "01", day[:8] + ("31" if day[5:7] == "03" else "30"))
    ret = api.fil.ok(api.fil.create(period(month)), 201)
    # Gross: 12000 - 4000 x 1.2 (4800) - 2000 x 1.2 (2400) + 13000 + 14000 = 31800.
    # Tax: sales 750 + 813 + 875 = 2438; credits 250 x 1.2 = 300 and 125 x 1.2 = 150: 450; due 1988.
    tx = row(ret, "US-ST-TX")
    assert (tx["gross_sales"], tx["sales_filing_tax"], tx["credits_filing_tax"], tx["filing_tax_amount"]) == (
        "31800", "2438", "450", "1988")
    conv = {c["transaction_id"]: (c["exchange_rate"], c["gross_sales"]) for c in ret["converted_transactions"]}
    assert conv == {s["id"]: ("1.2", "12000"), by_lines["id"]: ("1.2", "-4800"), flat["id"]: ("1.2", "-2400"),
                    on_day["id"]: ("1.3", "13000"), week["id"]: ("1.4", "14000")}
