"""``levy locations`` (subprocess) against the same database as a running
server (SQLite and PostgreSQL): what the CLI changes, the API shows, with the
API's validation (a US ZIP must lie in its state) and its JSON shape.

ZIP facts used (the ``zipcodes`` directory): 78701 Austin TX, 77002 Houston TX,
90210 Beverly Hills CA."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from levyserver import ROOT, LevyServer, Tenant, levy_env


def levy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), timeout=60)


ADDRESS = ["--line1", "--line2", "--city", "--state", "--postal-code", "--country"]


@pytest.mark.parametrize("cmd, options", [
    (["locations", "create"], ["--name", *ADDRESS, "--default", "--effective-from", "--effective-to",
                               "--organization", "--database-url", "ZIP code"]),
    (["locations", "list"], ["--include-archived", "--organization", "--database-url"]),
    (["locations", "get"], ["LOCATION_ID", "--organization", "--database-url"]),
    (["locations", "update"], ["LOCATION_ID", "--name", *ADDRESS, "--default", "--no-default", "--effective-from",
                               "--effective-to", "--organization", "--database-url"]),
    (["locations", "archive"], ["LOCATION_ID", "--organization", "--database-url"]),
    (["locations", "unarchive"], ["LOCATION_ID", "--organization", "--database-url"]),
])
def test_help_describes_every_option(cmd: list[str], options: list[str]) -> None:
    r = levy(*cmd, "--help")
    assert r.returncode == 0
    for opt in options:
        assert opt in r.stdout, (opt, r.stdout)


def test_cli_locations(server: LevyServer, tenant: Tenant, other_tenant: Tenant, admin_http: httpx.Client) -> None:
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    r = levy("locations", "create", "--name", "Austin HQ", "--line1", "100 Congress Ave", "--line2", "Suite 200",
             "--city", "Austin", "--state", "tx", "--postal-code", "78701", "--default", "--effective-from",
             "2026-01-01", *org)
    assert r.returncode == 0, r.stderr
    hq = json.loads(r.stdout)
    assert hq["id"].startswith("loc_") and hq["is_default"] is True
    # The API's shape, exactly.
    assert admin_http.get(f"/organization/locations/{hq['id']}").json() == hq
    assert hq["address"] == {"line1": "100 Congress Ave", "line2": "Suite 200", "city": "Austin", "state": "TX",
                             "postal_code": "78701", "country": "US"}

    # Every problem at once, each named by its option; nothing stored.
    r = levy("locations", "create", "--name", "Bad", "--line1", "1 Main St", "--city", "Austin", "--state", "TX",
             "--postal-code", "90210", "--effective-from", "2026-01-01", "--effective-to", "2025-01-01", *org)
    assert r.returncode == 2
    assert "levy: --postal-code: The ZIP code 90210 does not lie in Texas (TX)." in r.stderr
    assert "levy: --effective-to: effective_to (2025-01-01) is before effective_from (2026-01-01)." in r.stderr
    assert len(admin_http.get("/organization/locations").json()["data"]) == 1

    r = levy("locations", "create", "--name", "Houston", "--line1", "901 Bagby St", "--city", "Houston", "--state",
             "TX", "--postal-code", "77002", "--effective-from", "2026-01-01", *org)
    assert r.returncode == 0, r.stderr
    houston = json.loads(r.stdout)
    assert houston["is_default"] is False

    # Update: only the options given change (here the default moves, and line2 is cleared).
    r = levy("locations", "update", houston["id"], "--default", "--line2", "", "--effective-to", "2026-12-31", *org)
    assert r.returncode == 0, r.stderr
    moved = json.loads(r.stdout)
    assert moved["is_default"] is True and moved["effective_to"] == "2026-12-31"
    assert moved["address"] == houston["address"] and moved["name"] == "Houston"
    assert admin_http.get(f"/organization/locations/{hq['id']}").json()["is_default"] is False
    r = levy("locations", "update", houston["id"], "--state", "CA", *org)
    assert r.returncode == 2 and "--postal-code: The ZIP code 77002 does not lie in California (CA)." in r.stderr
    r = levy("locations", "update", houston["id"], *org)
    assert r.returncode == 2 and "nothing to change" in r.stderr

    lines = levy("locations", "list", *org).stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["id", "name", "default"]
    assert [line.split("\t") for line in lines[1:]] == [
        [houston["id"], "Houston", "yes", "901 Bagby St", "Houston", "TX", "77002", "US", "2026-01-01", "2026-12-31",
         "-"],
        [hq["id"], "Austin HQ", "no", "100 Congress Ave", "Austin", "TX", "78701", "US", "2026-01-01", "-", "-"],
    ]

    r = levy("locations", "archive", houston["id"], *org)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["archived_at"] is not None and json.loads(r.stdout)["is_default"] is False
    assert [line.split("\t")[0] for line in levy("locations", "list", *org).stdout.splitlines()[1:]] == [hq["id"]]
    assert len(levy("locations", "list", "--include-archived", *org).stdout.splitlines()) == 3
    r = levy("locations", "unarchive", houston["id"], *org)
    assert r.returncode == 0 and json.loads(r.stdout)["archived_at"] is None
    r = levy("locations", "get", houston["id"], *org)
    assert r.returncode == 0 and json.loads(r.stdout) == admin_http.get(
        f"/organization/locations/{houston['id']}").json()

    # Another organization's location is missing for it.
    other = ["--organization", other_tenant.organization_id, "--database-url", server.database_url]
    assert levy("locations", "list", *other).stdout.splitlines()[1:] == []
    for cmd in (["get"], ["archive"], ["update", "--name", "x"]):
        r = levy("locations", cmd[0], houston["id"], *cmd[1:], *other)
        assert r.returncode == 2 and f"No business location '{houston['id']}'" in r.stderr, (cmd, r.stderr)
