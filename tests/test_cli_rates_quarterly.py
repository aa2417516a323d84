"""`levy rates import` of the quarterly SST files as published (issue 33): zip
archives of rate and boundary files of several states in one command, a
boundary file without its rate file refused, and a second quarter's changes."""

from __future__ import annotations

import zipfile
from pathlib import Path

from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from test_cli_rates import levy

from bench import sst_synthetic


def _zipped(folder: Path, *files: Path) -> list[Path]:
    """Each file in a zip archive of its own, named like it (MNR2026Q2SYN.zip), as the SST site publishes them."""
    out = []
    for f in files:
        archive = folder / f"{f.stem}.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.write(f, f.name)
        f.unlink()
        out.append(archive)
    return out


def test_two_states_zipped_then_a_second_quarter_reports_its_changes(fresh_database_url: str,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    q2 = tmp_path / "q2"
    mn = sst_synthetic.write(q2, 100, 100, state="MN")
    wi = sst_synthetic.write(q2, 50, 50, state="WI")
    archives = _zipped(q2, *mn, *wi)
    # Any order: WI's boundary archive first, MN's rate archive last.
    done = levy(url, "rates", "import", "--no-progress", str(archives[3]), str(archives[1]), str(archives[2]),
                str(archives[0]))
    assert done.returncode == 0, done.stdout + done.stderr
    # 100 ZIP+4 + 100 address records (MN), 50 + 50 (WI): one record each (one ZIP per range), and a ZIP
    # candidate per county of each ZIP: MN ZIPs 55001 and 55002 (i // 50; address pairs k // 25, k < 50), WI
    # 53001 only, each in counties 053 and 025: 4 + 2. MN 204, WI 102.
    assert "MNR2026Q2SYN.zip/MNR2026Q2SYN.csv: imported 204 rows (sst" in done.stdout, done.stdout
    assert "WIR2026Q2SYN.zip/WIR2026Q2SYN.csv: imported 102 rows (sst" in done.stdout, done.stdout
    assert "2 file(s) imported (306 records)" in done.stdout
    assert "changes since" not in done.stdout  # each state's first import

    # The second quarter, as a folder: 20 ZIP+4 records fewer (i = 80..99 gone), 20 address records more
    # (i = 100..119: pairs 50..59), and county 025 at 0.75% instead of 0.5%. Kept records in county 025:
    # the odd ZIP+4 records below 80 (40) and the even-side address records below 100 (50): 90 changed.
    q3 = tmp_path / "q3"
    sst_synthetic.write(q3, 80, 120, quarter="2026Q3", state="MN", rates={"053": "0.0015", "025": "0.0075"})
    checked = levy(url, "rates", "import", "--no-progress", "--dry-run", str(q3))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "MN since MNR2026Q2SYN.csv: 20 records added, 20 removed, 90 with other jurisdictions or rates; " \
           "1 rates changed" in checked.stdout, checked.stdout
    assert "(27-00-025): 0.5% -> 0.75%" in checked.stdout
    # 80 + 120 records, and 2 county candidates for each of 55001, 55002, 55003 (address pairs 50..59): 206.
    assert "would import 206 rows" in checked.stdout and "--dry-run: nothing stored" in checked.stdout
    listed = levy(url, "rates", "list").stdout
    assert "2026Q3" not in listed  # the dry run stored nothing

    done = levy(url, "rates", "import", "--no-progress", str(q3))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "20 records added, 20 removed, 90 with other jurisdictions or rates" in done.stdout
    assert "MNR2026Q3SYN.csv: imported 206 rows" in done.stdout
    assert "MNR2026Q3SYN.csv" in levy(url, "rates", "list").stdout


def test_a_boundary_file_without_its_rate_file_is_refused(fresh_database_url: str, tmp_path: Path) -> None:  # noqa: F811
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    rates, bounds = sst_synthetic.write(tmp_path / "one", 10, 10, state="MN")
    wi_rates, wi_bounds = sst_synthetic.write(tmp_path / "two", 10, 10, state="WI")
    # The WI pair is complete; MN's boundary file (zipped) comes without MNR2026Q2SYN.csv.
    rates.unlink()
    (archive,) = _zipped(tmp_path / "one", bounds)
    done = levy(url, "rates", "import", "--no-progress", str(archive), str(wi_rates), str(wi_bounds))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "MNB2026Q2SYN.csv: an SST boundary file" in done.stderr
    assert "which is missing: MNR2026Q2SYN.csv" in done.stderr and "nothing imported" in done.stderr
    assert levy(url, "rates", "list").stdout.strip() == "no rate imports"
