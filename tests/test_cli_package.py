"""The layout of :mod:`levy.cli` (issue 23): one module per command group, each
importable alone (no import cycle), a shared ``common`` module that imports none
of them, and every group module registered in ``levy.cli.GROUPS``."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import levy.cli
from levyserver import ROOT, levy_env

PACKAGE = Path(levy.cli.__file__).parent
MODULES = sorted(m.name for m in pkgutil.iter_modules([str(PACKAGE)]) if m.name != "__main__")
# Modules that are not command groups.
NOT_GROUPS = {"common"}


def test_the_package_has_the_expected_modules() -> None:
    assert {"common", "serve", "tenants", "org", "certificates", "rates", "filings", "locations"} <= set(MODULES)


@pytest.mark.parametrize("name", ["levy.cli", *(f"levy.cli.{m}" for m in MODULES)])
def test_each_module_imports_alone_in_a_fresh_interpreter(name: str) -> None:
    # A circular import fails here with ImportError (partially initialized module) whichever module comes first.
    r = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True,
                       env=levy_env(), timeout=60)
    assert r.returncode == 0, r.stderr


def _levy_cli_imports(path: Path) -> set[str]:
    """The modules of levy.cli a source file imports, at any depth of the file (functions included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name == "levy.cli" or a.name.startswith("levy.cli.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from . import x / from .x import y
                found.add("levy.cli." + (node.module or "") if node.module else "levy.cli")
            elif node.module == "levy":
                found |= {f"levy.{a.name}" for a in node.names if a.name == "cli"}
            elif node.module and (node.module == "levy.cli" or node.module.startswith("levy.cli.")):
                found.add(node.module)
    return found


def test_common_imports_no_sibling() -> None:
    assert _levy_cli_imports(PACKAGE / "common.py") == set()
    # And at run time: common.py loaded on its own (without levy/cli/__init__.py, which imports the groups)
    # brings in no module of levy.cli.
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('cli_common_alone', {str(PACKAGE / 'common.py')!r})\n"
            "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
            "print(sorted(m for m in sys.modules if m == 'levy.cli' or m.startswith('levy.cli.')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=levy_env(),
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("name", sorted(set(MODULES) - NOT_GROUPS))
def test_group_modules_import_only_common(name: str) -> None:
    assert _levy_cli_imports(PACKAGE / f"{name}.py") <= {"levy.cli.common"}


def test_every_group_module_is_registered() -> None:
    groups = {g.__name__.rsplit(".", 1)[1] for g in levy.cli.GROUPS}
    assert groups == set(MODULES) - NOT_GROUPS
    assert all(callable(getattr(g, "register", None)) for g in levy.cli.GROUPS)
