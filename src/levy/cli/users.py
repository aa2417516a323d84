"""``levy users create|list|set-password``: people of the web console,
through the same application functions as the console (``levy.app.console_service``).

``create`` prints a one-time password (the user chooses their own at first
sign-in) or, with ``--password-prompt``, reads one from the terminal."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from levy.cli.common import add_organization, run_in_organization
from levy.domain.console_users import PASSWORD_MIN, ROLES


def register(sub: Any) -> None:
    users = sub.add_parser("users", help="Manage the people who sign in to the web console.",
                           description="Manage the people who sign in to the web console (/console on the HTTP "
                           "port; docs/console.md). An admin user may create and revoke API keys, attach and "
                           "review certificates, restore customers and invite people; a member only reads.")
    usub = users.add_subparsers(dest="users_command", metavar="ACTION", required=True)

    p = usub.add_parser("create", help="Create a console user and print a one-time password.",
                        description="Create a console user of the organization and print a one-time password "
                        "(one line) that must be changed at first sign-in; with --password-prompt, read the "
                        f"password from the terminal instead (at least {PASSWORD_MIN} characters).")
    p.add_argument("--email", required=True, help="The user's email address (their sign-in name).")
    p.add_argument("--role", required=True, choices=list(ROLES), help="admin (may change things) or member (reads).")
    p.add_argument("--password-prompt", action="store_true", help="Ask for the password instead of printing one.")
    add_organization(p)
    p.set_defaults(func=_create)

    p = usub.add_parser("list", help="List the organization's console users.",
                        description="List the organization's console users: id, email, role (tab-separated).")
    add_organization(p)
    p.set_defaults(func=_list)

    p = usub.add_parser("set-password", help="Set a user's password from a prompt (ends their sessions).",
                        description="Set the password of the organization's console user with this email "
                        "(an email may have an account in several organizations), read from the terminal; every "
                        "session of the user ends.")
    p.add_argument("--email", required=True, help="The user's email address.")
    add_organization(p)
    p.set_defaults(func=_set_password)


def _prompt() -> str | None:
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        print("levy: the two passwords differ", file=sys.stderr)
        return None
    return first


async def _nothing(conn: Any, org: str) -> None:
    return None


async def _typed_password(args: argparse.Namespace) -> str | int:
    """The password typed twice, asked once the database and organization are checked (no transaction
    is held while someone types); or the exit status when either fails."""
    if (status := await run_in_organization(args, _nothing, write=False)) != 0:
        return status
    password = _prompt()
    return 2 if password is None else password


async def _create(args: argparse.Namespace) -> int:
    from levy.app import console_service as console

    password = None
    if args.password_prompt:
        typed = await _typed_password(args)
        if isinstance(typed, int):
            return typed
        password = typed

    async def fn(conn: Any, org: str) -> str:
        user, one_time = await console.create_user(conn, org, args.email, args.role, password)
        if one_time is not None:
            print(one_time)
        else:
            print(f"levy: created {user.email} ({user.role}), {user.id}", file=sys.stderr)
        return str(user.id)

    return await run_in_organization(args, fn, write=True)


async def _list(args: argparse.Namespace) -> int:
    from levy.app import console_service as console

    async def fn(conn: Any, org: str) -> None:
        for u in await console.list_users(conn, org):
            print(f"{u.id}\t{u.email}\t{u.role}")

    return await run_in_organization(args, fn, write=False)


async def _set_password(args: argparse.Namespace) -> int:
    from levy.app import console_service as console

    password = await _typed_password(args)
    if isinstance(password, int):
        return password

    async def fn(conn: Any, org: str) -> str:
        return str((await console.set_password(conn, org, args.email, password)).id)

    return await run_in_organization(args, fn, write=True)
