"""Calendar months of a date range (the console's liability-by-month chart)."""

from __future__ import annotations

from datetime import date

from levy.domain.periods import calendar_months, trailing_months


def test_months_are_clipped_to_the_range_and_cross_the_year() -> None:
    assert calendar_months(date(2023, 12, 20), date(2024, 3, 2)) == [
        (date(2023, 12, 20), date(2023, 12, 31)),
        (date(2024, 1, 1), date(2024, 1, 31)),
        (date(2024, 2, 1), date(2024, 2, 29)),  # 2024 is a leap year
        (date(2024, 3, 1), date(2024, 3, 2)),
    ]
    assert calendar_months(date(2026, 2, 3), date(2026, 2, 3)) == [(date(2026, 2, 3), date(2026, 2, 3))]
    assert calendar_months(date(2026, 2, 4), date(2026, 2, 3)) == []


def test_trailing_months_start_on_the_first_of_the_month() -> None:
    # 12 months up to 2026-11-24: December 2025 to November 2026.
    assert trailing_months(date(2026, 11, 24)) == (date(2025, 12, 1), date(2026, 11, 24))
    assert trailing_months(date(2026, 12, 31)) == (date(2026, 1, 1), date(2026, 12, 31))
    assert trailing_months(date(2026, 1, 5), 1) == (date(2026, 1, 1), date(2026, 1, 5))
    assert len(calendar_months(*trailing_months(date(2026, 3, 31)))) == 12
