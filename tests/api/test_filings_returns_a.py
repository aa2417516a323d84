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
