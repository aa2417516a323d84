"""``python -m bench.fast_paths`` runs (shape only; figures live in docs/performance.md): each
fast path gives the same answer as its plain twin (the script asserts it) and is timed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_fast_paths_bench_runs() -> None:
    r = subprocess.run([sys.executable, "-m", "bench.fast_paths", "--repeat", "1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line for line in r.stdout.splitlines() if line.endswith("x")]
    assert len(rows) == 3, r.stdout
