"""The address file swapped under load (issue 33): a server (two workers) answers
calculations at ZIP+4 addresses without a pause while a new quarter is imported;
every request answers 200, first with the old rates and then with the new ones,
on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from levyserver import LevyServer, Tenant, create_tenant, fresh_database, start_server
from test_calculations import _levy, _Sql, _wait_for, body, line

from bench import sst_synthetic

MAY = "2026-05-01T12:00:00Z"  # in the synthetic files' window (2026-04-01..2026-06-30)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def swap_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with fresh_database(request.param, tmp_path_factory.mktemp("swapdb")) as url:
        assert _levy(url, "migrate").returncode == 0
        rates, bounds = sst_synthetic.write(tmp_path_factory.mktemp("q"), 200, 200)
        done = _levy(url, "rates", "import", str(rates), str(bounds), "--no-progress")
        assert done.returncode == 0, done.stdout + done.stderr
        srv = start_server(url, tmp_path_factory.mktemp("swap-logs"), args=["--workers", "2"], timeout=300,
                           extra_env={"LEVY_RATES_REFRESH_SECONDS": "0.2",
                                      "LEVY_ADDRESS_DIR": str(tmp_path_factory.mktemp("addresses"))})
        try:
            yield srv
        finally:
            assert srv.stop() == 0, srv.log()


def test_a_new_import_swaps_in_while_requests_keep_answering(swap_server: LevyServer, tmp_path: Path) -> None:
    seller: Tenant = create_tenant(swap_server.database_url)
    _Sql(swap_server.database_url).register(seller.organization_id, "MN")
    zip5, low, _, _ = sst_synthetic.zip4_of(3)  # record 3: 55001-0600..0799, county 025
    item = line("1", "MN", ["GENERAL.TANGIBLE.GOODS"], zip=f"{zip5}-{low}")
    statuses: list[int] = []
    taxes: list[str] = []
    stop = threading.Event()

    def load() -> None:
        with httpx.Client(base_url=swap_server.http_url, timeout=30) as rest:
            while not stop.is_set():
                r = rest.post("/calculations", headers={"X-API-Key": seller.key}, json=body(item, date=MAY))
                statuses.append(r.status_code)
                if r.status_code == 200:
                    taxes.append(r.json()["line_items"][0]["tax_amount"])

    # Before: MN 6.875% of 100.00 = 687.5 -> 688, county 025 at 0.5% = 50: 738.
    assert _wait_for(lambda: bool(taxes) or _one(swap_server, seller, item) == "738")
    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        # The same quarter re-published with county 025 at 0.75% (a new file: a new import and address file).
        rates, bounds = sst_synthetic.write(tmp_path / "again", 200, 200, rates={"053": "0.0015", "025": "0.0075"})
        rates = rates.rename(rates.with_name("MNR2026Q2SYN2.csv"))
        bounds = bounds.rename(bounds.with_name("MNB2026Q2SYN2.csv"))
        done = _levy(swap_server.database_url, "rates", "import", str(rates), str(bounds), "--no-progress")
        assert done.returncode == 0, done.stdout + done.stderr
        # After: 688 + 0.75% of 100.00 = 75: 763, once every worker swapped (requests spread over both).
        assert _wait_for(lambda: taxes[-20:].count("763") == 20 if len(taxes) >= 20 else False, timeout=120)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert statuses and set(statuses) == {200}, sorted(set(statuses))
    assert set(taxes) <= {"738", "763"} and "738" in taxes, sorted(set(taxes))


def _one(srv: LevyServer, seller: Tenant, item: dict[str, object]) -> str:
    with httpx.Client(base_url=srv.http_url, timeout=30) as rest:
        r = rest.post("/calculations", headers={"X-API-Key": seller.key}, json=body(item, date=MAY))
        return str(r.json()["line_items"][0]["tax_amount"]) if r.status_code == 200 else ""
