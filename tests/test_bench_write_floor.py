"""``python -m bench.write_floor`` runs (shape only; figures live in docs/performance.md): every
variant is measured, and the script itself checks that only the real write stored anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RATES = next((p / "shared" / "data" / "rates" / "zip5-2026-03" for p in (ROOT.parent, ROOT.parent.parent)
              if (p / "shared" / "data" / "rates" / "zip5-2026-03").is_dir()), None)
VARIANTS = ("calculation", "not stored", "rows built", "rows, idle 1 ms", "rows, pool checkout", "rows, bare trip", "stored")


@pytest.mark.skipif(RATES is None, reason="the ZIP rate files (../shared/data/rates/zip5-2026-03) are not present")
def test_write_floor_runs_every_variant() -> None:
    r = subprocess.run([sys.executable, "-m", "bench.write_floor", "--requests", "20", "--rounds", "1"],
                       check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    rows = [line.split(" | ") for line in r.stdout.splitlines() if line.startswith("| ") and line[2:3] != "v"]
    names = [row[0].lstrip("| ") for row in rows if not row[0].startswith("|---")]
    assert tuple(names) == VARIANTS, r.stdout
    for row in rows:
        if not row[0].startswith("|---"):
            assert float(row[1]) > 0, row
