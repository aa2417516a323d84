"""``levy transactions import FILE...``: a seller's invoice history into Levy.

Reads CSV (one row per line item, grouped into transactions by ``reference_id``) or JSON Lines
(one transaction per line, in the shape of ``POST /transactions``), and sends them in batches of
up to 1000 to the batch import of :mod:`levy.app.transactions_batch`: directly on the database
(like the other commands, ``--database-url``) or through a server's ``POST /transactions/batch``
(``--url`` and ``--api-key``). Each batch commits on its own, so an interrupted import is resumed
by running the same command again: what is stored comes back ``existing`` and nothing changes.
Failed transactions are written, rows as read plus an ``errors`` column (CSV) or member (JSON
Lines), to ``FILE.failed.csv`` / ``FILE.failed.jsonl``, which can be fixed and imported again.
See docs/transactions.md ("Importing history").
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Coroutine, Iterator
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

#: Columns of the CSV format; ``errors`` (written to the failed-rows file) is ignored on import.
TRANSACTION_COLUMNS = ("reference_id", "type", "status", "transaction_date", "currency", "source",
                       "parent_reference_id", "parent_transaction_id", "tax_amount")
LINE_COLUMNS = ("line_id", "quantity", "unit_price", "tax_codes", "product_id", "customer_id",
                "line1", "city", "state", "postal_code", "country")
ADDRESS_COLUMNS = ("line1", "city", "state", "postal_code", "country")
ERRORS = "errors"
MAX_BATCH = 1000
MAX_PLANNERS = 8


def register(sub: Any) -> None:
    from levy.cli.common import add_organization

    txn = sub.add_parser("transactions", help="Import transactions (a seller's history).",
                         description="Transactions: import a seller's invoice history.")
    tsub = txn.add_subparsers(dest="transactions_command", metavar="ACTION", required=True)
    p = tsub.add_parser(
        "import", help="Import transactions from CSV or JSON Lines files.",
        description="Import transactions from CSV files (one row per line item, grouped into transactions by "
        "reference_id; columns: " + ", ".join(TRANSACTION_COLUMNS + LINE_COLUMNS) + ") or JSON Lines files "
        "(one transaction per line, the shape of POST /transactions). Status may be finalized, filed or "
        "draft; a transaction with tax_amount keeps it, one without is calculated at the rates in force on its "
        "transaction_date. Batches commit one by one: run the command again to resume, what is stored is "
        "skipped. Failed transactions go to FILE.failed.csv or FILE.failed.jsonl (the rows as read plus their "
        "errors) to fix and import again. Exit status 0 when every transaction is stored, 1 when some failed, "
        "2 on a usage, file or connection error. See docs/transactions.md.")
    p.add_argument("files", nargs="+", metavar="FILE", help="CSV (.csv) or JSON Lines (.jsonl, .ndjson) files.")
    p.add_argument("--format", choices=("csv", "jsonl"),
                   help="The files' format (default: from each file's extension).")
    p.add_argument("--batch-size", type=int, default=MAX_BATCH, metavar="N",
                   help=f"Transactions per batch, 1..{MAX_BATCH} (default {MAX_BATCH}).")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="A progress bar (default: when stderr is a terminal; otherwise a line every 10 s).")
    p.add_argument("--planners", type=int, default=1, metavar="N",
                   help="Processes that plan (check and calculate) the batches while this one writes them, "
                   f"0..{MAX_PLANNERS} (default 1; 0: plan here, in turn with the writes). Each loads the rate table. "
                   "Not used with --url, where the server does both.")
    p.add_argument("--url", help="Send the batches to this Levy server's REST address (e.g. http://host:8080) "
                   "instead of writing to the database.")
    p.add_argument("--api-key", default=None,
                   help="The API key for --url (default: the environment variable LEVY_API_KEY).")
    add_organization(p)
    p.set_defaults(func=_import)


# ------------------------------------------------------------------ reading


@dataclass
class Pending:
    """One transaction read from a file: its API body, or why it could not be read."""

    body: dict[str, Any] | None
    rows: list[Any]  # CSV: the row dicts; JSON Lines: the line's text
    first_row: int  # 1-based line number in the file
    error: str | None = None


def file_format(path: str, forced: str | None) -> str:
    if forced:
        return forced
    ext = Path(path).suffix.lower()
    if ext == ".csv":
        return "csv"
    if ext in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise ValueError(f"{path}: cannot tell the format from the extension; pass --format csv or --format jsonl")


#: "utf-8-sig": a file saved by Excel as "CSV UTF-8" begins with a byte order mark, which is not
#: part of its first column's name.
ENCODING = "utf-8-sig"


def count_rows(path: str, fmt: str) -> int:
    with open(path, encoding=ENCODING, newline="") as f:
        n = sum(1 for line in f if line.strip())
    return max(n - 1, 0) if fmt == "csv" else n


def read_jsonl(f: TextIO) -> Iterator[Pending]:
    for number, text in enumerate(f, 1):
        raw = text.rstrip("\r\n")
        if not raw.strip():
            continue
        try:
            body = json.loads(raw)
        except ValueError as e:
            yield Pending(None, [raw], number, f"not JSON: {e}")
            continue
        if not isinstance(body, dict):
            yield Pending(None, [raw], number, "not a JSON object")
            continue
        body.pop(ERRORS, None)
        yield Pending(body, [raw], number)


def read_csv(f: TextIO) -> Iterator[Pending]:
    """Transactions of consecutive rows sharing a ``reference_id``. The header must name known
    columns, each once; a row with more cells than the header has columns fails its transaction
    (with the row's line). A field over :data:`MAX_FIELD` characters (or a quote never closed) is a
    file error (``ValueError``), as is a header that is not one."""
    reader = csv.DictReader(f, restkey=_EXTRA)
    try:
        columns = reader.fieldnames or []
    except csv.Error as e:
        raise ValueError(f"line 1: {e}") from None
    unknown = [c for c in columns if c not in TRANSACTION_COLUMNS + LINE_COLUMNS + (ERRORS,)]
    if unknown or "reference_id" not in columns:
        why = f"unknown columns {', '.join(unknown)}" if unknown else "no reference_id column"
        raise ValueError(f"{why}; the columns are {', '.join(TRANSACTION_COLUMNS + LINE_COLUMNS)}")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise ValueError(f"the header names {', '.join(twice)} more than once; name each column once")
    seen: set[str] = set()
    group: list[dict[str, str]] = []
    start = 2
    bad: list[str] = []  # the group's rows with extra cells
    for number, row in _rows(reader):
        extra = row.pop(_EXTRA, None)
        row = {k: (v or "").strip() for k, v in row.items()}
        if group and row.get("reference_id") == group[0].get("reference_id"):
            group.append(row)
        else:
            if group:
                yield _csv_pending(group, start, seen, bad)
            group, start, bad = [row], number, []
        if extra is not None:
            bad.append(f"{len(extra)} cell(s) more than the header's {len(columns)} columns on line {number}")
    if group:
        yield _csv_pending(group, start, seen, bad)


#: The largest CSV field read (characters): Python's ``csv`` default, far above any real value.
MAX_FIELD = csv.field_size_limit()
_EXTRA = "\0extra"  # DictReader's key for a row's cells beyond the header's columns


def _rows(reader: csv.DictReader[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The reader's rows with the line each begins on; its errors (a field over :data:`MAX_FIELD`, ...)
    as ``ValueError`` with that line."""
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise ValueError(f"line {line}: {e}; the file cannot be read as CSV") from None
        yield line, row


def _csv_pending(rows: list[dict[str, str]], start: int, seen: set[str], bad: list[str] | None = None) -> Pending:
    if bad:
        return Pending(None, rows, start, "; ".join(bad))
    ref = rows[0].get("reference_id", "")
    if not ref:
        return Pending(None, rows, start, "reference_id is required (it groups the rows of a transaction)")
    if ref in seen:
        return Pending(None, rows, start, f"the rows of reference_id '{ref}' are not consecutive in the file")
    seen.add(ref)
    return Pending(csv_transaction(rows), rows, start)


def csv_transaction(rows: list[dict[str, str]]) -> dict[str, Any]:
    """The API body of a transaction's CSV rows: its fields from the first row, a line per row."""
    first = rows[0]
    body: dict[str, Any] = {"type": first.get("type") or "sale", "status": first.get("status") or "finalized"}
    for name in TRANSACTION_COLUMNS:
        value = first.get(name)
        if value and name not in body:
            body[name] = value
    date = body.get("transaction_date")
    if date and len(date) == 10:  # a bare date is its UTC midnight
        body["transaction_date"] = f"{date}T00:00:00Z"
    lines = []
    for n, row in enumerate(rows, 1):
        li: dict[str, Any] = {"id": row.get("line_id") or str(n), "quantity": row.get("quantity") or "1"}
        if row.get("unit_price"):
            li["unit_price"] = row["unit_price"]
        product: dict[str, Any] = {}
        if row.get("tax_codes"):
            product["tax_attributes"] = [c.strip() for c in row["tax_codes"].split("|") if c.strip()]
        if row.get("product_id"):
            product["preset"] = {"id": row["product_id"]}
        customer: dict[str, Any] = {}
        address = {k: row[k] for k in ADDRESS_COLUMNS if row.get(k)}
        if address:
            customer["address"] = address
        if row.get("customer_id"):
            customer["preset"] = {"id": row["customer_id"]}
        if product:
            li["product"] = product
        if customer:
            li["customer"] = customer
        lines.append(li)
    body["line_items"] = lines
    return body


def read_file(path: str, fmt: str) -> Iterator[Pending]:
    with open(path, encoding=ENCODING, newline="") as f:
        try:
            yield from (read_csv(f) if fmt == "csv" else read_jsonl(f))
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None


# ------------------------------------------------------------------ failed rows


class FailedRows:
    """``FILE.failed.csv`` / ``FILE.failed.jsonl``: the failed transactions as read, with their errors."""

    def __init__(self, path: str, fmt: str) -> None:
        p = Path(path)
        self.path = p.with_name(f"{p.stem}.failed{'.csv' if fmt == 'csv' else '.jsonl'}")
        self.fmt = fmt
        self.count = 0
        self._f: TextIO | None = None
        self._csv: Any = None
        self._columns: list[str] = []

    def add(self, item: Pending, errors: list[str]) -> None:
        if self._f is None:
            self._f = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - written item by item
        self.count += 1
        text = "; ".join(errors)
        if self.fmt == "jsonl":
            try:
                obj = json.loads(item.rows[0])
            except ValueError:
                obj = None
            if isinstance(obj, dict):
                obj[ERRORS] = errors
                self._f.write(json.dumps(obj) + "\n")
            else:  # not JSON: the line as read, for the user to fix
                self._f.write(item.rows[0] + "\n")
            return
        if self._csv is None:
            self._columns = [c for c in item.rows[0] if c != ERRORS] + [ERRORS]
            self._csv = csv.DictWriter(self._f, self._columns, extrasaction="ignore")
            self._csv.writeheader()
        for row in item.rows:
            self._csv.writerow({**row, ERRORS: text})

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
        elif self.path.exists():
            self.path.unlink()  # a previous run's failures, all stored now


# ------------------------------------------------------------------ progress


class Progress:
    """A bar on a terminal (rows, rate, ETA); plain lines every ``every`` seconds otherwise."""

    def __init__(self, total: int, bar: bool, out: TextIO, every: float = 10.0) -> None:
        self.total, self.bar, self.out, self.every = total, bar, out, every
        self.rows = 0
        self.start = self.last = time.monotonic()

    def advance(self, rows: int) -> None:
        self.rows += rows
        now = time.monotonic()
        if self.bar:
            self._draw(now)
        elif now - self.last >= self.every:
            self.last = now
            print(f"levy: {self._figures(now)}", file=self.out, flush=True)

    def _figures(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.rows / elapsed
        left = (self.total - self.rows) / rate if rate > 0 and self.total > self.rows else 0
        pct = 100 * self.rows / self.total if self.total else 100
        return f"{self.rows}/{self.total} rows ({pct:.0f}%), {rate:,.0f} rows/s, ETA {_duration(left)}"

    def _draw(self, now: float) -> None:
        width = 30
        done = int(width * self.rows / self.total) if self.total else width
        self.out.write(f"\r[{'#' * done}{'.' * (width - done)}] {self._figures(now)}\x1b[K")
        self.out.flush()

    def finish(self) -> float:
        if self.bar:
            self._draw(time.monotonic())
            self.out.write("\n")
        return time.monotonic() - self.start


def _duration(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


# ------------------------------------------------------------------ sending


@dataclass
class Outcome:
    status: str  # created | existing | failed
    errors: list[str] = field(default_factory=list)


def _error_text(pointer: str | None, index: int, detail: str) -> str:
    prefix = f"/transactions/{index}"
    if pointer and pointer.startswith(prefix):
        pointer = pointer[len(prefix):]
    return f"{pointer}: {detail}" if pointer else detail


class Direct:
    """The batch import on the database (``--database-url``): each batch planned (checked and
    calculated) by a planner process (:mod:`levy.transport.transactions_import`), or in this process with
    ``--planners 0``, then written here, one write transaction per batch, in file order."""

    def __init__(self, services: Any, ctx: Any, planners: Any = None) -> None:
        self.services, self.ctx, self.planners = services, ctx, planners
        self._last: asyncio.Task[list[Outcome]] | None = None

    @classmethod
    async def open(cls, args: argparse.Namespace) -> Direct:
        from levy.app.services import AppServices
        from levy.transport.transactions_import import import_context, start_planners
        from levy.cli.common import config_from, organization_id
        from levy.store import migrate
        from levy.store.db import missing_sqlite_file

        config = config_from(args)
        missing = missing_sqlite_file(config.database_url)
        if missing is not None:
            raise ValueError(f"no Levy database at {missing}; run levy migrate or pass --database-url")
        services = AppServices.create(config)
        planners = None
        try:
            await migrate.upgrade(services.engine)
            async with services.uow() as conn:
                org = await organization_id(conn, args.organization)
            if args.planners:  # started now: they load the rates while this process does
                planners = start_planners(config, org, args.planners)
            await services.rates.load()  # the imported local rates, as the server has them
        except BaseException:
            if planners is not None:
                planners.shutdown(cancel_futures=True)
            await services.close()
            raise
        return cls(services, import_context(services, org), planners)

    async def start(self, bodies: list[dict[str, Any]]) -> asyncio.Task[list[Outcome]]:
        """Plan the batch and return its write (one write transaction), which begins once the
        previous batch's is committed: the caller reads the next batch (and, with ``--planners 0``,
        plans it) while this one is written."""
        from levy.transport.transactions_import import plan_bodies, plan_in_planner

        if self.planners is not None:
            try:
                planning: Any = asyncio.wrap_future(self.planners.submit(plan_in_planner, bodies))
            except BrokenProcessPool as e:
                raise _planner_stopped(e) from None
        else:
            async with self.services.uow() as conn:
                planning = _done(await plan_bodies(self.ctx, conn, bodies, yield_every=20))
        return self._chain(self._written(bodies, planning))

    async def _written(self, bodies: list[dict[str, Any]], planning: Awaitable[Any]) -> list[Outcome]:
        from levy.app.audit import import_detail, record_cli
        from levy.app.transactions_batch import StalePlan, write
        from levy.transport.transactions_import import plan_bodies

        try:
            planned = await planning
        except BrokenProcessPool as e:
            raise _planner_stopped(e) from None
        async with self.services.uow(write=True) as conn:
            try:
                results = await write(self.ctx, conn, planned)
            except StalePlan:  # a reference id stored since: planned again, here, in this transaction
                results = await write(self.ctx, conn, await plan_bodies(self.ctx, conn, bodies))
            created = [r.record.id for r in results if r.status == "created" and r.record is not None]
            if created:  # the audit log of every transport, in the batch's transaction
                await record_cli(conn, self.ctx.organization_id, "transactions.import", "", import_detail(created))
        return [Outcome(r.status, [_error_text(e.pointer, r.index, e.detail) for e in r.errors]) for r in results]

    def _chain(self, step: Coroutine[Any, Any, list[Outcome]]) -> asyncio.Task[list[Outcome]]:
        previous = self._last

        async def after() -> list[Outcome]:
            if previous is not None:
                await asyncio.wait([previous])  # its outcome (or error) is the caller's to collect
            return await step

        self._last = asyncio.ensure_future(after())
        return self._last

    async def close(self) -> None:
        if self.planners is not None:
            self.planners.shutdown(cancel_futures=True)
        await self.services.close()


def _planner_stopped(e: BrokenProcessPool) -> ConnectionError:
    """A planner process that died (killed, out of memory) stops the import like a lost connection:
    what was committed stays, and a rerun resumes."""
    return ConnectionError(f"a planner process stopped ({e})")


async def _done(value: Any) -> Any:
    return value


class Remote:
    """``POST /transactions/batch`` on a server (``--url``)."""

    def __init__(self, url: str, key: str) -> None:
        self.url, self.key = url.rstrip("/") + "/transactions/batch", key
        self._last: asyncio.Task[list[Outcome]] | None = None

    def _post(self, bodies: list[dict[str, Any]]) -> Any:
        data = json.dumps({"transactions": bodies}).encode()
        req = urllib.request.Request(self.url, data=data, method="POST", headers={
            "content-type": "application/json", "x-api-key": self.key})
        for attempt in range(5):
            try:
                with urllib.request.urlopen(req, timeout=300) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as e:
                body = e.read()
                if e.code in (429, 503) and attempt < 4:
                    time.sleep(float(e.headers.get("retry-after") or 1))
                    continue
                try:
                    detail = "; ".join(x.get("detail", "") for x in json.loads(body)["errors"])
                except (ValueError, KeyError, TypeError):
                    detail = body[:300].decode(errors="replace")
                raise ConnectionError(f"{self.url}: HTTP {e.code}: {detail}") from None
            except urllib.error.URLError as e:
                raise ConnectionError(f"{self.url}: {e.reason}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def start(self, bodies: list[dict[str, Any]]) -> asyncio.Task[list[Outcome]]:
        """The batch's POST in a thread, once the previous one answered."""
        previous = self._last

        async def sent() -> list[Outcome]:
            if previous is not None:
                await asyncio.wait([previous])
            out = await asyncio.to_thread(self._post, bodies)
            return [
                Outcome(d["status"], [_error_text((e.get("source") or {}).get("pointer"), d["index"],
                                                  e.get("detail", "")) for e in d.get("errors") or []])
                for d in out["data"]
            ]

        self._last = asyncio.ensure_future(sent())
        return self._last

    async def close(self) -> None:
        pass


# ------------------------------------------------------------------ the command


async def _import(args: argparse.Namespace) -> int:
    from levy.cli.common import Refused

    if not 1 <= args.batch_size <= MAX_BATCH:
        print(f"levy: --batch-size must be 1..{MAX_BATCH}", file=sys.stderr)
        return 2
    if not 0 <= args.planners <= MAX_PLANNERS:
        print(f"levy: --planners must be 0..{MAX_PLANNERS}", file=sys.stderr)
        return 2
    if not args.url:  # the database first, as every command (before reading any file)
        from levy.cli.common import config_from
        from levy.store.db import missing_sqlite_file

        missing = missing_sqlite_file(config_from(args).database_url)
        if missing is not None:
            print(f"levy: no Levy database at {missing}; run levy migrate or pass --database-url", file=sys.stderr)
            return 2
    try:
        formats = [file_format(p, args.format) for p in args.files]
        total = sum(count_rows(p, f) for p, f in zip(args.files, formats, strict=True))
    except (ValueError, OSError) as e:
        print(f"levy: {e}", file=sys.stderr)
        return 2
    if args.url:
        key = args.api_key or os.environ.get("LEVY_API_KEY")
        if not key:
            print("levy: --url needs --api-key or LEVY_API_KEY", file=sys.stderr)
            return 2
        backend: Direct | Remote = Remote(args.url, key)
    else:
        try:
            backend = await Direct.open(args)
        except (ValueError, Refused) as e:
            print(f"levy: {e}", file=sys.stderr)
            return 2
    bar = sys.stderr.isatty() if args.progress is None else args.progress
    progress = Progress(total, bar, sys.stderr)
    counts = dict.fromkeys(("created", "existing", "failed"), 0)
    failed_files: list[FailedRows] = []
    try:
        for path, fmt in zip(args.files, formats, strict=True):
            failed = FailedRows(path, fmt)
            failed_files.append(failed)
            try:
                await _import_file(path, fmt, backend, args.batch_size, failed, progress, counts,
                                   ahead=max(1, args.planners) if isinstance(backend, Direct) else 1)
            finally:
                failed.close()
    except (ValueError, OSError, ConnectionError) as e:
        progress.finish()
        print(f"levy: {e}", file=sys.stderr)
        print(f"levy: stopped; stored so far: {counts['created']} created, {counts['existing']} existing "
              "(run the command again to resume)", file=sys.stderr)
        return 2
    finally:
        await backend.close()
    elapsed = progress.finish()
    n = sum(counts.values())
    print(f"{n} transactions ({progress.rows} rows) in {elapsed:.1f} s ({progress.rows / max(elapsed, 1e-9):,.0f} "
          f"rows/s): {counts['created']} created, {counts['existing']} already stored, {counts['failed']} failed")
    for f in failed_files:
        if f.count:
            print(f"failed: {f.count} transactions written to {f.path} (fix them and import that file)")
    return 1 if counts["failed"] else 0


async def _import_file(path: str, fmt: str, backend: Direct | Remote, size: int, failed: FailedRows,
                       progress: Progress, counts: dict[str, int], *, ahead: int = 1) -> None:
    """Read ``path`` in batches of ``size`` and import them, up to ``ahead`` batches planned ahead
    of the one being written."""
    chunk: list[Pending] = []
    inflight: list[tuple[list[Pending], asyncio.Task[list[Outcome]]]] = []

    async def settle() -> None:
        done, task = inflight.pop(0)
        outcomes = await task
        for p, o in zip(done, outcomes, strict=True):
            counts[o.status] += 1
            if o.status == "failed":
                failed.add(p, o.errors)
        progress.advance(sum(len(p.rows) for p in done))

    async def flush() -> None:
        task = await backend.start([p.body for p in chunk])  # type: ignore[misc]
        inflight.append((list(chunk), task))
        chunk.clear()
        if len(inflight) > ahead:  # one batch written while the next ones are read and planned
            await settle()

    try:
        for item in read_file(path, fmt):
            if item.body is None:
                counts["failed"] += 1
                failed.add(item, [f"line {item.first_row}: {item.error}"])
                progress.advance(len(item.rows))
                continue
            chunk.append(item)
            if len(chunk) >= size:
                await flush()
        if chunk:
            await flush()
        while inflight:
            await settle()
    finally:
        for _, task in inflight:  # stopped by an error: let what was sent finish or fail quietly
            await asyncio.wait([task])
            if not task.cancelled():
                task.exception()  # retrieved: the first error is the one reported
