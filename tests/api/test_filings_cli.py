"""``levy filings``, ``levy reports liability`` and ``levy nexus`` (subprocess) against
the database of a running server (SQLite and PostgreSQL): the CLI prepares and files
what the API then shows, with the API's figures and errors. TX at 6.25% (state only)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import httpx
import pytest

from levyserver import ROOT, LevyServer, Tenant, levy_env
from txn_api import line, register


def levy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), timeout=60)


@pytest.mark.parametrize("cmd, options", [
    (["filings", "prepare"], ["--jurisdiction", "--period-start", "--period-end", "--file", "--organization",
                              "--database-url"]),
    (["filings", "file"], ["FILING_ID", "--organization", "--database-url"]),
    (["filings", "list"], ["--organization", "--database-url"]),
    (["filings", "show"], ["FILING_ID", "--organization", "--database-url"]),
    (["filings", "export"], ["FILING_ID", "--transactions", "--output", "--organization", "--database-url"]),
    (["reports", "liability"], ["--from", "--to", "--organization", "--database-url"]),
    (["nexus"], ["--as-of", "--organization", "--database-url"]),
])
def test_help_describes_every_option(cmd: list[str], options: list[str]) -> None:
    r = levy(*cmd, "--help")
    assert r.returncode == 0
    for opt in options:
        assert opt in r.stdout, (opt, r.stdout)


def _sale(http: httpx.Client, date: str, price: int) -> str:
    r = http.post("/transactions", json={"type": "sale", "status": "finalized", "transaction_date": f"{date}T12:00:00Z",
                                         "line_items": [line("1", price, "TX")]})
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def test_cli_prepare_file_show_export(server: LevyServer, tenant: Tenant, http: httpx.Client,
                                      admin_http: httpx.Client, tmp_path) -> None:  # type: ignore[no-untyped-def]
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    register(admin_http, "TX")
    a = _sale(http, "2026-01-05", 10000)  # 625
    _sale(http, "2026-01-06", 2000)  # 125
    r = levy("filings", "prepare", "--jurisdiction", "US-ST-TX", "--period-start", "2026-01-01",
             "--period-end", "2026-01-31", *org)
    assert r.returncode == 0, r.stderr
    prepared = json.loads(r.stdout)
    assert (prepared["status"], prepared["filing_tax_amount"], prepared["transaction_count"]) == ("prepared", "750", 2)
    assert admin_http.get(f"/filings/{prepared['id']}").json() == prepared

    r = levy("filings", "file", prepared["id"], *org)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["status"] == "filed"
    assert http.get(f"/transactions/{a}").json()["status"] == "filed"
    r = levy("filings", "prepare", "--jurisdiction", "US-ST-TX", "--period-start", "2026-01-10",
             "--period-end", "2026-02-10", "--file", *org)
    assert r.returncode == 2 and prepared["id"] in r.stderr, r.stderr

    r = levy("filings", "show", prepared["id"], *org)
    assert r.returncode == 0 and json.loads(r.stdout) == admin_http.get(f"/filings/{prepared['id']}").json()
    r = levy("filings", "list", *org)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("id\tjurisdiction") and lines[1].split("\t")[:6] == [
        prepared["id"], "US-ST-TX", "2026-01-01", "2026-01-31", "filed", "750"]
    out = tmp_path / "ret.csv"
    r = levy("filings", "export", prepared["id"], "--output", str(out), *org)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == admin_http.get(f"/filings/{prepared['id']}/export").content
    rows = list(csv.DictReader(io.StringIO(out.read_bytes().decode())))
    assert [(x["jurisdiction_code"], x["filing_tax_amount"]) for x in rows] == [("US-ST-TX", "750"), ("TOTAL", "750")]
    # The second file: the return's transactions with their amounts on it (issue 37): 625 and 125.
    r = levy("filings", "export", prepared["id"], "--transactions", *org)
    assert r.returncode == 0, r.stderr
    assert r.stdout.encode() == admin_http.get(f"/filings/{prepared['id']}/export",
                                               params={"file": "transactions"}).content.replace(b"\r\n", b"\n")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(x["transaction_id"], x["filing_tax_amount"]) for x in rows][0] == (a, "625")
    assert [x["filing_tax_amount"] for x in rows] == ["625", "125"]

    r = levy("filings", "show", "fil_00000000000000000000000000", *org)
    assert r.returncode == 2 and "No filing" in r.stderr


def test_cli_reports_and_nexus(server: LevyServer, tenant: Tenant, http: httpx.Client,
                               admin_http: httpx.Client) -> None:
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    _sale(http, "2026-01-05", 60_000_000)  # TX $600,000 (not registered): crosses $500,000
    r = levy("reports", "liability", "--from", "2026-01-01", "--to", "2026-01-31", *org)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == admin_http.get("/reports/liability",
                                                   params={"from": "2026-01-01", "to": "2026-01-31"}).json()
    r = levy("nexus", "--as-of", "2026-02-01", *org)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep == admin_http.get("/nexus", params={"as_of": "2026-02-01"}).json()
    assert rep["states"][0]["state"] == "TX" and rep["states"][0]["crossed_on"] == "2026-01-05"
    r = levy("reports", "liability", "--from", "2026-02-01", "--to", "2026-01-01", *org)
    assert r.returncode == 2 and "after" in r.stderr
