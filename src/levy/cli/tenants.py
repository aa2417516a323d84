"""``levy organizations create|list`` and ``levy keys create|list|revoke``: tenants
and their API keys.

Scripts rely on this contract: ``levy keys create`` prints the new secret and
nothing else on stdout."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from levy.cli.common import add_db, audit_cli, print_pages, with_store


def register(sub: Any) -> None:
    orgs = sub.add_parser("organizations", help="Manage organizations (tenants).",
                          description="Manage organizations (tenants).")
    osub = orgs.add_subparsers(dest="org_command", metavar="ACTION", required=True)
    p = osub.add_parser("create", help="Create an organization and print its id.",
                        description="Create an organization and print its id (one line).")
    p.add_argument("--name", required=True, help="Organization name.")
    add_db(p)
    p.set_defaults(func=_org_create)
    p = osub.add_parser("list", help="List organizations.", description="List organizations: id and name.")
    add_db(p)
    p.set_defaults(func=_org_list)

    keys = sub.add_parser("keys", help="Manage API keys.", description="Manage API keys.")
    ksub = keys.add_subparsers(dest="key_command", metavar="ACTION", required=True)
    p = ksub.add_parser("create", help="Create an API key and print its secret (once).",
                        description="Create an API key and print its secret, and nothing else, on stdout (one line). "
                        "If the database has no organization yet, one is created.")
    p.add_argument("--name", required=True, help="Key name, to recognise it in lists.")
    p.add_argument("--organization", metavar="ORG_ID",
                   help="Organization of the key (default: the only organization; required when there are several).")
    p.add_argument("--admin", action="store_true", help="Admin scope: may use the organization/admin API.")
    add_db(p)
    p.set_defaults(func=_keys_create)
    p = ksub.add_parser("list", help="List API keys (never their secrets).",
                        description="List API keys: id, organization, name, prefix, admin, created, last used, revoked.")
    p.add_argument("--organization", metavar="ORG_ID", help="Only this organization's keys.")
    add_db(p)
    p.set_defaults(func=_keys_list)
    p = ksub.add_parser("revoke", help="Revoke an API key.", description="Revoke an API key; it stops working at once.")
    p.add_argument("key_id", metavar="KEY_ID", help="The key's id (key_...).")
    add_db(p)
    p.set_defaults(func=_keys_revoke)


async def _org_create(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlOrganizations

    async def run(conn: Any) -> int:
        org = await SqlOrganizations(conn).create(args.name)
        await audit_cli(conn, org.id, args, org.id, f"name={args.name}")
        print(org.id)
        return 0

    return await with_store(args, run)


async def _org_list(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from levy.store.tables.foundation import organizations

    async def run(conn: Any) -> int:
        for row in (await conn.execute(select(organizations).order_by(organizations.c.id))).all():
            print(f"{row.id}\t{row.name}")
        return 0

    return await with_store(args, run, write=False)


async def _keys_create(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys, SqlOrganizations

    async def run(conn: Any) -> int:
        orgs = SqlOrganizations(conn)
        if args.organization:
            org = await orgs.get(args.organization)
            if org is None:
                print(f"levy: no organization {args.organization}", file=sys.stderr)
                return 2
        else:
            n = await orgs.count()
            if n == 0:
                org = await orgs.create("Default organization")
            elif n == 1:
                org = await orgs.first()
            else:
                print("levy: there are several organizations; pass --organization ORG_ID", file=sys.stderr)
                return 2
        assert org is not None
        key, secret = await SqlApiKeys(conn).create(org.id, args.name, args.admin)
        await audit_cli(conn, org.id, args, key.id, f"{args.name} ({'admin' if args.admin else 'plain'})")
        print(secret)
        return 0

    return await with_store(args, run)


async def _keys_list(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys

    def ts(v: Any) -> str:
        return v.isoformat() if v else "-"

    def line(k: Any) -> str:
        return (f"{k.id}\t{k.organization_id}\t{k.name}\t{k.prefix}\t{'yes' if k.admin else 'no'}\t"
                f"{ts(k.created_at)}\t{ts(k.last_used_at)}\t{ts(k.revoked_at)}")

    async def run(conn: Any) -> int:
        keys = SqlApiKeys(conn)
        print("id\torganization\tname\tprefix\tadmin\tcreated_at\tlast_used_at\trevoked_at")
        await print_pages(lambda after: keys.list(args.organization, 1000, after), line)
        return 0

    return await with_store(args, run, write=False)


async def _keys_revoke(args: argparse.Namespace) -> int:
    from levy.store.keys import SqlApiKeys

    async def run(conn: Any) -> int:
        rec = await SqlApiKeys(conn).revoke(None, args.key_id)
        if rec is None:
            print(f"levy: no key {args.key_id}", file=sys.stderr)
            return 2
        await audit_cli(conn, rec.organization_id, args, rec.id, f"{rec.name} ({rec.prefix})")
        print(f"revoked {rec.id}")
        return 0

    return await with_store(args, run)
