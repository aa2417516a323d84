"""``levy locations create|list|get|update|archive|unarchive``: the
organization's business locations for operators, through the same
application functions as the admin API (``levy.app.locations``), so validation
and errors are the API's. Locations print as JSON in the API's shape; ``list``
prints tab-separated columns."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from levy.cli.common import Command, add_organization, print_message, print_pages, run_in_organization

HEADER = "id\tname\tdefault\tline1\tcity\tstate\tpostal_code\tcountry\teffective_from\teffective_to\tarchived_at"
_ADDRESS_OPTIONS = ("line1", "line2", "city", "state", "postal_code", "country")


def register(sub: Any) -> None:
    locs = sub.add_parser("locations", help="Manage the organization's business locations (ship-from addresses).",
                          description="Manage the organization's business locations: the places its sales ship "
                          "from; the default one is the ship-from address of line items that name none (as "
                          "/organization/locations does).")
    lsub = locs.add_subparsers(dest="locations_command", metavar="ACTION", required=True)

    p = lsub.add_parser("create", help="Record a location and print it as JSON.",
                        description="Record a location and print it as JSON (the API's shape). A US address needs "
                        "a state and a ZIP code that lies in it. Invalid values store nothing and exit 2.")
    p.add_argument("--name", required=True, help="Name, e.g. 'Austin warehouse' (1..200 characters).")
    _address_options(p, required=True)
    p.add_argument("--default", action="store_true",
                   help="Make it the default ship-from location (the previous default stops being one).")
    p.add_argument("--effective-from", required=True, metavar="YYYY-MM-DD",
                   help="First day sales ship from here.")
    p.add_argument("--effective-to", metavar="YYYY-MM-DD", help="Last day (default: open-ended).")
    add_organization(p)
    p.set_defaults(func=_create)

    p = lsub.add_parser("list", help="List locations, newest first.",
                        description="List locations, newest first, one tab-separated line each after a header "
                        "line: id, name, default, line1, city, state, postal_code, country, effective_from, "
                        "effective_to, archived_at ('-' for none).")
    p.add_argument("--include-archived", action="store_true", help="Also list archived locations.")
    add_organization(p)
    p.set_defaults(func=_list)

    p = lsub.add_parser("get", help="Print a location as JSON.", description="Print a location as JSON.")
    p.add_argument("location_id", metavar="LOCATION_ID", help="The location's id (loc_...).")
    add_organization(p)
    p.set_defaults(func=_get)

    p = lsub.add_parser("update", help="Change some fields of a location and print it as JSON.",
                        description="Change the fields named by the options (the others, including the other "
                        "parts of the address, stay) and print the location as JSON. Pass '' to --line2 or "
                        "--effective-to to clear it. Archived locations cannot be changed (unarchive first).")
    p.add_argument("location_id", metavar="LOCATION_ID", help="The location's id (loc_...).")
    p.add_argument("--name", help="New name.")
    _address_options(p, required=False)
    p.add_argument("--default", dest="is_default", action=argparse.BooleanOptionalAction, default=None,
                   help="--default makes it the default ship-from location (the previous default stops being "
                   "one); --no-default leaves the organization without a default.")
    p.add_argument("--effective-from", metavar="YYYY-MM-DD", help="New first day.")
    p.add_argument("--effective-to", metavar="YYYY-MM-DD", help="New last day ('' for open-ended).")
    add_organization(p)
    p.set_defaults(func=_update)

    for action, doing in (("archive", "Archive a location: it stops being the default and is no longer listed "
                                      "(list --include-archived shows it)."),
                          ("unarchive", "Undo the archiving of a location (it does not become the default again).")):
        p = lsub.add_parser(action, help=doing.split(":")[0].split(" (")[0] + ".", description=doing)
        p.add_argument("location_id", metavar="LOCATION_ID", help="The location's id (loc_...).")
        add_organization(p)
        p.set_defaults(func=_archive if action == "archive" else _unarchive)


def _address_options(p: argparse.ArgumentParser, *, required: bool) -> None:
    p.add_argument("--line1", required=required, help="Street address.")
    p.add_argument("--line2", help="Suite, unit or floor.")
    p.add_argument("--city", required=required, help="City.")
    p.add_argument("--state", help="State code, e.g. TX (required for a US address).")
    p.add_argument("--postal-code", metavar="ZIP", help="ZIP code 12345 or 12345-6789 (required for a US address).")
    p.add_argument("--country", metavar="CC", help="Two-letter country code (default US).")


def _zips() -> Any:
    from levy.app.locations import zip_checker
    from levy.ratefiles.builtin import zip_directory

    return zip_checker(zip_directory())


def _print(loc: Any) -> str:
    """Print the location; its id."""
    from levy.app.handlers.locations import location_message

    print_message(location_message(loc))
    return str(loc.id)


def _line(loc: Any) -> str:
    def d(v: Any) -> str:
        return "-" if v is None else v if isinstance(v, str) else v.isoformat()

    a = loc.address
    return "\t".join([loc.id, loc.name, "yes" if loc.is_default else "no", a.line1, a.city, d(a.state),
                      d(a.postal_code), a.country, d(loc.effective_from), d(loc.effective_to), d(loc.archived_at)])


async def _create(args: argparse.Namespace) -> int:
    from levy.app.locations import create_location
    from levy.domain.locations import LocationInput

    given = LocationInput(
        name=args.name, is_default=args.default, effective_from=args.effective_from, effective_to=args.effective_to,
        **{n: getattr(args, n) for n in _ADDRESS_OPTIONS},
    )

    async def fn(conn: Any, org_id: str) -> str:
        return _print(await create_location(conn, org_id, given, _zips()))

    return await run_in_organization(args, fn, write=True)


async def _list(args: argparse.Namespace) -> int:
    from levy.app.locations import list_locations

    async def fn(conn: Any, org_id: str) -> None:
        print(HEADER)
        await print_pages(lambda after: list_locations(conn, org_id, 1000, after, args.include_archived), _line)

    return await run_in_organization(args, fn, write=False)


async def _update(args: argparse.Namespace) -> int:
    from levy.app.locations import update_location

    changes: dict[str, object] = {}
    for name in ("name", "is_default", "effective_from", "effective_to", *_ADDRESS_OPTIONS):
        value = getattr(args, name)
        if value is not None:
            changes[name] = None if value == "" and name in ("line2", "effective_to") else value
    if not changes:
        print("levy: nothing to change; pass at least one of --name, --line1, --line2, --city, --state, "
              "--postal-code, --country, --default/--no-default, --effective-from, --effective-to", file=sys.stderr)
        return 2

    async def fn(conn: Any, org_id: str) -> str:
        return _print(await update_location(conn, org_id, args.location_id, changes, _zips()))

    return await run_in_organization(args, fn, write=True)


def _by_id(action: str, *, write: bool) -> Command:
    """A command that calls ``levy.app.locations.<action>(conn, org_id, location_id)`` and prints the location."""

    async def command(args: argparse.Namespace) -> int:
        from levy.app import locations as app

        async def fn(conn: Any, org_id: str) -> str:
            return _print(await getattr(app, action)(conn, org_id, args.location_id))

        return await run_in_organization(args, fn, write=write)

    return command


_get = _by_id("show_location", write=False)
_archive = _by_id("archive_location", write=True)
_unarchive = _by_id("unarchive_location", write=True)
