"""Every resolution level through REST and gRPC on SQLite and PostgreSQL (issue 17).

A server on a database of its own; rates imported the way a user does it
(``levy rates import``: the real MN SST rate file with its boundary sample,
synthetic SST files in the official layout, the MN, CA and PR ZIP tables), and
CA city records through the application's import path. Expected figures are
worked by hand from the files' lines (quoted) and the records written here."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from bench import sst_synthetic
from levyserver import LevyServer, Tenant, create_tenant, fresh_database, start_server
from test_calculations import Caller, _levy, _Sql, _wait_for, body, line
from txn_api import Txn
from levy.domain.tax.local_rates import Component, LocalRecord
from levy.v1 import calculations_pb2_grpc as pbg

from shared_data import SST_DIR, ZIP5_DIR  # noqa: E402

STATES = [*"AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND "
          "OH OK OR PA PR RI SC SD TN TX UT VT VA WA WV WI WY".split()]
SAMPLE_DAY = "2019-02-01T12:00:00Z"  # covered by the MN boundary sample (2016-2019)
MARCH = "2026-03-15T12:00:00Z"  # the ZIP tables (from 2026-03-01)
MAY = "2026-05-01T12:00:00Z"  # the synthetic SST files (2026-04-01..2026-06-30)


def _ca_records() -> list[LocalRecord]:
    district = Component("special", "Los Angeles County district taxes", Decimal("0.0225"),
                         "US-SP-CA-LOS_ANGELES_COUNTY_DISTRICTS")
    city = Component("city", "Calabasas", Decimal("0.0025"), "US-CI-CA-CALABASAS")
    common: dict[str, Any] = dict(state="CA", zip5="91302", effective_from=date(2026, 1, 1), effective_to=None,
                                  source="ca-cities.csv", source_kind="official_zip")
    return [
        LocalRecord(components=(district, city), city="Calabasas", line=2, **common),
        LocalRecord(components=(district,), city="Unincorporated Los Angeles County", primary=True, line=3, **common),
    ]


async def _import_city_records(url: str) -> None:
    from levy.app.rate_import import ParsedFile, import_files
    from levy.store.db import create_engine

    engine = create_engine(url, pool_size=1)
    try:
        async with engine.begin() as conn:
            await import_files(conn, [ParsedFile(Path("ca-cities.csv"), "test", "c" * 64, date(2026, 1, 1), None,
                                                 _ca_records(), {"rows_read": 2})])
    finally:
        await engine.dispose()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def res_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    for need in (SST_DIR / "MNB2026Q2FEB18-sample.csv", ZIP5_DIR / "TAXRATES_ZIP5_CA202603.csv"):
        if not need.is_file():
            pytest.skip(f"rate files not present: {need}")
    with fresh_database(request.param, tmp_path_factory.mktemp("resdb")) as url:
        srv = start_server(url, tmp_path_factory.mktemp("res-logs"), extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.3"})
        try:
            # Oldest first: the 2019 SST sample, the synthetic SST files, then the newer ZIP tables.
            done = _levy(url, "rates", "import", str(SST_DIR / "MNR2026Q2FEB18.csv"), "--boundaries",
                         str(SST_DIR / "MNB2026Q2FEB18-sample.csv"), "--no-progress")
            assert done.returncode == 0, done.stderr
            rates, bounds = sst_synthetic.write(tmp_path_factory.mktemp("syn"), 100, 100, units=2)
            done = _levy(url, "rates", "import", str(rates), "--boundaries", str(bounds), "--no-progress")
            # 202 records (2 of suites), and a ZIP candidate per county (053, 025) of 55001 and 55002: 206.
            assert done.returncode == 0 and "imported 206 rows" in done.stdout, done.stdout + done.stderr
            done = _levy(url, "rates", "import", *(str(ZIP5_DIR / f"TAXRATES_ZIP5_{s}202603.csv")
                                                   for s in ("MN", "CA", "PR")), "--no-progress")
            assert done.returncode == 0, done.stderr
            asyncio.run(_import_city_records(url))
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def seller(res_server: LevyServer) -> Tenant:
    t = create_tenant(res_server.database_url)
    _Sql(res_server.database_url).register(t.organization_id, *STATES)
    with httpx.Client(base_url=res_server.http_url, timeout=30) as rest:
        def loaded() -> bool:  # the server picked the last import (the CA city records) up
            req = body(addr("CA", "91302", city="Calabasas"), date=MARCH)
            r = rest.post("/calculations", headers={"X-API-Key": t.key}, json=req).json()
            return r["line_items"][0].get("resolution") == "city"

        assert _wait_for(loaded), "the server did not pick the imports up"
    return t


@pytest.fixture(scope="module")
def grpc_channel(res_server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(res_server.grpc_target) as ch:
        yield ch


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, res_server: LevyServer, grpc_channel: grpc.Channel) -> Iterator[Caller]:
    with httpx.Client(base_url=res_server.http_url, timeout=30) as rest:
        yield Caller(request.param, rest, pbg.CalculationServiceStub(grpc_channel))


def addr(state: str, zip: str | None = None, **address: str) -> dict[str, Any]:
    out = line("1", state, ["GENERAL.TANGIBLE.GOODS"], zip=zip)
    out["customer"]["address"].update(address)
    return out


def one(calc: Caller, seller: Tenant, item: dict[str, Any], on: str) -> tuple[str, str, list[tuple[str, str]], str]:
    """(total, resolution, [(type, tax)], first row's detail); every row's detail says how."""
    li = calc(seller.key, body(item, date=on))["line_items"][0]
    how = li["taxes"][0]["detail"].split(";")[0]
    assert all(t["detail"].startswith(how) for t in li["taxes"]), li["taxes"]
    return li["tax_amount"], li["resolution"], [(t["jurisdiction_type"], t["tax_amount"]) for t in li["taxes"]], how


# State rates: MN 6.875% of 100.00 = 687.5 -> 688; CA 6% = 600 + statewide local 1.25% = 125; PR 10.5% = 1050.
def test_address_level_street_sides(calc: Caller, seller: Tenant) -> None:
    zip5, _ = sst_synthetic.street_of(7)  # 55001: pair 7 of the synthetic file, N OAK7 ST
    # Odd side 1..999: county 053 at 0.15% = 15; the March MN table also covers 55001, but the street range is first.
    assert one(calc, seller, addr("MN", zip5, line1="101 N Oak7 St"), MAY)[:3] == (
        "703", "address", [("state", "688"), ("county", "15")])
    # Even side 2..998: county 025 at 0.5% = 50.
    total, level, _, how = one(calc, seller, addr("MN", zip5, line1="102 North Oak7 Street"), MAY)
    assert (total, level) == ("738", "address")
    assert how == (f"resolved by street range 2-998 (even) N OAK7 ST in ZIP {zip5} "
                   "(official_address: MNR2026Q2SYN.csv+MNB2026Q2SYN.csv line 116)")  # a record i = 2 * 7 + 1 after 100 ZIP+4 lines


@pytest.mark.parametrize(("line1", "total", "range_text", "line_no"), [
    # Suites 200-299 of the odd side of N OAK0 ST are in county 025 (0.5% of 100.00 = 50): lines 201
    # of the synthetic file (after 100 ZIP+4 and 100 address lines); the rest of the side in 053 (0.15% = 15).
    ("101 N Oak0 St Ste 250", "738", "1-999 (odd) N OAK0 ST STE 200-299", 101 + 100),
    ("101 N Oak0 St Suite 299", "738", "1-999 (odd) N OAK0 ST STE 200-299", 201),
    ("101 N Oak0 St # 250", "738", "1-999 (odd) N OAK0 ST STE 200-299", 201),  # no designator: any
    ("101 N Oak0 St Ste 300", "703", "1-999 (odd) N OAK0 ST", 101),  # another suite: the building's range
    ("101 N Oak0 St Apt 250", "703", "1-999 (odd) N OAK0 ST", 101),  # another designator
    ("101 N Oak0 St", "703", "1-999 (odd) N OAK0 ST", 101),  # no unit
])
def test_secondary_ranges(calc: Caller, seller: Tenant, line1: str, total: str, range_text: str,
                          line_no: int) -> None:
    zip5, _ = sst_synthetic.street_of(0)
    got_total, level, rows, how = one(calc, seller, addr("MN", zip5, line1=line1), MAY)
    assert (got_total, level) == (total, "address"), rows
    assert how == (f"resolved by street range {range_text} in ZIP {zip5} "
                   f"(official_address: MNR2026Q2SYN.csv+MNB2026Q2SYN.csv line {line_no})")


def test_zip4_level_on_the_mn_sample(calc: Caller, seller: Tenant) -> None:
    # line 88: 4,20180101,20190331,...,55101,2301,55101,2316,,27,27,123,58000: Ramsey 0.5% + Saint Paul 0.5%.
    for postal in ("55101-2301", "551012310"):
        total, level, rows, how = one(calc, seller, addr("MN", postal), SAMPLE_DAY)
        assert (total, level, rows) == ("788", "zip4", [("state", "688"), ("county", "50"), ("city", "50")])
        assert how.startswith("resolved by ZIP+4 range 55101-2301..55101-2316 (official_address: ")


def test_city_level(calc: Caller, seller: Tenant) -> None:
    # The Calabasas record: districts 2.25% = 225, city 0.25% = 25.
    for city in ("Calabasas", "CITY OF CALABASAS", "calabasas "):
        total, level, rows, how = one(calc, seller, addr("CA", "91302", city=city), MARCH)
        assert (total, level) == ("975", "city")
        assert rows == [("state", "600"), ("county", "125"), ("special", "225"), ("city", "25")]
        assert how.startswith(f"resolved by city '{city.strip()}' among 3 candidates for ZIP 91302")


def test_unknown_city_is_the_zip_default(calc: Caller, seller: Tenant) -> None:
    # Agoura is none of 91302's candidates: the primary official record (unincorporated, districts 2.25%).
    total, level, rows, how = one(calc, seller, addr("CA", "91302", city="Agoura"), MARCH)
    assert (total, level, rows) == ("950", "zip5", [("state", "600"), ("county", "125"), ("special", "225")])
    assert how.startswith("city 'Agoura' matches no candidate for ZIP 91302: ZIP 91302 default")


def test_zip5_level(calc: Caller, seller: Tenant) -> None:
    # CA,90001,HUNTINGTON PARK,0.105,0.06,0.0025,0.0075,0.035: county 0.25% and special 3.5% less the 1.25%
    # statewide portion -> county 0, city 0.75% = 75, special 2.5% = 250.
    total, level, rows, how = one(calc, seller, addr("CA", "90001"), MARCH)
    assert (total, level) == ("1050", "zip5") and rows[2:] == [("city", "75"), ("special", "250")]
    assert how.startswith("resolved by ZIP 90001 (estimated: TAXRATES_ZIP5_CA202603.csv line ")


def test_state_level(calc: Caller, seller: Tenant) -> None:
    total, level, rows, how = one(calc, seller, addr("CA"), MARCH)
    assert (total, level, rows, how) == ("725", "state", [("state", "600"), ("county", "125")], "resolved by state only")


def test_puerto_rico(calc: Caller, seller: Tenant) -> None:
    # PR,00601,ADJUNTAS CO,0.115000,0.105000,0.010000,...: state IVU 10.5% = 1050 + municipal 1% = 100.
    total, level, rows, _ = one(calc, seller, addr("PR", "00601"), MARCH)
    assert (total, level, rows) == ("1150", "zip5", [("state", "1050"), ("county", "100")])


def test_past_date_after_a_newer_import(calc: Caller, seller: Tenant) -> None:
    # 55101 in 2019: z,20161001,20190331,...,55092,,55102,,,27,27 (no local tax) from the older SST import.
    assert one(calc, seller, addr("MN", "55101"), SAMPLE_DAY)[:3] == ("688", "zip5", [("state", "688")])
    # In March 2026: MN,55101,SAINT PAUL,0.098750,0.068750,0,0.015,0.015 from the newer ZIP table: 150 + 150.
    assert one(calc, seller, addr("MN", "55101"), MARCH)[:3] == (
        "988", "zip5", [("state", "688"), ("city", "150"), ("special", "150")])


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_transactions_store_the_resolution(transport: str, res_server: LevyServer, seller: Tenant,
                                           grpc_channel: grpc.Channel) -> None:
    tx = Txn(transport, res_server, grpc_channel, seller.key)
    try:
        zip5, _ = sst_synthetic.street_of(7)
        street = {"id": "street", "quantity": "1", "unit_price": "10000", "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]},
                  "customer": {"address": {"state": "MN", "postal_code": zip5, "line1": "101 N Oak7 St"}}}
        plain = {**street, "id": "zip", "customer": {"address": {"state": "CA", "postal_code": "90001"}}}
        created = tx.create({"type": "sale", "status": "draft", "transaction_date": MAY, "line_items": [street, plain]})
        assert [(li["resolution"], li["tax_amount"]) for li in created["line_items"]] == [
            ("address", "703"), ("zip5", "1050")]  # as in the calculation tests above
        again = tx.get(created["id"])
        assert [li["resolution"] for li in again["line_items"]] == ["address", "zip5"]
        assert again["line_items"][0]["taxes"] == created["line_items"][0]["taxes"]
    finally:
        tx.close()
