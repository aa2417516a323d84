"""Schemathesis over every operation of docs/openapi.json against a live Levy
(SQLite and PostgreSQL), with all its checks, a bounded number of examples,
derandomized (a fixed seed), and the stateful phase over the document's links.

Statuses that the checks do not expect by default are declared in the
document and listed in tests/fuzz/schemathesis.toml with their reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from levyserver import LevyServer, Tenant
from levy.app.registry import methods

HERE = Path(__file__).resolve().parent
MAX_EXAMPLES = os.environ.get("LEVY_FUZZ_EXAMPLES", "25")
# Where the fuzzer's own defect shows in its output (see the test).
_FUZZER_DEFECT = "hypothesis/internal/lambda_sources.py"


def _st() -> str:
    exe = Path(sys.executable).parent / "schemathesis"
    if exe.exists():
        return str(exe)
    found = shutil.which("schemathesis")
    if not found:
        pytest.fail("schemathesis is not installed: scripts/bootstrap installs the dev extra")
    return found


@pytest.mark.parametrize("key_kind", ["admin", "plain"])
def test_schemathesis_all_checks(server: LevyServer, tenant: Tenant, key_kind: str, tmp_path: Path) -> None:
    key = tenant.admin_key if key_kind == "admin" else tenant.key
    cmd = [
        _st(), "--config-file", str(HERE / "schemathesis.toml"), "run", f"{server.http_url}/openapi.json",
        "--header", f"X-API-Key: {key}",
        "--checks", "all",
        # The plain key gets 403 on admin operations: fewer examples suffice.
        "--max-examples", MAX_EXAMPLES if key_kind == "admin" else "10",
        "--seed", "20260101",
        "--workers", "2",
        "--request-timeout", "30",
        "--warnings", "off",
    ]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    if r.returncode != 0 and _FUZZER_DEFECT in out:
        # Once, in CI, generating a case crashed inside Hypothesis while it
        # described a filter lambda of Schemathesis (an error of the fuzzer,
        # before any request): run once more; any check failure still fails.
        r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        out = r.stdout + r.stderr
    assert r.returncode == 0, out[-20000:] + "\n--- server log (tail) ---\n" + server.log()[-5000:]
    # It really ran: every operation of the document was tested.
    n = len(methods())
    assert f"Selected: {n}/{n}" in out and f"Tested: {n}" in out, out[-3000:]
