"""``levy rates import`` (issues 30 point 9 and 31), on SQLite and PostgreSQL, with small files written here in
the official layouts: files it cannot read fail with exit 2 and the file and line (never a traceback, nothing
stored, no NUL kept); a per-ZIP row with no state rate or whose parts do not add up is an anomaly, not applied,
and ``--strict`` refuses it; an official county rate that includes the table's special district replaces both
and the report says so."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from test_cli_rates import levy, rates_on, write

HEADER = ("State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,"
          "EstimatedSpecialRate,RiskLevel\n")


def nothing_stored(url: str) -> bool:
    return levy(url, "rates", "list").stdout.strip() == "no rate imports"


def test_files_it_cannot_read_fail_with_exit_2_and_the_file_and_line(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    cases = {
        # An SST boundary record without its rate file (first cell a record type).
        "MNB2026Q2TEST.csv": ("z,20260401,29991231" + "," * 86 + "\n",
                              ("MNB2026Q2TEST.csv: an SST boundary file (its first cell is a record type: z, 4 or a) "
                               "is imported with its rate file, which is missing")),
        "latin1/TAXRATES_ZIP5_TX202603.csv": (HEADER + "TX,75001,ADDISON \xe9,0.0825,0.0625,0.01,0.01,0,0\n",
                                              "TAXRATES_ZIP5_TX202603.csv:2: not UTF-8 (byte 0xe9)"),
        "long/TAXRATES_ZIP5_TX202603.csv": (HEADER  # 9 + 140,000 + 28 characters
                                             + "TX,75001," + "A" * 140_000 + ",0.0825,0.0625,0.01,0.01,0,0\n",
                                            ("TAXRATES_ZIP5_TX202603.csv:2: a line of 140,037 characters, over the "
                                             "131,072 a CSV field may have")),
        # A quoted field running over 140 lines of 1,000 characters: every line short, the field too long.
        "quoted/TAXRATES_ZIP5_TX202603.csv": (HEADER + 'TX,75001,"' + "\n".join(["A" * 1000] * 140)
                                              + '",0.0825,0.0625,0.01,0.01,0,0\n',
                                              ("TAXRATES_ZIP5_TX202603.csv: not a readable CSV file: field larger "
                                               "than field limit (131072)")),
        "nul/TAXRATES_ZIP5_TX202603.csv": (HEADER + "TX,75001,ADD\0ISON,0.0825,0.0625,0.01,0.01,0,0\n",
                                           "TAXRATES_ZIP5_TX202603.csv:2: a NUL byte"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(text.encode("latin-1"))
        done = levy(url, "rates", "import", "--no-progress", str(path))
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        assert message in done.stderr and "nothing imported" in done.stderr, (name, done.stderr)
        assert "Traceback" not in done.stderr and "file(s) imported" not in done.stdout
    assert nothing_stored(url)


NM_TABLE = HEADER + (
    "NM,87101,ALBUQUERQUE,0.07625,0.04875,0.0,0.02750,0.0,0\n"  # 4.875 + 2.75 = 7.625: kept
    "NM,87014,CIBOLA,0.08,0.0,0.0,0.08,0.0,0\n"  # no state rate: an anomaly, not applied
    "NM,87102,ALBUQUERQUE,0.09,0.04875,0.0,0.02750,0.0,0\n"  # 4.875 + 2.75 = 7.625, not 9: an anomaly
)


def test_rows_with_no_state_rate_or_parts_not_adding_up_are_anomalies(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    [f] = write(tmp_path, {"TAXRATES_ZIP5_NM202603.csv": NM_TABLE})
    done = levy(url, "rates", "import", "--no-progress", "--strict", f)
    assert done.returncode == 1 and "--strict: anomalies in TAXRATES_ZIP5_NM202603.csv" in done.stderr
    assert nothing_stored(url)
    assert "  anomalies: 2" in done.stdout.splitlines()
    assert ("    no_state_rate: line 3: NM ZIP 87014: CIBOLA: no state rate (combined 8%) where the NM state rate is "
            "4.875%: row not applied") in done.stdout
    assert ("    components_not_summing: line 4: NM ZIP 87102: ALBUQUERQUE: state 4.875% + county 0% + city 2.75% + "
            "special 0% = 7.625%, not the combined rate 9%: row not applied") in done.stdout

    done = levy(url, "rates", "import", "--no-progress", f)
    assert done.returncode == 0, done.stderr
    assert "TAXRATES_ZIP5_NM202603.csv: imported 1 rows" in done.stdout
    assert "1 file(s) imported (1 records), 0 already imported; 2 anomalies need attention (listed above)" in done.stdout
    on = date(2026, 3, 15)
    assert rates_on(url, on, state="NM", postal_code="87101") == (Decimal("0.07625"), "zip5")
    # Not applied: the state's 4.875% alone (never 4.875% + 8% = 12.875%), and the ZIP says its local rates are missing.
    assert rates_on(url, on, state="NM", postal_code="87014") == (Decimal("0.04875"), "state")


GA_TABLE = HEADER + (
    "GA,30901,AUGUSTA,0.085000,0.040000,0.035000,0.000000,0.010000,0\n"
    "GA,30303,ATLANTA,0.089000,0.040000,0.030000,0.015000,0.004000,0\n"
    "NC,28607,WILKES,0.070000,0.047500,0.022500,0.000000,0.000000,0\n"
)
GA_SST = """13,45,13,0.04,0.04,0,0,20110101,29991231
13,00,245,0.045,0.045,0.045,0.045,20240401,29991231
13,00,121,0.03,0.03,0.03,0.03,20110101,29991231
"""


def test_an_official_county_rate_replaces_the_special_district_it_includes(
    fresh_database_url: str, tmp_path: Path  # noqa: F811
) -> None:
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    paths = write(tmp_path, {"TAXRATES_ZIP5_GA202603.csv": GA_TABLE, "GAR2026Q2TEST.csv": GA_SST})
    done = levy(url, "rates", "import", "--no-progress", "--strict", *paths)
    assert done.returncode == 0, done.stdout + done.stderr
    # 245 is Richmond County (30901): 4.5% = the table's county 3.5% + special 1% on the table's date; 121 Fulton
    # (30303): 3% = the table's county alone, so Atlanta's 0.4% district stays.
    assert "  replaced (an official level includes what the lower-ranked record lists apart): 1 ZIPs" in done.stdout
    assert ("    ZIP 30901: county Richmond County 4.5% (GAR2026Q2TEST.csv line 2) replaces county Richmond County "
            "3.5% + special Augusta special district 1% (TAXRATES_ZIP5_GA202603.csv line 2; equal on 2026-03-01)"
            ) in done.stdout.splitlines()
    on = date(2026, 4, 15)
    assert rates_on(url, on, state="GA", postal_code="30901") == (Decimal("0.085"), "zip5")  # 4 + 4.5, not 9.5
    assert rates_on(url, on, state="GA", postal_code="30303") == (Decimal("0.089"), "zip5")  # 4 + 3 + 1.5 + 0.4
    listed = levy(url, "rates", "list").stdout
    assert "  replaced: ZIP 30901: county Richmond County 4.5%" in listed


MN_RATES = "27,45,27,0.06875,0.06875,0,0,20080701,29991231\n27,00,053,0.0015,0.0015,0,0,20160101,29991231\n"
# A 'z' record (SST boundary layout: 0 type, 1 begin, 2 end, 17 ZIP low, 19 ZIP high, 22 state FIPS, 24 county
# FIPS), 29 columns: ZIP 55401 in Hennepin County (053) from 2016-04-01 to 2019-03-31, like the shared MN sample.
MN_BOUNDARY = "z,20160401,20190331" + "," * 14 + ",55401,,55401,,,27,27,053,,,,\n"


def test_an_sst_import_says_when_its_records_are_in_force(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    rate, _ = write(tmp_path, {"MNR2026Q2TEST.csv": MN_RATES, "MNB2026Q2TEST.csv": MN_BOUNDARY})
    assert len(MN_BOUNDARY.rstrip("\n").split(",")) == 29
    done = levy(url, "rates", "import", "--no-progress", rate)  # the boundary file found beside it (MNB...)
    assert done.returncode == 0, done.stdout + done.stderr
    # The report's window (the record's 2016-04-01..2019-03-31) and the import's label (the 2026Q2 quarter) agree.
    assert "effective 2016-04-01..2019-03-31" in done.stdout
    assert (f"{rate}: imported 1 rows (sst, labelled 2026-04-01 by its quarter; its records are in force "
            "2016-04-01..2019-03-31, none on that day)") in done.stdout.splitlines()
    # 2018-06-01: 6.875% state + Hennepin 0.15%.
    assert rates_on(url, date(2018, 6, 1), state="MN", postal_code="55401") == (Decimal("0.07025"), "zip5")
