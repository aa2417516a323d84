"""Boundary records at scale (issue 33): ``python -m bench.boundary_store``.

For each size (records of the synthetic SST boundary file in the official
89-column layout, ``bench/sst_synthetic.py``: half ZIP+4 records, half address
records), on a fresh SQLite database:

* ``levy rates import`` of the rate and boundary files: wall time and CPU
  seconds, peak RSS (``wait4``), records per second, database and address file sizes
  (the import builds the address file too);
* ``levy serve --workers W`` (W = 1 and 2): seconds until ``/healthz`` answers
  (wall, and the server's CPU seconds: on a shared machine the CPU figure is the
  steadier one), and memory summed over the server's processes (PSS from
  ``/proc/<pid>/smaps_rollup``: a page mapped by two workers counts half in each);
* the same server on a database with the per-ZIP tables only (no boundary
  records) for the side-by-side figures;
* calculations through the server (``--workers 1``, gRPC ``CreateCalculation``, one line, one
  request at a time, each at another address of the file: half ZIP+4 codes, half street
  addresses), p50 and p99 in milliseconds, with the boundary records and on the per-ZIP-only
  server at the same addresses;
* look-ups in process: the rate table's ``resolve`` at ZIP+4 and street
  addresses of the file, p50 and p99 in microseconds, against ZIP-only look-ups;
* ``targets``: issue 33's targets, each with its figure, its limit and whether it is met
  (:func:`targets`).

Prints one JSON object per size. Sizes are in records: ``--records 200000
--records 1000000``. Run it on a quiet machine: it starts servers and writes
files of about 130 bytes per record in ``--workdir``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import sst_synthetic
from bench.harness import (
    CALC_METHOD,
    ROOT,
    levy,
    levy_env,
    levy_server,
    server_cpu_seconds,
)


def _children(pid: int) -> list[int]:
    out = [pid]
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for k in kids:
        out.extend(_children(int(k)))
    return out


def pss_mb(pid: int) -> float:
    """PSS of ``pid`` and its descendants, MB."""
    total = 0
    for p in _children(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def timed_import(db: str, *paths: str) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "levy", "rates", "import", *paths, "--no-progress",
                             "--database-url", db], env=levy_env(), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    s = time.perf_counter() - t0
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if status != 0:
        raise RuntimeError(f"import failed: {out}\n{err}")
    return {"seconds": round(s, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def serve_figures(db: str, workdir: Path, workers: int, calc: tuple[str, int] | None = None) -> dict[str, float]:
    """Start-up and memory of ``levy serve --workers W``; with ``calc`` (an API key, the records
    of the file), also :func:`calculations` through it."""
    t0 = time.perf_counter()
    with levy_server(db, workdir, workers=workers, name=f"serve{workers}", start_timeout=900) as server:
        start = time.perf_counter() - t0
        cpu = server_cpu_seconds(server.pid)
        time.sleep(1.0 if workers == 1 else 3.0)  # every worker up (the parent answers as soon as one is)
        out = {"startup_s": round(start, 2), "startup_cpu_s": round(cpu, 2), "pss_mb": round(pss_mb(server.pid), 1)}
        if calc is not None:
            out.update(calculations(server.grpc, *calc))
        return out


def first_zip(records: int) -> int:
    """The synthetic file's first ZIP: Minnesota's 55001, or 10001 when its ZIPs (one per 100 records)
    would run past 99999 (above 4.5 million records)."""
    return 55001 if 55001 + records // 100 <= 99999 else 10001


def mn_tenant(db: str) -> str:
    """An organization registered in Minnesota (the synthetic file's state): its API key."""
    import asyncio
    from datetime import UTC, date, datetime

    from sqlalchemy import insert

    from bench import seed
    from levy.domain.ids import new_id
    from levy.store.db import create_engine, transaction
    from levy.store.tables.areas import registrations

    tenant = seed.new_tenant(db)

    async def register() -> None:
        engine = create_engine(db, pool_size=1)
        try:
            async with transaction(engine, write=True) as conn:
                await conn.execute(insert(registrations).values(
                    id=new_id("reg"), organization_id=tenant.organization_id, jurisdiction="US-ST-MN",
                    registration_number="MN-0001", effective_from=date(2000, 1, 1), effective_to=None,
                    created_at=datetime.now(UTC)))
        finally:
            await engine.dispose()

    asyncio.run(register())
    return tenant.key


def calculations(target: str, key: str, records: int, samples: int = 600, warmup: int = 30) -> dict[str, float]:
    """gRPC CreateCalculation at ``samples`` addresses of the file (half ZIP+4, half street), one at
    a time: p50 and p99 in milliseconds. The same addresses (seeded) on every server."""
    import random

    import grpc

    from levy.ratefiles.builtin import zip_directory
    from levy.v1 import calculations_pb2 as pb

    rnd = random.Random(33)
    n4 = records // 2
    day = sst_synthetic.date_in_force()
    # The file's ZIPs run on past Minnesota's (first + i // 50): only those of the ZIP directory's MN, which
    # the per-ZIP-only server accepts too (it refuses a ZIP of another state).
    directory, first = zip_directory(), first_zip(records)
    in_mn = [k for k in range(n4 // 50) if getattr(directory.get(f"{first + k:05d}"), "state", None) == "MN"]
    requests = []
    for i in range(samples + warmup):
        req = pb.CreateCalculationRequest(currency="USD")
        req.transaction_date.FromDatetime(datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.UTC))
        li = req.line_items.add(id="l1", quantity="1", unit_price="10000")
        li.customer.address.state, li.customer.address.country = "MN", "US"
        k = rnd.choice(in_mn)  # a ZIP: its 50 ZIP+4 records and 25 street pairs
        if i % 2:
            z, street = sst_synthetic.street_of(k * 25 + rnd.randrange(25), first)
            li.customer.address.line1, li.customer.address.postal_code = f"{rnd.randrange(1, 999)} N {street} ST", z
        else:
            z, lo, _, _ = sst_synthetic.zip4_of(k * 50 + rnd.randrange(50), first)
            li.customer.address.postal_code = f"{z}-{lo}"
        requests.append(req.SerializeToString())
    times = []
    with grpc.insecure_channel(target) as channel:
        call = channel.unary_unary(CALC_METHOD)
        for i, body in enumerate(requests):
            t0 = time.perf_counter()
            call(body, metadata=(("x-api-key", key),), timeout=60)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"calc_p50_ms": round(times[len(times) // 2], 2), "calc_p99_ms": round(times[int(len(times) * 0.99)], 2)}


def lookups(db: str, records: int, samples: int = 2000) -> dict[str, float]:
    """resolve() at ZIP+4 and street addresses of the file (and at bare ZIPs), p50/p99 in microseconds."""
    import asyncio
    import random

    from levy.app.rates_runtime import RatesRuntime
    from levy.domain.memo import BoundedMemo
    from levy.domain.tax.model import Address
    from levy.store.db import create_engine

    async def load() -> Any:
        engine = create_engine(db)
        rt = RatesRuntime(engine)
        await rt.load()
        await engine.dispose()
        return rt.table

    table = asyncio.run(load())
    rnd = random.Random(33)
    n4 = records // 2
    on = sst_synthetic.date_in_force()
    figures: dict[str, float] = {}
    for kind in ("zip4", "address", "zip5"):
        times = []
        for _ in range(samples):
            if kind == "address":
                k = rnd.randrange(n4 // 2)
                z, street = sst_synthetic.street_of(k, first_zip(records))
                addr = Address(line1=f"{rnd.randrange(1, 999)} N {street} ST", city="", state="MN", postal_code=z,
                               country="US")
            else:
                z, lo, _, _ = sst_synthetic.zip4_of(rnd.randrange(n4), first_zip(records))
                code = f"{z}-{lo}" if kind == "zip4" else z
                addr = Address(line1="", city="", state="MN", postal_code=code, country="US")
            object.__setattr__(table, "_resolved", BoundedMemo(16))  # no cached answer
            t0 = time.perf_counter()
            res = table.resolve(addr, on)
            times.append((time.perf_counter() - t0) * 1e6)
            assert kind == "zip5" or res.level == kind, (kind, res.level, res.how)
        times.sort()
        figures[f"{kind}_p50_us"] = round(times[len(times) // 2], 1)
        figures[f"{kind}_p99_us"] = round(times[int(len(times) * 0.99)], 1)
    return figures


def run(records: int, workdir: Path, workers: tuple[int, ...]) -> dict[str, Any]:
    work = workdir / f"n{records}"
    work.mkdir(parents=True, exist_ok=True)
    db_file = work / "levy.db"
    db = f"sqlite+aiosqlite:///{db_file}"
    levy(db, "migrate")
    key = mn_tenant(db)
    base = {w: serve_figures(db, work, w, (key, records) if w == workers[0] else None) for w in workers}
    n4 = records // 2
    rates, bounds = sst_synthetic.write(work / "sst", n4, records - n4, first_zip=first_zip(records))
    imp = timed_import(db, str(rates), str(bounds))
    imp["records_per_s"] = round(records / imp["seconds"])
    imp["db_mb"] = round(db_file.stat().st_size / 1e6, 1)
    stores = list(work.glob("levy.db.addresses/addresses-*.sqlite"))
    imp["address_file_mb"] = round(sum(p.stat().st_size for p in stores) / 1e6, 1)
    out: dict[str, Any] = {"records": records, "import": imp, "per_zip_only": base}
    out["with_boundaries"] = {w: serve_figures(db, work, w, (key, records) if w == workers[0] else None)
                              for w in workers}
    out["lookups"] = lookups(db, records)
    out["targets"] = targets(out)
    return out


def targets(run: dict[str, Any]) -> dict[str, Any]:
    """Issue 33's targets against one run's figures: per million records at most +5 s of start-up (wall
    and CPU, each worker count) and +100 MB of PSS summed over the workers, an import of at least 50,000
    records a second, calculation p50 and p99 within 1.5x of the per-ZIP-only server. Each: the figure,
    the limit, and whether it is met."""
    per_million = run["records"] / 1e6
    out: dict[str, Any] = {}

    def check(name: str, value: float, limit: float, at_most: bool = True) -> None:
        out[name] = {"value": round(value, 2), "limit": limit, "met": value <= limit if at_most else value >= limit}

    for w, after in run["with_boundaries"].items():
        before = run["per_zip_only"][w]
        check(f"startup_s_per_million_{w}w", (after["startup_s"] - before["startup_s"]) / per_million, 5)
        check(f"startup_cpu_s_per_million_{w}w", (after["startup_cpu_s"] - before["startup_cpu_s"]) / per_million, 5)
        check(f"pss_mb_per_million_{w}w", (after["pss_mb"] - before["pss_mb"]) / per_million, 100)
        for p in ("calc_p50_ms", "calc_p99_ms"):
            if p in after:
                check(f"{p}_ratio", after[p] / before[p], 1.5)
    check("import_records_per_s", run["import"]["records_per_s"], 50_000, at_most=False)
    out["all_met"] = all(v["met"] for v in out.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, action="append", help="boundary records (repeatable; default 200000)")
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated (default 1,2)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--file-only", action="store_true", help="the address file alone (build, open, look-ups): no import, no server")
    args = ap.parse_args()
    workers = tuple(int(w) for w in args.workers.split(","))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="levy-bnd-"))
    for n in args.records or [200_000]:
        print(json.dumps(file_only(n, workdir) if args.file_only else run(n, workdir, workers)), flush=True)


def file_only(records: int, workdir: Path) -> dict[str, Any]:
    """The address file alone at ``records`` (no database, no import): build seconds (CPU), size,
    open seconds and RSS growth of the process that opens it, and look-ups of the file's addresses."""
    import random
    import resource
    from datetime import date
    from decimal import Decimal

    from levy.domain.tax.local_rates import Component, LocalRecord, StreetRange
    from levy.store.address_file import AddressFile, _Writer
    from levy.store.rate_imports import AddressBlock

    comps = (Component("county", "County 053", Decimal("0.0015"), "US-CO-MN-C053", "27-00-053"),)
    path = workdir / f"addresses-{records}.sqlite"
    path.unlink(missing_ok=True)
    n4 = records // 2
    begin = date(2026, 4, 1)

    def rows(lo: int, hi: int) -> AddressBlock:
        out = []
        for i in range(lo, hi):
            base: dict[str, Any] = dict(state="MN", effective_from=begin, effective_to=None, source="MNR+MNB",
                                        source_kind="official_address", components=comps, line=i + 1)
            if i < n4:
                z, plo, phi, _ = sst_synthetic.zip4_of(i, 10001)
                base.update(zip5=z, plus4_low=plo, plus4_high=phi)
            else:
                z, street = sst_synthetic.street_of((i - n4) // 2, 10001)
                odd = i % 2 == 0
                base.update(zip5=z, street=StreetRange(1 if odd else 2, 999 if odd else 998, "odd" if odd else "even",
                                                       street, "N", "ST", ""))
            out.append(LocalRecord(**base))
        return AddressBlock.of(out, {})

    cpu0 = time.process_time()
    writer = _Writer(path)
    for lo in range(0, records, 50_000):
        writer.add(rows(lo, min(records, lo + 50_000)))
    writer.finish("bench")
    build_cpu = time.process_time() - cpu0
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    f = AddressFile(path)
    open_s = time.perf_counter() - t0
    rnd = random.Random(33)
    on = date(2026, 5, 15)
    times = {"zip4": [], "street": []}
    for _ in range(2000):
        z, plo, _, _ = sst_synthetic.zip4_of(rnd.randrange(n4), 10001)
        t0 = time.perf_counter()
        assert f.plus4("MN", z, plo, on) is not None
        times["zip4"].append((time.perf_counter() - t0) * 1e6)
        z, street = sst_synthetic.street_of(rnd.randrange((records - n4) // 2), 10001)
        t0 = time.perf_counter()
        assert f.streets("MN", z, street)
        times["street"].append((time.perf_counter() - t0) * 1e6)
    out: dict[str, Any] = {"records": records, "build_cpu_s": round(build_cpu, 1),
                           "file_mb": round(path.stat().st_size / 1e6, 1), "open_s": round(open_s, 3),
                           "open_rss_growth_mb": round((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024, 1)}
    for kind, values in times.items():
        values.sort()
        out[f"{kind}_p50_us"] = round(values[len(values) // 2], 1)
        out[f"{kind}_p99_us"] = round(values[int(len(values) * 0.99)], 1)
    path.unlink()
    return out


if __name__ == "__main__":
    main()
