"""``levy holidays`` (issue 31): the built-in sales tax holidays listed and filtered, no database needed;
``levy rates --help`` points to it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from levyserver import ROOT, levy_env


def levy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=cwd, capture_output=True, text=True,
                          env=levy_env(), timeout=60)


def test_needs_no_database_and_creates_none(tmp_path: Path) -> None:
    r = levy("holidays", "--state", "FL", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "" and "FL  2025-08-01 .. 2025-08-31" in r.stdout
    assert list(tmp_path.iterdir()) == []


def test_help_describes_every_option() -> None:
    r = levy("holidays", "--help")
    assert r.returncode == 0
    for opt in ("--state", "--year", "--on", "--json", "--not-included", "opt out"):
        assert opt in r.stdout, opt
    assert "levy holidays" in levy("rates", "--help").stdout
    assert "holidays" in levy("--help").stdout


def test_texas_2026_in_words() -> None:
    r = levy("holidays", "--state", "tx", "--year", "2026")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    # Tex. Tax Code 151.326: the first Friday in August 2026 (Aug. 7) to the Sunday.
    assert lines[0] == "TX  2026-08-07 .. 2026-08-09  Texas sales tax holiday 2026 (state and local)"
    assert "    clothing and footwear, under $100 per item: CLOTHING.APPAREL, " in r.stdout
    assert "151.326" in r.stdout and "2025" not in lines[0]


def test_on_a_day_as_json() -> None:
    r = levy("holidays", "--on", "2026-08-08", "--json")
    assert r.returncode == 0, r.stderr
    found = [json.loads(ln) for ln in r.stdout.splitlines()]
    # On 2026-08-08: Texas, Missouri, Oklahoma, South Carolina and Virginia (Aug. 7-9, the first Friday in
    # August to Sunday), Florida (all August); Tennessee and West Virginia ended Aug. 2 and 3, Maryland starts
    # Aug. 9, Connecticut Aug. 16.
    assert sorted(h["state"] for h in found) == ["FL", "MO", "OK", "SC", "TX", "VA"]
    fl = next(h for h in found if h["state"] == "FL")
    assert {"limit": 10000, "limit_mode": "at_or_below", "per": "item"}.items() <= fl["items"][0].items()
    assert fl["levels"] == "state_and_local" and fl["source_url"].startswith("https://floridarevenue.com/")


def test_local_opt_outs_and_state_only_levels_are_shown() -> None:
    mo = levy("holidays", "--state", "MO", "--year", "2020").stdout
    assert "opted out: US-CI-MO-COLUMBIA" in mo
    al = levy("holidays", "--state", "AL", "--year", "2025").stdout
    assert "(state only)" in al and "at or below $100 per item" in al


def test_nothing_matches_and_what_was_left_out() -> None:
    r = levy("holidays", "--state", "NY")
    assert r.returncode == 0 and r.stdout.strip() == "no sales tax holiday matches"
    left = levy("holidays", "--not-included", "--state", "IA").stdout
    assert left.startswith("IA  ") and "not confirmed" in left
