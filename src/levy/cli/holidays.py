"""``levy holidays``: the built-in sales tax holidays, listed and filtered."""

from __future__ import annotations

import argparse
import json
from datetime import date
from typing import Any

DESCRIPTION = (
    "List the sales tax holidays Levy applies (built-in data, src/levy/data/tax/holidays.json; no database): "
    "state, first and last day (inclusive, on the transaction date), levels exempted (state, or state and local), "
    "the product tax codes with their price limit per item ('under' or 'at or below'), the local jurisdictions "
    "that opt out, and the source. Calculations dated on those days exempt qualifying lines and name the holiday "
    "on the rows (docs/tax-engine.md, 'Sales tax holidays'). --not-included lists the holidays left out and why."
)


def register(sub: Any) -> None:
    p = sub.add_parser("holidays", help="List the sales tax holidays (built-in data).", description=DESCRIPTION)
    p.add_argument("--state", metavar="ST", type=str.upper, help="Only this state's holidays (two letters: TX).")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--year", type=int, metavar="YYYY", help="Only the holidays that start in this year.")
    when.add_argument("--on", type=date.fromisoformat, metavar="YYYY-MM-DD",
                      help="Only the holidays in force on this day.")
    p.add_argument("--json", action="store_true", help="One JSON object per holiday, one a line.")
    p.add_argument("--not-included", action="store_true",
                   help="List the holidays the data leaves out (not confirmed, or finer than the tax codes) and why.")
    p.set_defaults(func=_holidays)


async def _holidays(args: argparse.Namespace) -> int:
    from levy.ratefiles.builtin import holidays_not_included, load_holidays

    if args.not_included:
        for e in holidays_not_included():
            if args.state is None or e["state"] == args.state:
                print(f"{e['state']}  {e['what']}: {e['why']}")
        return 0
    chosen = [h for h in load_holidays().all()
              if (args.state is None or h.state == args.state)
              and (args.year is None or h.first_day.year == args.year)
              and (args.on is None or h.covers(args.on))]
    for h in chosen:
        if args.json:
            print(json.dumps({
                "state": h.state, "name": h.name, "first_day": h.first_day.isoformat(),
                "last_day": h.last_day.isoformat(), "levels": h.levels,
                "items": [{"codes": list(i.codes), "label": i.label, "limit": i.limit, "limit_mode": i.limit_mode,
                           "per": i.per} for i in h.items],
                "local_opt_outs": list(h.local_opt_outs), "source": h.source, "source_url": h.source_url,
                "note": h.note,
            }))
            continue
        levels = "state and local" if h.levels == "state_and_local" else "state only"
        print(f"{h.state}  {h.first_day.isoformat()} .. {h.last_day.isoformat()}  {h.name} ({levels})")
        for i in h.items:
            print(f"    {i.label}, {i.limit_text()}: {', '.join(i.codes)}")
        if h.local_opt_outs:
            print(f"    opted out: {', '.join(h.local_opt_outs)}")
        print(f"    source: {h.source} {h.source_url}".rstrip())
    if not chosen and not args.json:
        print("no sales tax holiday matches")
    return 0
