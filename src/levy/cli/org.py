"""``levy settings show|set`` and ``levy registrations list|add|remove``:
organization administration for operators, through the same application
functions as the admin API (``levy.app.organization``), so validation and
errors are the API's."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from levy.cli.common import add_organization, print_pages, run_in_organization
from levy.domain.settings import CERTIFICATE_TREATMENTS


def register(sub: Any) -> None:
    settings = sub.add_parser("settings", help="Show or change an organization's tax settings.",
                              description="Show or change an organization's tax settings (as GET/PATCH "
                              "/organization/settings do).")
    ssub = settings.add_subparsers(dest="settings_command", metavar="ACTION", required=True)
    p = ssub.add_parser("show", help="Print the settings as JSON.",
                        description="Print the organization's settings as JSON (the API's shape).")
    add_organization(p)
    p.set_defaults(func=_settings_show)
    p = ssub.add_parser("set", help="Change some settings and print the result as JSON.",
                        description="Change the settings named by the options (the others stay) and print the "
                        "result as JSON. Invalid values change nothing and exit 2.")
    p.add_argument("--default-tax-codes", metavar="CODE[,CODE]",
                   help="Tax codes for products without their own, comma-separated: a full tax code and optional "
                   "attributes, e.g. SOFTWARE.SAAS.GENERAL,_B2B (never SALES_TAX).")
    p.add_argument("--exemption-management", choices=["on", "off"],
                   help="on: calculations apply exemption certificates; off: certificates are ignored.")
    p.add_argument("--certificate-treatment", choices=list(CERTIFICATE_TREATMENTS),
                   help="certificate_only: a certificate exempts every sale in its state; "
                   "certificate_and_product_tax_code: only lines with the matching attribute (e.g. _RESALE).")
    p.add_argument("--filing-currencies", metavar="CC=CUR[,CC=CUR]",
                   help="The currency of the organization's returns per country, e.g. GB=GBP,CA=CAD (replaces the "
                   "organization's choices; a country left out goes back to its default; '' resets all). US returns "
                   "are always in USD.")
    p.add_argument("--nexus-approaching-share", metavar="SHARE",
                   help="The share of a state's nexus threshold from which it is 'approaching' (the console's nexus "
                   "page, the nexus.threshold_approaching event): a decimal above 0 and below 1, default 0.8.")
    p.add_argument("--name", help="The organization's name.")
    add_organization(p)
    p.set_defaults(func=_settings_set)

    regs = sub.add_parser("registrations", help="Manage the seller's registrations.",
                          description="Manage the jurisdictions where the seller is registered to collect tax.")
    rsub = regs.add_subparsers(dest="registrations_command", metavar="ACTION", required=True)
    p = rsub.add_parser("list", help="List registrations, newest first.",
                        description="List registrations, newest first: id, jurisdiction, number, effective from, "
                        "effective to, created.")
    add_organization(p)
    p.set_defaults(func=_registrations_list)
    p = rsub.add_parser("add", help="Record a registration and print its id.",
                        description="Record a registration and print its id (one line). A registration overlapping "
                        "another in the same jurisdiction is refused (exit 2).")
    p.add_argument("--jurisdiction", required=True, metavar="CODE",
                   help="Jurisdiction code: US-ST-CA for a state, US-CO-/US-CI-/US-SP-<ST>-<NAME> for a local one.")
    p.add_argument("--number", metavar="TEXT", help="Registration (permit) number, optional.")
    p.add_argument("--effective-from", required=True, metavar="YYYY-MM-DD", help="First day covered.")
    p.add_argument("--effective-to", metavar="YYYY-MM-DD", help="Last day covered (default: open-ended).")
    add_organization(p)
    p.set_defaults(func=_registrations_add)
    p = rsub.add_parser("remove", help="Remove a registration.", description="Remove a registration.")
    p.add_argument("registration_id", metavar="REGISTRATION_ID", help="The registration's id (reg_...).")
    add_organization(p)
    p.set_defaults(func=_registrations_remove)


def _settings_json(view: Any) -> str:
    from levy.store.reference_data import filing_currencies

    return json.dumps({
        "organization_id": view.organization_id,
        "name": view.name,
        "default_tax_codes": list(view.settings.default_tax_codes),
        "exemption_management": view.settings.exemption_management,
        "certificate_treatment": view.settings.certificate_treatment,
        "filing_currencies": view.settings.filing_currency_map(filing_currencies()),
        "nexus_approaching_share": str(view.settings.nexus_approaching_share),
        "updated_at": view.updated_at.isoformat(),
    }, indent=2)


async def _settings_show(args: argparse.Namespace) -> int:
    from levy.app.organization import show_settings

    async def fn(conn: Any, org_id: str) -> None:
        print(_settings_json(await show_settings(conn, org_id)))

    return await run_in_organization(args, fn, write=False)


async def _settings_set(args: argparse.Namespace) -> int:
    from levy.app.organization import change_settings
    from levy.domain.organization import SettingsChange
    from levy.store import reference_data

    changes: dict[str, object] = {}
    if args.default_tax_codes is not None:
        changes["default_tax_codes"] = [c.strip() for c in args.default_tax_codes.split(",") if c.strip()]
    if args.exemption_management is not None:
        changes["exemption_management"] = args.exemption_management == "on"
    if args.certificate_treatment is not None:
        changes["certificate_treatment"] = args.certificate_treatment
    if args.name is not None:
        changes["name"] = args.name
    if args.filing_currencies is not None:
        pairs = [p.strip() for p in args.filing_currencies.split(",") if p.strip()]
        if any(p.count("=") != 1 for p in pairs):
            print("levy: --filing-currencies takes COUNTRY=CURRENCY pairs separated by commas, e.g. GB=GBP,CA=CAD",
                  file=sys.stderr)
            return 2
        changes["filing_currencies"] = dict(tuple(x.strip() for x in p.split("=")) for p in pairs)
    if args.nexus_approaching_share is not None:
        changes["nexus_approaching_share"] = args.nexus_approaching_share
    if not changes:
        print("levy: nothing to change; pass at least one of --default-tax-codes, --exemption-management, "
              "--certificate-treatment, --filing-currencies, --nexus-approaching-share, --name", file=sys.stderr)
        return 2

    ref = reference_data.load()

    async def fn(conn: Any, org_id: str) -> str:
        print(_settings_json(await change_settings(conn, org_id, SettingsChange(**changes), ref=ref)))
        return org_id

    return await run_in_organization(args, fn, write=True)


def _registration_line(r: Any) -> str:
    return (f"{r.id}\t{r.jurisdiction}\t{r.registration_number or '-'}\t{r.effective_from.isoformat()}\t"
            f"{r.effective_to.isoformat() if r.effective_to else '-'}\t{r.created_at.isoformat()}")


async def _registrations_list(args: argparse.Namespace) -> int:
    from levy.app.organization import list_registrations

    async def fn(conn: Any, org_id: str) -> None:
        print("id\tjurisdiction\tregistration_number\teffective_from\teffective_to\tcreated_at")
        await print_pages(lambda after: list_registrations(conn, org_id, 1000, after), _registration_line)

    return await run_in_organization(args, fn, write=False)


async def _registrations_add(args: argparse.Namespace) -> int:
    from levy.app.organization import add_registration

    async def fn(conn: Any, org_id: str) -> str:
        rec = await add_registration(conn, org_id, args.jurisdiction, args.number, args.effective_from,
                                     args.effective_to)
        print(rec.id)
        return str(rec.id)

    return await run_in_organization(args, fn, write=True)


async def _registrations_remove(args: argparse.Namespace) -> int:
    from levy.app.organization import remove_registration

    async def fn(conn: Any, org_id: str) -> str:
        await remove_registration(conn, org_id, args.registration_id)
        print(f"removed {args.registration_id}")
        return str(args.registration_id)

    return await run_in_organization(args, fn, write=True)
