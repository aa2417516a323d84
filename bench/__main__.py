"""``python -m bench``: Levy measured against the limits of its own stack.

Starts ``levy serve`` (one worker) on a fresh database, imports the 52 ZIP rate
files through ``levy rates import`` (timed), seeds products, customers with
certificates and registrations, then runs each scenario of issue 10 next to its
baseline measured by the same client in the same run, and writes PATH.json and
PATH.md (``--out PATH``). Each figure is the median of several repetitions,
with min and max. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data/rates next to the checkout (or next to the directory of worktrees).
DEFAULT_RATES = next((p / "shared" / "data" / "rates" / "zip5-2026-03" for p in (ROOT.parent, ROOT.parent.parent)
                      if (p / "shared" / "data" / "rates" / "zip5-2026-03").is_dir()),
                     ROOT.parent / "shared" / "data" / "rates" / "zip5-2026-03")


def _parser() -> argparse.ArgumentParser:
    from bench.scenarios import SCENARIOS

    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    db = ap.add_mutually_exclusive_group()
    db.add_argument("--database-url", metavar="URL",
                    help="SQLAlchemy async URL of an empty database (default: a fresh SQLite file in a temporary directory).")
    db.add_argument("--postgres", metavar="URL", nargs="?", const=os.environ.get("LEVY_TEST_POSTGRES_URL", ""),
                    help="Create a fresh PostgreSQL database on the server of URL (postgresql+asyncpg://user@host:port/db; "
                         "default $LEVY_TEST_POSTGRES_URL), run there, drop it afterwards.")
    ap.add_argument("--out", metavar="PATH", default="bench-result",
                    help="Write PATH.json and PATH.md (default: ./bench-result).")
    ap.add_argument("--quick", action="store_true",
                    help="Fewer requests and repetitions (2), 100,000 customers at depth: a smoke run, not a measurement.")
    ap.add_argument("--only", metavar="SCENARIO", action="append", choices=sorted(SCENARIOS),
                    help="Run only this scenario (repeatable): " + ", ".join(SCENARIOS) + ".")
    ap.add_argument("--event-loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                    help="Event loop of levy serve and of the baselines (default auto: uvloop when installed, "
                         "as levy serve).")
    ap.add_argument("--rates", metavar="DIR", default=str(DEFAULT_RATES),
                    help=f"Directory of the per-ZIP rate files (default: {DEFAULT_RATES}).")
    return ap


async def _pg(url: str, sql: str) -> None:
    import asyncpg

    parts = urlsplit(url.replace("postgresql+asyncpg", "postgresql"))
    conn = await asyncpg.connect(urlunsplit(parts._replace(path="/postgres")))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def scratch_database(postgres: str | None, otherwise: str) -> tuple[str, tuple[str, str] | None]:
    """The database a run uses: a fresh one created on the PostgreSQL server of ``postgres`` (with
    the URL and statement that drop it afterwards, for :func:`_pg`), else ``otherwise``."""
    if not postgres:
        return otherwise, None
    name = f"levy_bench_{uuid.uuid4().hex[:8]}"
    asyncio.run(_pg(postgres, f'CREATE DATABASE "{name}"'))
    return (urlunsplit(urlsplit(postgres)._replace(path="/" + name)),
            (postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _machine() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal:"))
    from bench import harness
    from levy import eventloop

    return {"nproc": os.cpu_count(), "cpu": cpu, "memory_gb": round(mem_kb / 1024 / 1024, 1),
            "python": platform.python_version(), "platform": platform.platform(), "event_loop": eventloop.name(harness.EVENT_LOOP)}


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from bench import report, seed
    from bench.harness import levy, levy_server
    from bench.scenarios import SCENARIOS, Env

    args = _parser().parse_args(argv)
    from bench import harness

    harness.EVENT_LOOP = args.event_loop
    if not Path(args.rates).is_dir():
        print(f"rate files not found at {args.rates}", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="levy-bench-"))
    if args.postgres is not None and not args.postgres:
        print("--postgres needs a URL or LEVY_TEST_POSTGRES_URL", file=sys.stderr)
        return 2
    db, dropdb = scratch_database(args.postgres, args.database_url or f"sqlite+aiosqlite:///{workdir}/bench.db")
    dialect = "postgresql" if db.startswith("postgresql") else "sqlite"
    chosen = args.only or list(SCENARIOS)
    results: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        levy(db, "migrate")
        t0 = time.perf_counter()
        levy(db, "rates", "import", args.rates, "--no-progress")
        import_seconds = time.perf_counter() - t0
        tenant = seed.new_tenant(db)
        product_id = seed.seed_catalogue(db, tenant)
        with levy_server(db, workdir) as server:
            env = Env(db=db, dialect=dialect, workdir=workdir, quick=args.quick, server=server, tenant=tenant,
                      product_id=product_id, import_seconds=import_seconds)
            for name in chosen:
                title, fn = SCENARIOS[name]
                print(f"bench: {name} ...", file=sys.stderr, flush=True)
                t = time.perf_counter()
                try:
                    results[name] = {"title": title, **fn(env)}
                except Exception as e:  # noqa: BLE001 - one failed scenario must not lose the others
                    results[name] = {"title": title, "error": f"{type(e).__name__}: {e}", "passed": False,
                                     "target": "", "value": None, "figures": {}}
                results[name]["seconds"] = round(time.perf_counter() - t, 1)
                print(f"bench: {name}: {report.verdict(results[name])}", file=sys.stderr, flush=True)
    finally:
        if dropdb is not None:
            asyncio.run(_pg(*dropdb))
    doc = {
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": dialect,
        "quick": args.quick,
        "machine": _machine(),
        "seconds": round(time.perf_counter() - started, 1),
        "scenarios": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(doc, indent=2) + "\n")
    Path(f"{out}.md").write_text(report.markdown(doc))
    print(report.markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
