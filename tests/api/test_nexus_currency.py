"""Issue 37: ``/nexus`` says which of the sales it counted were in another currency (a Levy
extension: ``converted_transaction_count`` and ``converted_transactions`` per state), through REST
and gRPC against a real server on SQLite and PostgreSQL. Every expected figure is worked out by
hand in the comments.

Every rate is sent with its sale (no imported table needed); the seller is registered in TX and CA.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from levyserver import LevyServer, own_server
from test_filings import Filings
from txn_api import Txn, line, register


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("i37n"), {}) as srv:
        yield srv


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


class Api:
    """Transactions (plain key) and filings (admin key) through one transport."""

    def __init__(self, transport: str, server: LevyServer, channel: grpc.Channel, tenant: Any) -> None:
        self.tx = Txn(transport, server, channel, tenant.key)
        self.fil = Filings(transport, server, channel, tenant.admin_key)


@pytest.fixture(params=["rest", "grpc"])
def api(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Any,
        admin_http: httpx.Client) -> Iterator[Api]:
    register(admin_http, "TX", "CA")
    a = Api(request.param, server, channel, tenant)
    yield a
    a.tx.close()
    a.fil.close()


def sale(day: str, *lines: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "sale", "status": "finalized", "transaction_date": f"{day}T12:00:00Z",
            "line_items": list(lines), **extra}


def _states(api: Api, as_of: str) -> dict[str, Any]:
    return {s["state"]: s for s in api.fil.ok(api.fil.nexus(as_of=as_of))["states"]}


def test_nexus_lists_the_sales_it_converted_per_state(api: Api) -> None:
    usd = api.tx.create(sale("2026-01-05", line("1", 10000, "TX")))
    # 10000 JPY at 0.0066 USD per JPY: 6600 cents; its credit of 4000 JPY: 4000 x 0.0066 = 26.40 USD = 2640 cents.
    jpy = api.tx.create(sale("2026-01-12", line("1", 10000, "TX"), currency="JPY", exchange_rate="0.0066"))
    jpy_credit = api.tx.create({"type": "credit", "status": "finalized", "transaction_date": "2026-01-14T12:00:00Z",
                                "currency": "JPY", "parent_transaction_id": jpy["id"],
                                "line_items": [line("1", 4000, "TX")]})
    # 100.00 EUR at 1.1 USD per EUR: 11000 cents.
    eur = api.tx.create(sale("2026-01-20", line("1", 10000, "TX"), currency="EUR", exchange_rate="1.1"))
    # Before Texas's trailing twelve months (2025-02-01 .. 2026-01-31): neither counted nor listed.
    api.tx.create(sale("2025-01-15", line("1", 10000, "TX"), currency="EUR", exchange_rate="1.1"))  # 11000
    # Marketplace sales in EUR: California counts them, Colorado does not (nexus data).
    ca_mkt = api.tx.create(sale("2026-01-21", line("1", 20000, "CA"), currency="EUR", exchange_rate="1.25",
                                marketplace_facilitator="Amazon"))
    api.tx.create(sale("2026-01-21", line("1", 30000, "CO"), currency="EUR", exchange_rate="1.25",
                       marketplace_facilitator="Amazon"))

    states = _states(api, "2026-01-31")
    tx = states["TX"]
    # 10000 + 6600 - 2640 + 11000 = 24960 cents; three sales (a credit counts no transaction).
    assert (tx["sales_amount"], tx["transaction_count"]) == ("24960", 3)
    assert (tx["period_start"], tx["period_end"]) == ("2025-02-01", "2026-01-31")
    # Three of the counted transactions are in another currency (the USD sale is not listed), by date.
    assert tx["converted_transaction_count"] == 3
    assert [(c["transaction_id"], c["currency"], c["exchange_rate"], c["exchange_rate_date"],
             c["original_gross_sales"], c["gross_sales"]) for c in tx["converted_transactions"]] == [
        (jpy["id"], "JPY", "0.0066", "2026-01-12", "10000", "6600"),
        (jpy_credit["id"], "JPY", "0.0066", "2026-01-12", "-4000", "-2640"),
        (eur["id"], "EUR", "1.1", "2026-01-20", "10000", "11000"),
    ]
    assert usd["id"] not in {c["transaction_id"] for c in tx["converted_transactions"]}
    # California: the marketplace sale counts, 20000 EUR cents x 1.25 = 25000 cents.
    ca = states["CA"]
    assert (ca["sales_amount"], ca["transaction_count"], ca["converted_transaction_count"]) == ("25000", 1, 1)
    (c,) = ca["converted_transactions"]
    assert (c["transaction_id"], c["original_gross_sales"], c["gross_sales"]) == (ca_mkt["id"], "20000", "25000")
    # Colorado does not count marketplace sales: nothing counted, nothing listed.
    co = states["CO"]
    assert (co["sales_amount"], co["converted_transaction_count"], co.get("converted_transactions", [])) == (
        "0", 0, [])

    # As of 2026-01-13 Texas's period is 2025-01-14 .. 2026-01-13: the 2025-01-15 EUR sale is in it and the
    # credit and the 2026-01-20 sale are not: 10000 (USD) + 11000 (2025 EUR) + 6600 (JPY) = 27600, two converted.
    tx = _states(api, "2026-01-13")["TX"]
    assert (tx["period_start"], tx["sales_amount"], tx["converted_transaction_count"]) == ("2025-01-14", "27600", 2)
    assert [(c["currency"], c["gross_sales"]) for c in tx["converted_transactions"]] == [("EUR", "11000"),
                                                                                         ("JPY", "6600")]


def test_marketplace_sales_count_toward_nexus_where_the_state_data_says_so(api: Api) -> None:
    """Issue 37: the per-state ``counts_marketplace_sales`` of levy/data/nexus/thresholds.json, through /nexus.
    Iowa and Nebraska count them (their DOR pages, cited in the data), Arizona does not (R15-5-2009(D)),
    Kentucky is unconfirmed (null) and so counted (its period: the current calendar year, 2026). All sales in
    USD, as of 2026-01-31."""
    api.tx.create(sale("2026-01-10", line("1", 10000, "IA")))  # the seller's own sale
    api.tx.create(sale("2026-01-11", line("1", 30000, "IA"), marketplace_facilitator="Amazon"))
    api.tx.create(sale("2026-01-12", line("1", 20000, "NE"), marketplace_facilitator="Etsy"))
    api.tx.create(sale("2026-01-13", line("1", 7000, "AZ"), marketplace_facilitator="Amazon"))
    api.tx.create(sale("2026-01-13", line("1", 2500, "AZ")))
    api.tx.create(sale("2026-01-14", line("1", 5000, "KY"), marketplace_facilitator="Walmart"))
    states = _states(api, "2026-01-31")
    # Iowa: 10000 own + 30000 through Amazon = 40000, two sales.
    assert (states["IA"]["sales_amount"], states["IA"]["transaction_count"]) == ("40000", 2)
    # Nebraska: the 20000 marketplace sale alone.
    assert (states["NE"]["sales_amount"], states["NE"]["transaction_count"]) == ("20000", 1)
    # Arizona: only the seller's own 2500; the 7000 marketplace sale is left out.
    assert (states["AZ"]["sales_amount"], states["AZ"]["transaction_count"]) == ("2500", 1)
    # Kentucky (null, unconfirmed): counted, 5000.
    assert (states["KY"]["sales_amount"], states["KY"]["transaction_count"]) == ("5000", 1)
    # None of the marketplace sales is on the liability report's totals: Iowa's state total is the own
    # sale's 10000 (listed apart: the 30000 marketplace sale).
    report = api.fil.ok(api.fil.liability(**{"from": "2026-01-01", "to": "2026-01-31"}))
    ia = [s for s in report["state_totals"] if s["jurisdiction"] == "US-ST-IA"]
    assert [s["gross_sales"] for s in ia] == ["10000"]
    assert sorted(int(m["gross_sales"]) for m in report["marketplace_transactions"]) == [5000, 7000, 20000, 30000]


def test_michigan_and_missouri_count_marketplace_sales_and_maine_does_not(api: Api) -> None:
    """The rows resolved from the states' own texts (levy/data/nexus/thresholds.json): Michigan's
    Treasury FAQ and Missouri's DOR FAQ count a seller's marketplace sales toward its threshold;
    36 M.R.S. 1951-C(3)(A) has a Maine seller exclude them. All sales in USD, as of 2026-01-31."""
    # Michigan measures the previous calendar year (2025), Missouri the 12 months ending with the last
    # quarter (2025-01-01 .. 2025-12-31): sales of 2025-11-10 are in both.
    api.tx.create(sale("2025-11-10", line("1", 10000, "MI")))
    api.tx.create(sale("2025-11-10", line("1", 40000, "MI"), marketplace_facilitator="Amazon"))
    api.tx.create(sale("2025-11-10", line("1", 25000, "MO"), marketplace_facilitator="eBay"))
    # Maine: one own sale and one through a marketplace on the same day.
    api.tx.create(sale("2026-01-20", line("1", 3000, "ME")))
    api.tx.create(sale("2026-01-20", line("1", 60000, "ME"), marketplace_facilitator="Etsy"))
    states = _states(api, "2026-01-31")
    mi, mo, me = states["MI"], states["MO"], states["ME"]
    # Michigan: 10000 own + 40000 through Amazon = 50000, two sales.
    assert (mi["period_start"], mi["period_end"], mi["sales_amount"], mi["transaction_count"]) == (
        "2025-01-01", "2025-12-31", "50000", 2)
    # Missouri: the 25000 marketplace sale alone.
    assert (mo["period_start"], mo["period_end"], mo["sales_amount"], mo["transaction_count"]) == (
        "2025-01-01", "2025-12-31", "25000", 1)
    # Maine: only the own 3000; the 60000 through Etsy is left out.
    assert (me["sales_amount"], me["transaction_count"]) == ("3000", 1), me
