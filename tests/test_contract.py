"""The contract stays in one place: generated code is current, buf lint and
format pass, and every RPC has an HTTP mapping."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from levyserver import ROOT
from levy.app.registry import methods


def test_generated_code_is_current() -> None:
    r = subprocess.run(["bash", "scripts/gen-protos", "--check"], cwd=ROOT, capture_output=True, text=True,
                       env={"PATH": f"{ROOT / '.venv' / 'bin'}:/usr/bin:/bin", "PYTHON": sys.executable})
    assert r.returncode == 0, r.stdout + r.stderr


def _buf() -> str:
    exe = shutil.which("buf") or str(ROOT / ".venv" / "bin" / "buf")
    if not shutil.which(exe) and not (ROOT / ".venv" / "bin" / "buf").exists():
        pytest.skip("buf is not installed (pip install buf-bin)")
    return exe


def test_buf_lint_and_format() -> None:
    buf = _buf()
    lint = subprocess.run([buf, "lint"], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([buf, "format", "-d", "--exit-code"], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_every_rpc_has_an_http_rule_and_a_unique_route() -> None:
    seen = set()
    for m in methods():
        assert m.http.WhichOneof("pattern") in {"get", "post", "patch", "delete", "put"}, m.full_name
        key = (m.http_method, m.http_path)
        assert key not in seen, key
        seen.add(key)


def test_api_md_lists_every_success_status_but_200() -> None:
    """docs/api.md's table of success statuses is the protos' (issue 16: it said every create answers
    201 while POST /transactions answers 200)."""
    import re

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    table = text.split("Success statuses other than 200", 1)[1].split("\n\n", 2)[1]
    documented = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `([A-Z]+ [^`]+)` \| (\d{3})", table, re.M)}
    expected = {f"{m.http_method} {m.http_path}": m.success_status for m in methods() if m.success_status != 200}
    assert documented == expected
    create_transaction = next(m for m in methods() if m.name == "CreateTransaction")
    assert create_transaction.success_status == 200 and "`POST /transactions` creates a transaction and answers **200**" in text


def test_vendored_google_protos_are_the_ones_the_server_uses() -> None:
    """protos/google/ holds unmodified copies of the googleapis protos: the
    google/rpc ones describe exactly the messages the server packs into
    grpc-status-details-bin (googleapis-common-protos' Python code)."""
    import google.api
    import google.rpc

    for package in (google.api, google.rpc):
        vendored = sorted((ROOT / "protos" / package.__name__.replace(".", "/")).glob("*.proto"))
        assert vendored, package.__name__
        installed = Path(package.__path__[0])
        for path in vendored:
            assert path.read_bytes() == (installed / path.name).read_bytes(), f"{path} differs from {installed}"
    assert {p.name for p in (ROOT / "protos" / "google" / "rpc").glob("*.proto")} >= {
        "status.proto", "error_details.proto", "code.proto"}
