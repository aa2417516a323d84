"""The CLI contract: help for every command and option; keys create prints one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from levyserver import ROOT, levy_env
from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from shared_data import ZIP5_DIR


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
    assert levy("migrate", "--database-url", url).returncode == 0  # no command but migrate creates a database
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


# ------------------------------------------------------------------ issue 16: no database is created by accident

_VALUES = {"--name": "x", "--jurisdiction": "US-ST-TX", "--effective-from": "2026-01-01", "--type": "resale",
           "--organization": "org_x", "--period-start": "2026-01-01", "--period-end": "2026-01-31",
           "--from": "2026-01-01", "--to": "2026-01-31", "status": "valid", "--line1": "1 Main St",
           "--city": "Austin", "--email": "someone@example.com", "--role": "admin"}
# Beyond the required arguments: what a command checks before it opens the database.
_EXTRA = {("settings", "set"): ["--name", "x"], ("rates", "import"): [], ("locations", "update"): ["--name", "x"]}


def _commands() -> list[list[str]]:
    """Every leaf command of the parser but serve and migrate, with its required arguments."""
    import argparse

    from levy.cli import build_parser

    out: list[list[str]] = []

    def walk(p: argparse.ArgumentParser, prefix: list[str]) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if subs:
            for name, sp in subs[0].choices.items():
                walk(sp, [*prefix, name])
            return
        argv = list(prefix)
        for a in p._actions:
            if not a.option_strings and a.dest != "help":
                argv.append(_VALUES.get(a.dest, "x"))
            elif a.required:
                argv += [a.option_strings[0], _VALUES[a.option_strings[0]]]
        out.append(argv + _EXTRA.get(tuple(prefix), []))  # type: ignore[arg-type]

    walk(build_parser(), [])
    # holidays reads built-in data only, no database (tests/test_cli_holidays.py checks it creates none).
    return [c for c in out if c[0] not in ("serve", "migrate", "holidays")]


COMMANDS = _commands()


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_commands_refuse_to_create_a_database(argv: list[str], tmp_path: Path) -> None:
    # Run from a directory without ./levy.db, the default URL; before, each created an empty one there.
    if argv[:2] == ["rates", "import"]:  # a rate file that parses (it is read before the database)
        if not ZIP5_DIR.is_dir():
            pytest.skip(f"rate files absent: {ZIP5_DIR}")
        argv = [*argv[:2], str(ZIP5_DIR / "TAXRATES_ZIP5_RI202603.csv")]
    env = {k: v for k, v in levy_env().items() if k != "LEVY_DATABASE_URL"}
    r = subprocess.run([sys.executable, "-m", "levy", *argv], cwd=tmp_path, capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2, (argv, r.stdout, r.stderr)
    assert r.stderr == f"levy: no Levy database at {tmp_path.resolve()}/levy.db; run levy migrate or pass " \
                       "--database-url\n", (argv, r.stderr)
    assert r.stdout == "" and list(tmp_path.iterdir()) == []


def test_migrate_creates_the_database_and_commands_use_it(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/sub/levy.db"
    (tmp_path / "sub").mkdir()
    r = levy("keys", "list", "--database-url", url)
    assert r.returncode == 2 and f"no Levy database at {tmp_path.resolve()}/sub/levy.db" in r.stderr
    assert levy("migrate", "--database-url", url).returncode == 0
    r = levy("organizations", "list", "--database-url", url)
    assert r.returncode == 0, r.stderr


# ------------------------------------------------------------------ issue 16: output cut short


@pytest.mark.parametrize("argv", [["rates", "list"], ["organizations", "list"], ["keys", "list"]])
def test_output_cut_short_exits_quietly(argv: list[str], fresh_database_url: str) -> None:
    url = fresh_database_url
    assert levy("migrate", "--database-url", url).returncode == 0
    for i in range(3):
        levy("organizations", "create", "--name", f"org {i}", "--database-url", url)
    # The reader is gone before levy writes (as `levy ... | head -0`): before the fix, a BrokenPipeError traceback.
    p = subprocess.Popen([sys.executable, "-m", "levy", *argv, "--database-url", url], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=levy_env())
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141  # 128 + SIGPIPE, as a command killed by SIGPIPE
    assert err == "", err
