"""``levy settings`` and ``levy registrations`` (subprocess) against the same
database as a running server (SQLite and PostgreSQL): what the CLI changes,
the API shows, with the API's validation."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest

from levyserver import ROOT, LevyServer, Tenant, levy_env
from fresh_db import fresh_database_url  # noqa: F401 (fixture)


def levy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), timeout=60)


@pytest.mark.parametrize("cmd, options", [
    (["settings", "show"], ["--organization", "--database-url"]),
    (["settings", "set"], ["--default-tax-codes", "--exemption-management", "--certificate-treatment", "--name",
                           "--filing-currencies", "--organization", "--database-url",
                           "certificate_and_product_tax_code"]),
    (["registrations", "list"], ["--organization", "--database-url"]),
    (["registrations", "add"], ["--jurisdiction", "--number", "--effective-from", "--effective-to", "--organization",
                                "--database-url"]),
    (["registrations", "remove"], ["REGISTRATION_ID", "--organization", "--database-url"]),
])
def test_help_describes_every_option(cmd: list[str], options: list[str]) -> None:
    r = levy(*cmd, "--help")
    assert r.returncode == 0
    for opt in options:
        assert opt in r.stdout, (opt, r.stdout)


def test_cli_settings_show_and_set(server: LevyServer, tenant: Tenant, admin_http: httpx.Client) -> None:
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    r = levy("settings", "show", *org)
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    api = admin_http.get("/organization/settings").json()
    assert {k: v for k, v in shown.items() if k != "updated_at"} == {k: v for k, v in api.items() if k != "updated_at"}

    r = levy("settings", "set", "--default-tax-codes", "SOFTWARE.SAAS.GENERAL, _B2B", "--exemption-management", "off",
             "--certificate-treatment", "certificate_and_product_tax_code", "--name", "CLI Org", *org)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["default_tax_codes"] == ["SOFTWARE.SAAS.GENERAL", "_B2B"]
    api = admin_http.get("/organization/settings").json()
    assert api["default_tax_codes"] == ["SOFTWARE.SAAS.GENERAL", "_B2B"] and api["exemption_management"] is False
    assert api["certificate_treatment"] == "certificate_and_product_tax_code" and api["name"] == "CLI Org"

    r = levy("settings", "set", "--default-tax-codes", "SALES_TAX", "--name", "changed", *org)
    assert r.returncode == 2
    assert "--default-tax-codes[1]: SALES_TAX is not allowed here (it cannot be the organization default)" in r.stderr
    assert admin_http.get("/organization/settings").json()["name"] == "CLI Org"
    # Filing currencies (issue 37): other countries may be set; US returns are in USD.
    r = levy("settings", "set", "--filing-currencies", "GB=GBP, CA=CAD", *org)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["filing_currencies"] == {"CA": "CAD", "GB": "GBP", "US": "USD"}
    assert admin_http.get("/organization/settings").json()["filing_currencies"] == {"CA": "CAD", "GB": "GBP",
                                                                                   "US": "USD"}
    r = levy("settings", "set", "--filing-currencies", "US=EUR", *org)
    assert r.returncode == 2 and "--filing-currencies" in r.stderr and "USD" in r.stderr, r.stderr
    r = levy("settings", "set", "--filing-currencies", "GB", *org)
    assert r.returncode == 2 and "COUNTRY=CURRENCY" in r.stderr
    assert admin_http.get("/organization/settings").json()["filing_currencies"]["GB"] == "GBP"  # nothing changed
    r = levy("settings", "set", *org)
    assert r.returncode == 2 and "nothing to change" in r.stderr
    r = levy("settings", "show", "--organization", "org_nope", "--database-url", server.database_url)
    assert r.returncode == 2 and "no organization org_nope" in r.stderr


def test_cli_registrations(server: LevyServer, tenant: Tenant, other_tenant: Tenant,
                           admin_http: httpx.Client) -> None:
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    r = levy("registrations", "add", "--jurisdiction", "US-ST-CA", "--number", "SR-1", "--effective-from",
             "2024-01-01", "--effective-to", "2024-12-31", *org)
    assert r.returncode == 0, r.stderr
    reg_id = r.stdout.strip()
    assert reg_id.startswith("reg_")
    (api,) = admin_http.get("/organization/registrations").json()["data"]
    assert api["id"] == reg_id and api["registration_number"] == "SR-1" and api["effective_to"] == "2024-12-31"

    r = levy("registrations", "add", "--jurisdiction", "US-ST-CA", "--effective-from", "2024-06-01", *org)
    assert r.returncode == 2 and "overlaps" in r.stderr
    r = levy("registrations", "add", "--jurisdiction", "US-ST-ZZ", "--effective-from", "2024-02-30", *org)
    assert r.returncode == 2
    assert "--jurisdiction: 'US-ST-ZZ'" in r.stderr and "--effective-from: '2024-02-30'" in r.stderr

    lines = levy("registrations", "list", *org).stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["id", "jurisdiction", "registration_number"]
    assert [line.split("\t")[:5] for line in lines[1:]] == [[reg_id, "US-ST-CA", "SR-1", "2024-01-01", "2024-12-31"]]
    other = ["--organization", other_tenant.organization_id, "--database-url", server.database_url]
    assert levy("registrations", "list", *other).stdout.splitlines()[1:] == []
    r = levy("registrations", "remove", reg_id, *other)
    assert r.returncode == 2 and f"No registration '{reg_id}'" in r.stderr

    r = levy("registrations", "remove", reg_id, *org)
    assert r.returncode == 0 and r.stdout.strip() == f"removed {reg_id}"
    assert admin_http.get("/organization/registrations").json()["data"] == []


def test_cli_organization_defaults_to_the_only_one(fresh_database_url: str) -> None:
    url = ["--database-url", fresh_database_url]
    assert levy("migrate", *url).returncode == 0  # no command but migrate creates a database
    r = levy("settings", "show", *url)
    assert r.returncode == 2 and "levy organizations create" in r.stderr
    org_id = levy("organizations", "create", "--name", "Only", *url).stdout.strip()
    shown = json.loads(levy("settings", "show", *url).stdout)
    assert shown["organization_id"] == org_id and shown["name"] == "Only"
    assert shown["default_tax_codes"] == ["GENERAL.TANGIBLE.GOODS"]
    levy("organizations", "create", "--name", "Second", *url)
    r = levy("registrations", "list", *url)
    assert r.returncode == 2 and "--organization" in r.stderr
