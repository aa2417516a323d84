"""Smoke test of the bulk-import scenario (issue 20): ``python -m bench --quick --only bulk_import`` imports
2,000 transactions with ``levy transactions import`` and measures the raw insert of the same rows; the JSON
has every figure. It checks the shape, never the speed (the targets live in bench/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_bench_smoke import RATES, ROOT


@pytest.mark.skipif(RATES is None, reason="the ZIP rate files (../shared/data/rates/zip5-2026-03) are not present")
def test_bench_bulk_import_quick(tmp_path: Path) -> None:
    out = tmp_path / "result"
    p = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "bulk_import", "--out", str(out)],
                       check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    sc = json.loads(Path(f"{out}.json").read_text())["scenarios"]["bulk_import"]
    assert "error" not in sc, sc
    assert isinstance(sc["passed"], bool) and sc["target"] == "< 60 s and >= 0.5 x raw insert rate"
    figs = sc["figures"]
    for name in ("seconds", "transactions_per_s", "raw_insert_seconds", "raw_transactions_per_s", "ratio",
                 "cpu_seconds", "raw_insert_cpu_seconds", "cpu_ratio", "load_1min"):
        assert figs[name]["n"] == 1, name
    assert figs["seconds"]["median"] > 0 and figs["raw_insert_seconds"]["median"] > 0
    assert sc["value"] == figs["ratio"]["median"]
    assert "2,000 finalized 3-line sales" in sc["load"]
