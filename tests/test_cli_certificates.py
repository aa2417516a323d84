"""``levy certificates``: help for every option, and the commands against a real database."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from levyserver import ROOT, levy_env
from fresh_db import fresh_database_url  # noqa: F401 (fixture)


def levy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), timeout=60)


@pytest.mark.parametrize(
    "cmd, options",
    [
        (["certificates"], ["list", "add", "set-status", "remove"]),
        (["certificates", "list"], ["CUSTOMER_ID", "--organization", "--database-url"]),
        (["certificates", "add"], ["CUSTOMER_ID", "--jurisdiction", "--type", "--status", "--starts-at",
                                   "--expires-at", "--organization", "--database-url"]),
        (["certificates", "set-status"], ["CUSTOMER_ID", "CERTIFICATE_ID", "STATUS", "--organization",
                                          "--database-url"]),
        (["certificates", "remove"], ["CUSTOMER_ID", "CERTIFICATE_ID", "--organization", "--database-url"]),
    ],
)
def test_help_describes_every_option(cmd: list[str], options: list[str]) -> None:
    r = levy(*cmd, "--help")
    assert r.returncode == 0
    for opt in options:
        assert opt in r.stdout, (opt, r.stdout)


async def _customer(url: str, org: str) -> str:
    from levy.app.customers import create_customer
    from levy.store.db import create_engine, transaction

    engine = create_engine(url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:
            rec = await create_customer(conn, org, {"source": "native", "source_account_id": "__default__",
                                                    "source_id": "cli-1"})
    finally:
        await engine.dispose()
    return rec.id


def test_certificates_commands(fresh_database_url: str) -> None:
    url = fresh_database_url
    assert levy("migrate", "--database-url", url).returncode == 0  # no command but migrate creates a database
    org = levy("organizations", "create", "--name", "cli", "--database-url", url).stdout.strip()
    other = levy("organizations", "create", "--name", "other", "--database-url", url).stdout.strip()
    cid = asyncio.run(_customer(url, org))
    db = ["--organization", org, "--database-url", url]
    r = levy("certificates", "add", cid, "--jurisdiction", "US-ST-CA", "--type", "resale", "--expires-at",
             "2030-01-01", *db)
    assert r.returncode == 0, r.stderr
    header, line = r.stdout.splitlines()
    fields = line.split("\t")
    cert_id = fields[0]
    assert cert_id.startswith("cexc_") and fields[1:7] == [cid, "US-ST-CA", "resale", "in_review", "-", "2030-01-01"]
    r = levy("certificates", "add", cid, "--jurisdiction", "US-ST-QQ", "--type", "resale", *db)
    assert r.returncode == 2 and "not a US state" in r.stderr
    r = levy("certificates", "set-status", cid, cert_id, "valid", *db)
    assert r.returncode == 0 and r.stdout.splitlines()[1].split("\t")[4] == "valid"
    listing = levy("certificates", "list", cid, *db).stdout.splitlines()
    assert len(listing) == 2 and listing[1].startswith(cert_id)
    # Another organization cannot see or change it.
    r = levy("certificates", "list", cid, "--organization", other, "--database-url", url)
    assert r.returncode == 2 and "No customer" in r.stderr
    assert levy("certificates", "remove", cid, cert_id, *db).returncode == 0
    assert levy("certificates", "list", cid, *db).stdout.splitlines() == [header]
    assert levy("certificates", "remove", cid, cert_id, *db).returncode == 2
