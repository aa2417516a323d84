"""The console's settings, each on its own ``levy serve`` (SQLite): sign-in
throttling per account and per address, Secure cookies, the console turned off;
and ``levy users`` on the command line."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from consolekit import PASSWORD, ConsoleClient, create_user
from levyserver import ROOT, LevyServer, create_tenant, fresh_database, levy_env, start_server


@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database("sqlite", tmp_path_factory.mktemp("consoledb")) as url:
        yield url


def serve(url: str, tmp_path: Path, **env: str) -> LevyServer:
    return start_server(url, tmp_path, extra_env=env)


def test_sign_in_is_throttled_per_account_and_per_address(sqlite_url: str, tmp_path: Path) -> None:
    # 3 attempts a minute per account, 5 per address (the defaults are 5 and 20).
    srv = serve(sqlite_url, tmp_path, LEVY_CONSOLE_SIGN_IN_PER_ACCOUNT_PER_MINUTE="3",
                LEVY_CONSOLE_SIGN_IN_PER_ADDRESS_PER_MINUTE="5")
    try:
        org = create_tenant(sqlite_url).organization_id
        victim, _ = create_user(sqlite_url, org)
        other, _ = create_user(sqlite_url, org)
        c = ConsoleClient(srv.http_url)
        assert [c.sign_in(victim, "guess number one").status_code for _ in range(3)] == [401, 401, 401]
        r = c.sign_in(victim, PASSWORD)  # the right password is refused too while throttled
        assert r.status_code == 429 and "Too many sign-in attempts for this account" in r.text
        assert int(r.headers["retry-after"]) >= 1
        # Another account from the same address: 5th attempt of this address passes, the 6th does not.
        assert c.sign_in(other, PASSWORD).status_code == 303
        r = ConsoleClient(srv.http_url).sign_in(other, PASSWORD)
        assert r.status_code == 429 and "for this address" in r.text
    finally:
        assert srv.stop() == 0


def test_secure_cookies_when_configured(sqlite_url: str, tmp_path: Path) -> None:
    srv = serve(sqlite_url, tmp_path, LEVY_CONSOLE_SECURE_COOKIES="true", LEVY_CONSOLE_SESSION_HOURS="1")
    try:
        address, password = create_user(sqlite_url, create_tenant(sqlite_url).organization_id)
        with httpx.Client(base_url=srv.http_url + "/console") as c:
            page = c.get("/sign-in")
            assert "; Secure" in page.headers["set-cookie"]
            token = page.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
            # httpx keeps Secure cookies for https only: send the double-submit cookie by hand.
            r = c.post("/sign-in", data={"csrf_token": token, "email": address, "password": password},
                       headers={"cookie": f"levy_signin_csrf={token}"})
            assert r.status_code == 303
            cookie = r.headers["set-cookie"]
            assert "; Secure" in cookie and "HttpOnly" in cookie and "Max-Age=3600" in cookie
    finally:
        assert srv.stop() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_console_can_be_turned_off(sqlite_url: str, tmp_path: Path, how: str) -> None:
    srv = (start_server(sqlite_url, tmp_path, args=["--no-console"]) if how == "flag"
           else serve(sqlite_url, tmp_path, LEVY_CONSOLE="false"))
    try:
        r = httpx.get(srv.http_url + "/console/sign-in")
        assert r.status_code == 404 and r.headers["content-type"].startswith("application/")  # the API's 404
        assert httpx.get(srv.http_url + "/healthz").status_code == 200
    finally:
        assert srv.stop() == 0


def levy(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), input=stdin, timeout=120)


def test_levy_users_create_prints_a_one_time_password(sqlite_url: str, tmp_path: Path) -> None:
    org = create_tenant(sqlite_url).organization_id
    address = "First.Admin@Example.com"
    r = levy("users", "create", "--email", address, "--role", "admin", "--organization", org,
             "--database-url", sqlite_url)
    assert r.returncode == 0, r.stderr
    one_time = r.stdout.strip()
    assert len(one_time) == 20 and "\n" not in one_time
    listed = levy("users", "list", "--organization", org, "--database-url", sqlite_url)
    assert listed.returncode == 0 and "\tfirst.admin@example.com\tadmin" in listed.stdout
    again = levy("users", "create", "--email", address, "--role", "member", "--organization", org,
                 "--database-url", sqlite_url)
    assert again.returncode == 2 and "exists" in again.stderr
    bad = levy("users", "create", "--email", "nobody", "--role", "admin", "--organization", org,
               "--database-url", sqlite_url)
    assert bad.returncode == 2 and "--email: Enter an email address" in bad.stderr
    srv = serve(sqlite_url, tmp_path)
    try:
        c = ConsoleClient(srv.http_url)
        assert c.sign_in(address, one_time).headers["location"] == "/console/password"
        # The operator's reset (read from the terminal, here stdin) ends the user's sessions.
        new = "a brand new passphrase"
        reset = levy("users", "set-password", "--email", address, "--organization", org, "--database-url",
                     sqlite_url, stdin=f"{new}\n{new}\n")
        assert reset.returncode == 0, reset.stderr
        assert c.get("/password").status_code == 303
        assert c.sign_in(address, one_time).status_code == 401
        assert c.sign_in(address, new).headers["location"] == "/console/"  # no change demanded
        differ = levy("users", "set-password", "--email", address, "--organization", org, "--database-url",
                      sqlite_url, stdin="one passphrase here\nanother one here\n")
        assert differ.returncode == 2 and "the two passwords differ" in differ.stderr
        missing = levy("users", "set-password", "--email", "nobody@example.com", "--organization", org,
                       "--database-url", sqlite_url, stdin=f"{new}\n{new}\n")
        assert missing.returncode == 2 and "No console user nobody@example.com" in missing.stderr
        c.close()
    finally:
        assert srv.stop() == 0
