"""Effective periods: the one rule for "is this date within that period"."""

from __future__ import annotations

from datetime import date


def within(on: date, start: date | None, end: date | None) -> bool:
    """``on`` lies in the inclusive period [start, end]; a missing bound is open."""
    return (start is None or start <= on) and (end is None or on <= end)
