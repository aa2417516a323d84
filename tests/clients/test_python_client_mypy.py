"""levy-client type-checks under ``mypy --strict`` (issue 36): the generated methods and models
(clients/python/scripts/gen-client), the gRPC stubs (mypy-protobuf, copied by gen-stubs) and the
hand-written modules, with the settings of clients/python/pyproject.toml ([tool.mypy]).

mypy and types-grpcio come from the project's dev dependencies (pyproject.toml); without them
the test is skipped with the reason."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from levyserver import ROOT

CLIENT = ROOT / "clients/python"


def test_the_python_client_passes_mypy_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    try:
        importlib.metadata.version("types-grpcio")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("types-grpcio is not installed (pip install -e '.[dev]'): grpc has no types without it")
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
                        "src/levy_client"], cwd=CLIENT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Success: no issues found"), r.stdout
