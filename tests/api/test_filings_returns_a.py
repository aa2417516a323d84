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
from test_filings import JAN, Filings, fil, period, row, txn  # noqa: F401  (fil is a fixture)
from test_sourcing_api import _import_records
from txn_api import line, register

AUSTIN = {"line1": "100 Congress Ave", "city": "Austin", "state": "TX", "postal_code": "78701", "country": "US"}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    """A server on a database of its own with Austin's local rates imported (they are server-wide)."""
    with fresh_database(request.param, tmp_path_factory.mktemp("i37a-db")) as url:
        srv = start_server(url, tmp_path_factory.mktemp("i37a-logs"), extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.3"})
        try:
            asyncio.run(_import_records(url))  # 78701: Austin city 1 %, Austin MTA 1 %
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
