"""``levy filings prepare|file|list|show|export``, ``levy reports liability`` and
``levy nexus``: filing for operators, through the same application functions as
the admin API (:mod:`levy.app.filings`), so validation, errors and figures are
the API's. JSON output is the API's shape."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from levy.cli.common import add_organization, print_message, print_pages, run_in_organization


def register(sub: Any) -> None:
    filings = sub.add_parser("filings", help="Prepare, file, list and export tax returns.",
                             description="Prepare, file, list and export tax returns (as the /filings API does).")
    fsub = filings.add_subparsers(dest="filings_command", metavar="ACTION", required=True)
    p = fsub.add_parser("prepare", help="Prepare a return for a period and print it as JSON.",
                        description="Prepare the return of a state (or of a jurisdiction outside the US: EU-OSS, CA, "
                        "CA-PR-QC, CA-PR-BC, CA-PR-SK, CA-PR-MB, GB, AU) for a period from the finalized transactions "
                        "dated in it, and print it as JSON. With --file, file it at once (its transactions move "
                        "to 'filed').")
    p.add_argument("--jurisdiction", required=True, metavar="CODE",
                   help="The state, e.g. US-ST-CA, or a return outside the US, e.g. EU-OSS (one calendar quarter).")
    p.add_argument("--period-start", required=True, metavar="YYYY-MM-DD", help="First day of the period.")
    p.add_argument("--period-end", required=True, metavar="YYYY-MM-DD", help="Last day of the period (included).")
    p.add_argument("--file", action="store_true", help="File the return at once (the period must have ended).")
    add_organization(p)
    p.set_defaults(func=_prepare)
    p = fsub.add_parser("file", help="File a prepared return and print it as JSON.",
                        description="File a prepared return (refused when its figures changed since it was "
                        "prepared, or when the period is already filed) and print it as JSON.")
    p.add_argument("filing_id", metavar="FILING_ID", help="The filing's id (fil_...).")
    add_organization(p)
    p.set_defaults(func=_file)
    p = fsub.add_parser("list", help="List filings, newest first.",
                        description="List filings, newest first: id, jurisdiction, period start, period end, status, "
                        "filing tax amount, transactions, filed at.")
    add_organization(p)
    p.set_defaults(func=_list)
    p = fsub.add_parser("show", help="Print a filing as JSON.", description="Print a filing with its return as JSON.")
    p.add_argument("filing_id", metavar="FILING_ID", help="The filing's id (fil_...).")
    add_organization(p)
    p.set_defaults(func=_show)
    p = fsub.add_parser("export", help="Print a return as CSV.",
                        description="Print a return as CSV (one row per jurisdiction and a TOTAL row; amounts in "
                        "minor units), as GET /filings/{id}/export does; with --transactions its second file, one "
                        "row per transaction on the return with its amounts on it (?file=transactions).")
    p.add_argument("filing_id", metavar="FILING_ID", help="The filing's id (fil_...).")
    p.add_argument("--transactions", action="store_true",
                   help="Print the return's transactions instead of its jurisdictions.")
    p.add_argument("--output", metavar="PATH", help="Write the CSV to PATH instead of standard output.")
    add_organization(p)
    p.set_defaults(func=_export)

    reports = sub.add_parser("reports", help="Tax reports.", description="Tax reports.")
    rsub = reports.add_subparsers(dest="reports_command", metavar="REPORT", required=True)
    p = rsub.add_parser("liability", help="Liability totals over a date range, as JSON.",
                        description="The return figures of finalized and filed transactions dated in the range, per "
                        "state and jurisdiction (and, under 'international', per return outside the US in its "
                        "currency), as JSON; files nothing.")
    p.add_argument("--from", dest="date_from", required=True, metavar="YYYY-MM-DD", help="First day (included).")
    p.add_argument("--to", dest="date_to", required=True, metavar="YYYY-MM-DD", help="Last day (included).")
    add_organization(p)
    p.set_defaults(func=_liability)

    p = sub.add_parser("nexus", help="Economic nexus status per state, as JSON.",
                       description="Per state: sales and transactions over the state's measurement period, the "
                       "threshold, the share reached, whether it is exceeded and whether the seller is registered; "
                       "states crossed where the seller is not registered first. Under 'international': the "
                       "thresholds of the EU, Canada, Australia and the UK, each in its own currency.")
    p.add_argument("--as-of", metavar="YYYY-MM-DD", help="Evaluate as of this date (default: today, UTC).")
    add_organization(p)
    p.set_defaults(func=_nexus)


async def _prepare(args: argparse.Namespace) -> int:
    from levy.app.filings import create_filing, filing_currency
    from levy.app.handlers.filings import filing_message
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> str:
        rec = await create_filing(conn, org_id, args.jurisdiction, args.period_start, args.period_end,
                                  "filed" if args.file else None, ref=ref)
        print_message(filing_message(rec, await filing_currency(conn, org_id, rec.jurisdiction, ref=ref)))
        return rec.id

    return await run_in_organization(args, fn, write=True)


async def _file(args: argparse.Namespace) -> int:
    from levy.app.filings import filing_currency, update_filing
    from levy.app.handlers.filings import filing_message
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> str:
        rec = await update_filing(conn, org_id, args.filing_id, "filed", ref=ref)
        print_message(filing_message(rec, await filing_currency(conn, org_id, rec.jurisdiction, ref=ref)))
        return rec.id

    return await run_in_organization(args, fn, write=True)


async def _list(args: argparse.Namespace) -> int:
    from levy.store.filings import list_filings

    async def fn(conn: Any, org_id: str) -> None:
        print("id\tjurisdiction\tperiod_start\tperiod_end\tstatus\tfiling_tax_amount\ttransactions\tfiled_at")
        await print_pages(lambda after: list_filings(conn, org_id, 1000, after), _line)

    return await run_in_organization(args, fn, write=False)


def _line(f: Any) -> str:
    return (f"{f.id}\t{f.jurisdiction}\t{f.period_start.isoformat()}\t{f.period_end.isoformat()}\t"
            f"{f.status}\t{f.filing_tax_amount}\t{f.transaction_count}\t"
            f"{f.filed_at.isoformat() if f.filed_at else '-'}")


async def _show(args: argparse.Namespace) -> int:
    from levy.app.filings import filing_currency, get_filing
    from levy.app.handlers.filings import filing_message
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> None:
        rec = await get_filing(conn, org_id, args.filing_id)
        print_message(filing_message(rec, await filing_currency(conn, org_id, rec.jurisdiction, ref=ref)))

    return await run_in_organization(args, fn, write=False)


async def _export(args: argparse.Namespace) -> int:
    from levy.app.filings import export_csv
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> None:
        text = await export_csv(conn, org_id, args.filing_id, "transactions" if args.transactions else None, ref=ref)
        if args.output:
            with open(args.output, "w", newline="", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)

    return await run_in_organization(args, fn, write=False)


async def _liability(args: argparse.Namespace) -> int:
    from levy.app.filings import liability, liability_international, parse_range
    from levy.app.handlers.filings import liability_message
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> None:
        start, end = parse_range(args.date_from, args.date_to)
        print_message(liability_message(await liability(conn, org_id, start, end, ref=ref),
                                        await liability_international(conn, org_id, start, end, ref=ref)))

    return await run_in_organization(args, fn, write=False)


async def _nexus(args: argparse.Namespace) -> int:
    from levy.app.filings import approaching_share, nexus, nexus_international, parse_date, today
    from levy.app.handlers.filings import nexus_message
    from levy.store import reference_data

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> None:
        as_of = parse_date(args.as_of, "as_of", default=today())
        print_message(nexus_message(as_of, await nexus(conn, org_id, as_of, ref=ref),
                                    await nexus_international(conn, org_id, as_of, ref=ref),
                                    await approaching_share(conn, org_id)))

    return await run_in_organization(args, fn, write=False)
