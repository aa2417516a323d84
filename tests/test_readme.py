"""The README's "Try it" runs as written: its shell blocks, in order, in one bash
(the Python snippet is one of them, run by .venv/bin/python), against
./scripts/run. Only what a shared test machine needs is changed: free ports
instead of 8080/50051 (passed to scripts/run, which hands its flags to
`levy serve`), a temporary database (LEVY_DATABASE_URL) and log, the rate files
where this machine keeps them, and grpcurl left out when it is not installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from levyserver import ROOT, free_port, levy_env
from shared_data import ZIP5_DIR


def _try_it_script() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Try it"):readme.index("\n## ", readme.index("## Try it") + 1)]
    return "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))


def test_readme_try_it_runs_and_shows_tax(tmp_path: Path) -> None:
    if not ZIP5_DIR.is_dir():
        pytest.skip(f"the per-ZIP rate files are not at {ZIP5_DIR}")
    script = _try_it_script()
    http, grpc_ = free_port(), free_port()
    for old, new in [
        ("127.0.0.1:8080", f"127.0.0.1:{http}"),
        ("127.0.0.1:50051", f"127.0.0.1:{grpc_}"),
        ("./scripts/run >", f"./scripts/run --http-address 127.0.0.1:{http} --grpc-address 127.0.0.1:{grpc_} >"),
        ("> levy.log", f"> {tmp_path}/levy.log"),
        ("../shared/data/rates/zip5-2026-03", str(ZIP5_DIR)),
    ]:
        assert old in script, old
        script = script.replace(old, new)
    if not shutil.which("grpcurl"):
        script = re.sub(r"grpcurl [^\n]*\\\n[^\n]*\n", "", script)
    env = levy_env(LEVY_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/levy.db")
    for k in ("LEVY_WORKERS", "LEVY_RATE_LIMIT_PER_SECOND", "LEVY_RATE_LIMIT_BURST",
              "LEVY_AUTH_FAILURE_LIMIT_PER_MINUTE", "PYTHONPATH", "KEY"):
        env.pop(k, None)  # the README's defaults, not the test servers'
    r = subprocess.run(["bash", "-e", "-c", script + "\nkill %1\nwait\n"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=180)
    log = (tmp_path / "levy.log").read_text() if (tmp_path / "levy.log").exists() else ""
    assert r.returncode in (0, 143), r.stdout + r.stderr + log
    # 9998 cents taxable in Austin 78701: Texas 6.25 % = 624.875 -> 625, the city 1 % = 99.98 -> 100,
    # its special district 1 % -> 100: 825.
    assert '"tax_amount": "825"' in r.stdout, r.stdout + r.stderr
    assert f"127.0.0.1:{http}" in log  # scripts/run passed its flags to levy serve
    assert '"has_more":true' in r.stdout  # the REST list
    assert "['CLOTHING.ACCESSORIES.GENERAL', 'CLOTHING.ACCESSORIES.HATS_GLOVES', 'CLOTHING.APPAREL.CHILDRENS'] True" \
        in r.stdout  # the Python snippet (the first three codes, sorted)


def test_readme_python_snippets_define_what_they_use() -> None:
    """Issue 30, point 14: every Python block of the README that uses ``KEY`` defines it (or reads it from
    the environment), so that it runs pasted as it is after "Try it"."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    users = [b for b in blocks if re.search(r"\bKEY\b", b)]
    assert users
    for block in users:
        assert re.search(r'^KEY = os\.environ\["KEY"\]', block, re.M) or 'os.environ["KEY"]' in block, block


def test_what_try_it_leaves_behind_is_ignored_by_git() -> None:
    """levy.log (``./scripts/run > levy.log``) and the OpenAPI client generated into levy_api/."""
    r = subprocess.run(["git", "check-ignore", "levy.log", "levy_api/client.py", "levy.db"], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    assert r.stdout.split() == ["levy.log", "levy_api/client.py", "levy.db"], r
