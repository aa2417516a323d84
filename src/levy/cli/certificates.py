"""``levy certificates``: manage a customer's exemption certificates from the
command line, through the same application functions as the API handlers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from levy.cli.common import add_db, audit_cli, print_pages, with_store
from levy.domain.exemptions import CERTIFICATE_STATUSES, EXEMPTION_TYPES, Certificate

HEADER = "id\tcustomer_id\tjurisdiction\texemption_type\tstatus\tstarts_at\texpires_at\tcreated_at\tupdated_at"


def _line(c: Certificate) -> str:
    def d(v: Any) -> str:
        return "-" if v is None else v.isoformat()

    return "\t".join([c.id, c.customer_id, c.jurisdiction, c.exemption_type, c.status, d(c.starts_at),
                      d(c.expires_at), d(c.created_at), d(c.updated_at)])


def _print(cert: Certificate) -> str:
    """Print the certificate (header and one line); its audit target, ``customer_id/certificate_id``."""
    print(HEADER)
    print(_line(cert))
    return f"{cert.customer_id}/{cert.id}"


def register(sub: Any) -> None:
    certs = sub.add_parser("certificates", help="Manage customers' exemption certificates.",
                           description="Manage a customer's exemption certificates (the same rules as the "
                           "/customers/{id}/exemption-certificates API).")
    csub = certs.add_subparsers(dest="cert_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--organization", metavar="ORG_ID", required=True,
                       help="Organization that owns the customer (org_...).")
        add_db(p)

    p = csub.add_parser("list", help="List a customer's certificates (all statuses).",
                        description="List a customer's certificates, all statuses, newest first: one tab-separated "
                        "line each after a header line.")
    p.add_argument("customer_id", metavar="CUSTOMER_ID", help="The customer's id (cust_...).")
    common(p)
    p.set_defaults(func=_list)

    p = csub.add_parser("add", help="Add a certificate to a customer.",
                        description="Add a certificate to a customer and print it (header and one line).")
    p.add_argument("customer_id", metavar="CUSTOMER_ID", help="The customer's id (cust_...).")
    p.add_argument("--jurisdiction", required=True, help="State jurisdiction code, e.g. US-ST-CA.")
    p.add_argument("--type", dest="exemption_type", required=True, choices=EXEMPTION_TYPES,
                   help="Exemption type.")
    p.add_argument("--status", choices=CERTIFICATE_STATUSES, help="Status (default in_review).")
    p.add_argument("--starts-at", metavar="YYYY-MM-DD", help="First day covered (default: no start).")
    p.add_argument("--expires-at", metavar="YYYY-MM-DD", help="Last day covered (default: no expiry).")
    common(p)
    p.set_defaults(func=_add)

    p = csub.add_parser("set-status", help="Change a certificate's status.",
                        description="Change a certificate's status (valid certificates count in the customer's "
                        "exemption) and print it.")
    p.add_argument("customer_id", metavar="CUSTOMER_ID", help="The customer's id (cust_...).")
    p.add_argument("certificate_id", metavar="CERTIFICATE_ID", help="The certificate's id (cexc_...).")
    p.add_argument("status", metavar="STATUS", choices=CERTIFICATE_STATUSES,
                   help=f"New status: {', '.join(CERTIFICATE_STATUSES)}.")
    common(p)
    p.set_defaults(func=_set_status)

    p = csub.add_parser("remove", help="Remove a certificate.", description="Remove a certificate from a customer.")
    p.add_argument("customer_id", metavar="CUSTOMER_ID", help="The customer's id (cust_...).")
    p.add_argument("certificate_id", metavar="CERTIFICATE_ID", help="The certificate's id (cexc_...).")
    common(p)
    p.set_defaults(func=_remove)


async def _run(args: argparse.Namespace, fn: Callable[[Any], Any], *, write: bool = True) -> int:
    """``fn(conn)`` in one transaction; a write records its audit entry there (the object ``fn``
    returns: ``customer_id/certificate_id``)."""
    from levy.domain.errors import LevyError

    async def run(conn: Any) -> int:
        target = await fn(conn)
        if write:
            await audit_cli(conn, args.organization, args, target)
        return 0

    try:
        return await with_store(args, run)
    except LevyError as e:
        for item in e.items:
            where = f" ({item.pointer.lstrip('/').replace('/', '.')})" if item.pointer else ""
            print(f"levy: {item.detail}{where}", file=sys.stderr)
        return 2


async def _list(args: argparse.Namespace) -> int:
    from levy.app.customers import list_certificates
    from levy.domain.pagination import MAX_LIMIT, page_request

    async def fn(conn: Any) -> None:
        print(HEADER)
        await print_pages(lambda after: list_certificates(conn, args.organization, args.customer_id,
                                                          page_request(MAX_LIMIT, after)), _line)

    return await _run(args, fn, write=False)


async def _add(args: argparse.Namespace) -> int:
    from levy.app.customers import add_certificate

    async def fn(conn: Any) -> str:
        cert = await add_certificate(conn, args.organization, args.customer_id, {
            "jurisdiction": args.jurisdiction, "exemption_type": args.exemption_type, "status": args.status,
            "starts_at": args.starts_at, "expires_at": args.expires_at,
        })
        return _print(cert)

    return await _run(args, fn)


async def _set_status(args: argparse.Namespace) -> int:
    from levy.app.customers import update_certificate

    async def fn(conn: Any) -> str:
        cert = await update_certificate(conn, args.organization, args.customer_id, args.certificate_id,
                                        {"status": args.status})
        return _print(cert)

    return await _run(args, fn)


async def _remove(args: argparse.Namespace) -> int:
    from levy.app.customers import remove_certificate

    async def fn(conn: Any) -> str:
        await remove_certificate(conn, args.organization, args.customer_id, args.certificate_id)
        print(f"removed {args.certificate_id}")
        return f"{args.customer_id}/{args.certificate_id}"

    return await _run(args, fn)
