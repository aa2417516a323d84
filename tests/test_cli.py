"""The CLI contract: help for every command and option; keys create prints one line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from levyserver import ROOT, levy_env
from fresh_db import fresh_database_url  # noqa: F401 (fixture)


def levy(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(**env), timeout=60)


@pytest.mark.parametrize(
    "cmd, options",
    [
        ([], ["serve", "migrate", "keys", "organizations", "--log-level"]),
        (["serve"], ["--database-url", "--grpc-address", "--http-address", "--shutdown-grace-seconds",
                     "--shutdown-drain-seconds", "--no-reflection", "--event-loop", "LEVY_DATABASE_URL",
                     "LEVY_GRPC_ADDRESS", "LEVY_HTTP_ADDRESS", "LEVY_EVENT_LOOP"]),
        (["migrate"], ["--database-url"]),
        (["keys", "create"], ["--name", "--organization", "--admin", "--database-url"]),
        (["keys", "list"], ["--organization", "--database-url"]),
        (["keys", "revoke"], ["KEY_ID", "--database-url"]),
    ],
)
def test_help_describes_every_option(cmd: list[str], options: list[str]) -> None:
    r = levy(*cmd, "--help")
    assert r.returncode == 0
    for opt in options:
        assert opt in r.stdout, (opt, r.stdout)


def test_serve_refuses_an_unknown_event_loop(fresh_database_url: str) -> None:
    r = levy("serve", "--database-url", fresh_database_url, LEVY_EVENT_LOOP="bogus")
    assert r.returncode == 2
    assert "unknown event loop 'bogus'" in r.stderr


def test_keys_create_prints_only_the_secret(fresh_database_url: str) -> None:
    url = fresh_database_url
    r = levy("keys", "create", "--name", "ci", "--admin", "--database-url", url)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("levy_sk_") and len(lines[0]) == 51
    # The same organization is reused while it is the only one.
    r2 = levy("keys", "create", "--name", "ci2", database_url=url, LEVY_DATABASE_URL=url)
    assert r2.returncode == 0
    listing = levy("keys", "list", "--database-url", url).stdout.splitlines()
    assert len(listing) == 3
    orgs = {line.split("\t")[1] for line in listing[1:]}
    assert len(orgs) == 1
    # Several organizations: --organization becomes required.
    levy("organizations", "create", "--name", "second", "--database-url", url)
    r3 = levy("keys", "create", "--name", "x", "--database-url", url)
    assert r3.returncode == 2 and "--organization" in r3.stderr
    key_id = listing[1].split("\t")[0]
    assert levy("keys", "revoke", key_id, "--database-url", url).returncode == 0
    rows = {line.split("\t")[0]: line.split("\t") for line in levy("keys", "list", "--database-url", url).stdout.splitlines()[1:]}
    assert rows[key_id][7] != "-"  # revoked_at is set
    assert all(r[7] == "-" for k, r in rows.items() if k != key_id)
