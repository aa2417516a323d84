"""Effective periods: the one rule for "is this date within that period", and the
dates that reports, returns and nexus studies take."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Final

from levy.domain.errors import ValidationFailed

#: The dates a liability report, a return (filing) period and a nexus study take.
#: A period's end is followed by the day after it, and a study looks back up to two
#: years and forward to the next month: the range leaves room on both sides (past it,
#: date arithmetic overflows). 1900: US sales taxes began in the 1930s.
FIRST_DATE: Final = date(1900, 1, 1)
LAST_DATE: Final = date(9998, 12, 31)


def within(on: date, start: date | None, end: date | None) -> bool:
    """``on`` lies in the inclusive period [start, end]; a missing bound is open."""
    return (start is None or start <= on) and (end is None or on <= end)


class Dated:
    """A value in force from its ``effective_from`` to its ``effective_to`` (inclusive; None: no end)
    that a dataclass declares: :meth:`covers` is the one test of "in force on this day"."""

    __slots__ = ()
    effective_from: date
    effective_to: date | None

    def covers(self, on: date) -> bool:
        return within(on, self.effective_from, self.effective_to)


def check_report_date(on: date, *, pointer: str | None = None, parameter: str | None = None) -> date:
    """``on`` within [FIRST_DATE, LAST_DATE], else 422 at ``pointer`` (body) or ``parameter`` (query)."""
    if FIRST_DATE <= on <= LAST_DATE:
        return on
    name = parameter or (pointer or "").rsplit("/", 1)[-1]
    raise ValidationFailed(
        f"'{name}' is {on.isoformat()}: reports, returns and nexus studies take dates from "
        f"{FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}.",
        pointer=pointer, parameter=parameter, input=on.isoformat(),
    )


def calendar_months(start: date, end: date) -> list[tuple[date, date]]:
    """The calendar months that the inclusive range [start, end] touches, in order, each
    as its first and last day clipped to the range (so the first and last may be partial)."""
    out: list[tuple[date, date]] = []
    first = start
    while first <= end:
        next_first = date(first.year + (first.month == 12), first.month % 12 + 1, 1)
        out.append((first, min(end, next_first - timedelta(days=1))))
        first = next_first
    return out


def trailing_months(today: date, months: int = 12) -> tuple[date, date]:
    """The ``months`` calendar months up to ``today``: the first day of the month
    ``months - 1`` before today's, and today (12 on 2026-11-24: 2025-12-01..2026-11-24)."""
    index = today.year * 12 + today.month - 1 - (months - 1)
    return date(index // 12, index % 12 + 1, 1), today
