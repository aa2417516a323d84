"""``levy rates import|list`` with the importers of issue 17, on SQLite and
PostgreSQL: small synthetic files in the official layouts, each import's
printed report checked figure by figure, ``--strict`` refusing, and the stored
records read back through the rate table."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import date
from decimal import Decimal
from pathlib import Path

from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from levyserver import ROOT, levy_env

from levy.domain.tax.model import Address
from levy.ratefiles.builtin import builtin_rate_table
from levy.store import rate_imports as store
from levy.store.db import create_engine


def levy(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args, "--database-url", url], cwd=ROOT, capture_output=True,
                          text=True, env=levy_env(), timeout=120)


def rates_on(url: str, on: date, **address: str) -> tuple[Decimal, str]:
    """Combined rate and resolution level of ``address`` from the records stored in ``url``."""

    async def records() -> list[object]:
        engine = create_engine(url, pool_size=1)
        try:
            async with engine.connect() as conn:
                return await store.all_records(conn)  # type: ignore[return-value]
        finally:
            await engine.dispose()

    res = builtin_rate_table(asyncio.run(records())).resolve(Address(**address), on)
    return sum((r.rate for r in res.rows), Decimal(0)), res.level


def write(folder: Path, files: dict[str, str]) -> list[str]:
    """Write ``{name: text}`` into ``folder``; their paths, in order."""
    for name, text in files.items():
        (folder / name).write_text(text)
    return [str(folder / name) for name in files]


def test_import_help_lists_the_new_options() -> None:
    r = subprocess.run([sys.executable, "-m", "levy", "rates", "import", "--help"], cwd=ROOT, capture_output=True,
                       text=True, env=levy_env(), timeout=60)
    for option in ("--strict", "--source-kind", "official_zip", "CDTFA", "without a boundary file"):
        assert option in r.stdout, option


NV_GENERIC = """state,zip5,city,primary,effective_from,components
NV,89101,Las Vegas,yes,2026-04-01,county:Clark County:1.525%
NV,89101,Reservation,no,2026-04-01,special:Tribal District:5%
NV,89102,,yes,2026-04-01,
"""


def test_strict_refuses_an_import_with_anomalies_and_without_it_they_are_listed(
    fresh_database_url: str, tmp_path: Path  # noqa: F811
) -> None:
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0  # no command but migrate creates a database
    [f] = write(tmp_path, {"nv.csv": NV_GENERIC})
    done = levy(url, "rates", "import", "--no-progress", "--strict", f)
    assert done.returncode == 1
    assert "--strict: anomalies in nv.csv" in done.stderr and "nothing imported" in done.stderr
    # The report is printed all the same. 3 rows, 3 records; ZIPs 89101 (two cities: two candidates) and 89102.
    assert ("nv.csv: 3 rows read, 3 records, states NV, 2 ZIPs covered (1 with several candidates), "
            "0 place-wide records, effective 2026-04-01.., kind official_zip") in done.stdout
    # Line 3: NV 4.6% state + 2.25% statewide local (built-in) + 5% = 11.85% > 8.375% (Clark County, the
    # documented maximum); 5% > 1.525% maximum local; 5% special > 4.6% state. Line 2 is exactly at the maxima.
    assert "anomalies: 3" in done.stdout
    assert "combined_above_max: line 3: NV ZIP 89101: combined rate 11.85% above the documented maximum 8.375%" \
        in done.stdout
    listed = levy(url, "rates", "list")
    assert listed.stdout.strip() == "no rate imports"

    done = levy(url, "rates", "import", "--no-progress", f)
    assert done.returncode == 0, done.stderr
    assert "anomalies: 3" in done.stdout and "nv.csv: imported 3 rows (generic, effective from 2026-04-01)" in done.stdout
    listed = levy(url, "rates", "list").stdout.splitlines()
    assert listed[0].split("\t")[1:8] == ["generic", "official_zip", "2026-04-01..", "states NV", "2 ZIPs",
                                          "3 records", "3 anomalies"]
    assert ("  anomaly special_above_state: line 3: NV ZIP 89101: special district Tribal District 5% above the "
            "state rate 4.6%") in listed
    # Kept and used: the city picks its candidate, no city falls back to the primary one.
    on = date(2026, 4, 15)
    assert rates_on(url, on, state="NV", postal_code="89101", city="Reservation") == (Decimal("0.1185"), "city")
    assert rates_on(url, on, state="NV", postal_code="89101") == (Decimal("0.08375"), "zip5")  # 4.6 + 2.25 + 1.525


GA_SST = """13,45,13,0.04,0.04,0,0,20110101,29991231
13,00,021,0.03,0.03,0.03,0.03,20251001,20260331
13,00,021,0.04,0.04,0.04,0.04,20260401,29991231
13,01,04000,0.019,0.019,0.019,0.019,20221001,29991231
"""


def test_sst_rate_file_without_a_boundary_file_is_placed_by_county(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0  # no command but migrate creates a database
    [f] = write(tmp_path, {"GAR2026Q2TEST.csv": GA_SST})
    # The city row (Atlanta, 04000, line 4) cannot be placed: a warning, not an anomaly (the county records state
    # the county rate only, so the ZIPs keep the city taxes of other imports): --strict imports the file.
    done = levy(url, "rates", "import", "--no-progress", "--strict", f)
    assert done.returncode == 0, done.stderr
    # County 13021 is Bibb County; the ZIP directory has 22 Bibb ZIPs (31052, 31201-31213, 31216, 31217, 31220,
    # 31221, 31294-31297): 2 county rows x 22 ZIPs = 44 records. The state row is not used.
    assert ("GAR2026Q2TEST.csv: 4 rows read, 44 records, states GA, 22 ZIPs covered (0 with several candidates), "
            "0 place-wide records, effective 2025-10-01.., kind official_zip") in done.stdout
    assert "anomalies: 0" in done.stdout
    note = ("unplaced_local_taxes: line 4: GA city 04000: 1.9% in force from 2022-10-01 cannot be placed on ZIPs "
            "without the boundary file: not applied (the records state county rates only; each ZIP keeps the city "
            "and special-district rates of its other imports)")
    assert f"  warning: {note}" in done.stdout.splitlines()
    listed = levy(url, "rates", "list").stdout.splitlines()
    assert listed[0].split("\t")[1:8] == ["sst_county", "official_zip", "2025-10-01..", "states GA", "22 ZIPs",
                                          "44 records", "0 anomalies"]
    assert listed[1] == f"  warning: {note}"
    # Macon 31201: 4% state + 3% Bibb County until 2026-03-31, 4% + 4% from 2026-04-01.
    assert rates_on(url, date(2026, 3, 31), state="GA", postal_code="31201") == (Decimal("0.07"), "zip5")
    assert rates_on(url, date(2026, 4, 1), state="GA", postal_code="31201") == (Decimal("0.08"), "zip5")


GA_ZIP5 = """State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel
GA,31201,MACON,0.070000,0.040000,0.030000,0.000000,0.000000,0
GA,30303,ATLANTA,0.089000,0.040000,0.030000,0.015000,0.004000,0
"""


def test_sst_file_by_county_reports_where_it_disagrees_with_an_imported_zip_table(
    fresh_database_url: str, tmp_path: Path  # noqa: F811
) -> None:
    paths = write(tmp_path, {"TAXRATES_ZIP5_GA202603.csv": GA_ZIP5, "GAR2026Q2TEST.csv": GA_SST})
    assert levy(fresh_database_url, "migrate").returncode == 0
    # Both in one command, the ZIP table first: the SST file is compared with it on its quarter, 2026-04-01.
    done = levy(fresh_database_url, "rates", "import", "--no-progress", *paths)
    assert done.returncode == 0, done.stderr
    # 31201 (Bibb County): the SST file 4% from 2026-04-01, the March table 3%, compared on the county rate (the
    # only one the SST records state). 30303 (Fulton County) is not in the SST file (no Fulton row): not compared.
    assert "disagreements with imported ZIP tables: 1" in done.stdout
    assert "ZIP 31201 (Bibb County): GAR2026Q2TEST.csv county 4%, TAXRATES_ZIP5_GA202603.csv county 3%" in done.stdout
    # Resolved: Macon 4% state + 4% Bibb County (SST, from 2026-04-01; the table has no city or district there).
    assert rates_on(fresh_database_url, date(2026, 4, 1), state="GA", postal_code="31201") == (Decimal("0.08"), "zip5")
    # Atlanta keeps its city and district taxes of the table: 4% state + 3% county + 1.5% city + 0.4% special.
    assert rates_on(fresh_database_url, date(2026, 4, 1), state="GA", postal_code="30303") == (Decimal("0.089"), "zip5")


CA_ZIP5 = """State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel
CA,90001,HUNTINGTON PARK,0.105000,0.060000,0.002500,0.007500,0.035000,0
CA,90012,LOS ANGELES,0.097500,0.060000,0.002500,0.007500,0.027500,0
"""
CDTFA_RAW = """"Use the up, down, leff, and right arrows to navigate the worksheet"
Effective Sales and Use Tax Rates
Location,Rate,County,Type,Notes
Los Angeles,9.7500000000000003E-2,Los Angeles,City
Los Angeles County,0.10249999999999999,Los Angeles,County
Kern County,Kern,County,Please refer to the applicable tax rates for the unincorporated area and incorporated cities within Kern County.
"""


def test_cdtfa_table_reports_where_it_disagrees_with_an_imported_zip_table(
    fresh_database_url: str, tmp_path: Path  # noqa: F811
) -> None:
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0  # no command but migrate creates a database
    table, cdtfa = write(tmp_path, {"TAXRATES_ZIP5_CA202603.csv": CA_ZIP5, "SalesTaxRates1-1-26.csv": CDTFA_RAW})
    for path in (table, cdtfa):  # two imports: the CDTFA table is compared with what is stored
        done = levy(url, "rates", "import", "--no-progress", path)
        assert done.returncode == 0, done.stderr
    # 3 rows under the header; the "Please refer" row has no rate: 2 place-wide records.
    assert ("SalesTaxRates1-1-26.csv: 3 rows read, 2 records, states CA, 0 ZIPs covered (0 with several "
            "candidates), 2 place-wide records, effective 2026-01-01.., kind official_zip") in done.stdout
    # ZIP 90001 (directory city Los Angeles): the table's 10.5% - 7.25% = 3.25% local, CDTFA 9.75% - 7.25% = 2.5%.
    # 90012: 9.75% both: agrees.
    assert "disagreements with imported ZIP tables: 1" in done.stdout
    assert "ZIP 90001 (Los Angeles): CDTFA local 2.5%, TAXRATES_ZIP5_CA202603.csv local 3.25%" in done.stdout
    listed = levy(url, "rates", "list").stdout.splitlines()
    assert listed[0].split("\t")[1:8] == ["cdtfa", "official_zip", "2026-01-01..", "states CA", "0 ZIPs",
                                          "2 records", "0 anomalies"]
    # The address city picks the CDTFA rate over the ZIP table's.
    on = date(2026, 4, 15)
    assert rates_on(url, on, state="CA", postal_code="90001", city="Los Angeles") == (Decimal("0.0975"), "city")
