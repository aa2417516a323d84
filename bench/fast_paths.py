"""The fast paths of Levy measured against the plain code they replaced (issue 23).

``python -m bench.fast_paths [--repeat N]`` times, in this process (CPU time,
the best of ``--repeat`` rounds), each fast path and its plain twin on the
same input, and prints one line each with the ratio:

- ``transport/codec.py`` rendering: the renderer generated per message type,
  against the field walk kept as the reference in
  ``tests/unit/foundation/test_codec_fast_paths.py``; inputs: a batch upsert
  response of 1000 customers, and one customer.
- the rate table's memo of resolutions (``RateTable._resolved``), against the
  same calculation with it emptied before every call; input: a 3-line
  calculation at three ZIP codes (TX, CA, NY) on the built-in tables. (The
  engine's memo of line plans, ``engine._PLANS``, measured the same way, saved
  4.6 us of 22.8 and was removed; so was the field-limit checker compiled per
  message type in ``app/constraints.py``, 9.4 us against 20.5 us for the walk on
  a 3-line calculation request, 1.7% of a gRPC calculation's server CPU.)

The references are read from the test files, where their differential tests
keep them equal in behaviour to the fast paths. Figures and what was decided:
docs/performance.md ("Fast paths, reviewed").
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _module(relative: str) -> ModuleType:
    path = ROOT / relative
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def best_of(fn: Callable[[], Any], number: int, repeat: int) -> float:
    """Seconds of CPU per call: the best of ``repeat`` rounds of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        best = min(best, (time.process_time() - start) / number)
    return best


def batch_response(n: int) -> Any:
    from levy.v1 import customers_pb2

    resp = customers_pb2.BatchUpsertCustomersResponse(object="batch")
    for i in range(n):
        item = resp.data.add(index=i, status="created")
        c = item.customer
        c.id, c.source_id, c.source, c.source_account_id = f"cust_{i:026d}", f"c-{i}", "native", "acct"
        c.name, c.email = f"Customer {i}", f"c{i}@example.com"
        c.created_at.seconds = c.updated_at.seconds = c.source_updated_at.seconds = 1_767_225_600 + i
    return resp


def engine_case() -> tuple[Callable[[], Any], Callable[[], Any]]:
    from levy.domain.tax import engine
    from levy.domain.tax.model import CalculationInput, ExemptionSettings
    from levy.ratefiles.builtin import builtin_rate_table, load_taxability

    helpers = _module("tests/unit/tax/tax_helpers.py")
    rates, rules = builtin_rate_table(), load_taxability()
    inp = CalculationInput(lines=(
        helpers.mkline("1", "TX", price=1999, qty="2", zip="78701"),
        helpers.mkline("2", "CA", "CLOTHING.APPAREL.SHIRTS", price=4999, zip="90046"),
        helpers.mkline("3", "NY", "CLOTHING.APPAREL.SHIRTS", price=12000, zip="10001"),
    ), transaction_date=None)
    settings = ExemptionSettings("off", "certificate_only")  # type: ignore[arg-type]

    def memo() -> Any:
        return engine.calculate(inp, rates, rules, helpers.REG_ALL, settings)

    def plain() -> Any:
        rates._resolved.clear()
        return engine.calculate(inp, rates, rules, helpers.REG_ALL, settings)

    return memo, plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fast_paths", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best is kept (default 5)")
    args = parser.parse_args(argv)

    from levy.transport import codec

    codec_ref = _module("tests/unit/foundation/test_codec_fast_paths.py")
    big, one = batch_response(1000), batch_response(1).data[0].customer
    memo, plain = engine_case()
    # Same answers first: a fast path that differs is a defect, not a figure.
    assert codec.to_json(big) == codec_ref._walk_to_json(big)
    assert memo() == plain()

    rows = [
        ("codec render: 1000-customer batch response", lambda: codec.to_json(big),
         lambda: codec_ref._walk_to_json(big), 20),
        ("codec render: one customer", lambda: codec.to_json(one), lambda: codec_ref._walk_to_json(one), 20_000),
        ("rate table memo: 3-line calculation", memo, plain, 2_000),
    ]
    print(f"{'fast path':46} {'fast':>12} {'plain':>12} {'plain/fast':>10}")
    for name, fast, slow, number in rows:
        f, s = best_of(fast, number, args.repeat), best_of(slow, number, args.repeat)
        print(f"{name:46} {f * 1e6:10.1f}us {s * 1e6:10.1f}us {s / f:9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
