"""Filing rules as pure checks: state code, period, statuses, double filing.

The wiring calls them before it prepares or files a return; every refusal is a
:class:`~levy.domain.errors.LevyError` of the one hierarchy.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date
from typing import Literal

from levy.domain.errors import Conflict, FailedPrecondition, LevyError, ValidationFailed
from levy.domain.jurisdictions import US_STATES
from levy.domain.nexus import NexusThresholds, threshold_for
from levy.domain.periods import check_report_date

FilingStatus = Literal["prepared", "filed"]
FILING_STATUSES: tuple[str, ...] = ("prepared", "filed")

_STATE_CODE = re.compile(r"US-ST-(?P<state>[A-Z]{2})\Z")


def has_sales_tax(thresholds: NexusThresholds, state: str, on: date) -> bool:
    """Whether ``state`` levies a sales tax a return is filed for on ``on`` (from the nexus
    ``thresholds``: a state without an economic nexus threshold has no sales tax; AK's remote seller
    code counts)."""
    t = threshold_for(thresholds, state, on)
    return t is not None and t.has_threshold


def validate_state_code(
    code: object,
    *,
    on: date,
    pointer: str = "/jurisdiction",
    thresholds: NexusThresholds | None = None,
    taxing_states: Collection[str] | None = None,
) -> str:
    """Return the two-letter state of ``code`` (``US-ST-CA`` -> ``CA``), else 422 at ``pointer``.

    The code must be state level and name a US state or DC with a sales tax on ``on`` (the
    ``taxing_states`` given, else :func:`has_sales_tax` of the nexus ``thresholds``).
    """
    if taxing_states is None and thresholds is None:
        raise TypeError("validate_state_code needs the nexus thresholds or the taxing states")
    if not isinstance(code, str) or not code:
        raise ValidationFailed("A filing names a state jurisdiction such as 'US-ST-CA'.", pointer=pointer, input=code)
    m = _STATE_CODE.match(code)
    if m is None:
        hint = ""
        if _STATE_CODE.match(code.upper()):
            hint = f" (codes are upper-case: did you mean '{code.upper()}'?)"
        elif code.startswith("US-ST-") or code[:6] in ("US-CO-", "US-CI-", "US-SP-"):
            hint = " (returns are filed per state; local jurisdictions are reported on their state's return)"
        raise ValidationFailed(
            f"'{code}' is not a state jurisdiction code{hint}; expected 'US-ST-XX', e.g. 'US-ST-CA'.",
            pointer=pointer, input=code,
        )
    state = m["state"]
    if state not in US_STATES:
        raise ValidationFailed(f"'{code}': '{state}' is not a US state or DC.", pointer=pointer, input=code)
    if taxing_states is not None:
        taxing = state in taxing_states
    else:
        assert thresholds is not None
        taxing = has_sales_tax(thresholds, state, on)
    if not taxing:
        raise ValidationFailed(
            f"'{code}': {US_STATES[state]} has no sales tax; there is no return to file.", pointer=pointer, input=code
        )
    return state


def _parse_date(value: object, pointer: str) -> date:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            if len(value) == 10:
                return check_report_date(date.fromisoformat(value), pointer=pointer)
        except ValueError:
            pass
    raise ValidationFailed("Expected a date in the form YYYY-MM-DD.", pointer=pointer, input=value)


def parse_period(
    period_start: object,
    period_end: object,
    *,
    start_pointer: str = "/period_start",
    end_pointer: str = "/period_end",
) -> tuple[date, date]:
    """Both dates (``YYYY-MM-DD``, inclusive), ``period_start <= period_end``; all errors together."""
    errors: list[LevyError] = []
    dates: list[date | None] = []
    for value, ptr in ((period_start, start_pointer), (period_end, end_pointer)):
        try:
            dates.append(_parse_date(value, ptr))
        except ValidationFailed as exc:
            errors.append(exc)
            dates.append(None)
    if errors:
        raise ValidationFailed.many(errors)
    start, end = dates
    assert start is not None and end is not None
    if start > end:
        raise ValidationFailed(
            f"The period starts ({start.isoformat()}) after it ends ({end.isoformat()}).", pointer=end_pointer,
            input=end.isoformat(),
        )
    return start, end


def check_period_ended(period_end: date, today: date, pointer: str = "/status") -> None:
    """A period can be filed only once it has ended (``period_end`` before ``today``); preparing is always allowed."""
    if period_end >= today:
        raise FailedPrecondition(
            f"The period ends on {period_end.isoformat()}: it can be filed from the day after; "
            "prepare the return without filing it until then.",
            pointer=pointer, meta={"period_end": period_end.isoformat()},
        )


def validate_create_status(value: object, pointer: str = "/status") -> FilingStatus:
    """``status`` on create: absent (None) means ``prepared``; ``filed`` files at once."""
    if value is None:
        return "prepared"
    if value not in FILING_STATUSES:
        raise ValidationFailed(
            f"'{value}' is not a filing status; use 'prepared' or 'filed'.", pointer=pointer, input=value
        )
    return value  # type: ignore[return-value]


def check_filing_transition(current: str, requested: object, pointer: str = "/status") -> bool:
    """``prepared`` -> ``filed`` only (True: a move); requesting the current status is a no-op (False).

    A filed return is final: refused with 422 ``invalid_state``.
    """
    if requested not in FILING_STATUSES:
        raise ValidationFailed(f"'{requested}' is not a filing status; use 'filed'.", pointer=pointer, input=requested)
    if requested == current:
        return False
    if current == "prepared" and requested == "filed":
        return True
    raise FailedPrecondition(
        f"The filing is '{current}' and cannot move to '{requested}': a filed return is final.",
        pointer=pointer, meta={"current_status": current, "requested_status": requested},
    )


@dataclass(frozen=True, slots=True)
class FiledPeriod:
    """A return already filed for ``state_code`` over [period_start, period_end]."""

    filing_id: str
    state_code: str
    period_start: date
    period_end: date


def check_no_overlap(
    state_code: str, period_start: date, period_end: date, filed: Iterable[FiledPeriod], *, exclude_id: str | None = None
) -> None:
    """409 when a filed return of the same state covers any day of the period (a period is filed once)."""
    for f in filed:
        if f.state_code != state_code or f.filing_id == exclude_id:
            continue
        if f.period_start <= period_end and period_start <= f.period_end:
            raise Conflict(
                f"{state_code} is already filed for {f.period_start.isoformat()}..{f.period_end.isoformat()} "
                f"(filing {f.filing_id}), which overlaps {period_start.isoformat()}..{period_end.isoformat()}; "
                "a period is filed once per state.",
                pointer="/period_start",
                meta={"filing_id": f.filing_id, "period_start": f.period_start.isoformat(),
                      "period_end": f.period_end.isoformat()},
            )


def check_not_already_filed(state_code: str, filed_states_by_txn: Iterable[tuple[str, Collection[str]]], *,
                            key: str | None = None) -> None:
    """409 when a transaction about to be filed for ``state_code`` is already on a filed return of it.

    ``filed_states_by_txn``: (transaction id, states whose filed return includes it), read under lock;
    ``key``: what records the return's transactions (default: the state's two letters).
    """
    state = key or state_code.removeprefix("US-ST-")
    dup = [tid for tid, states in filed_states_by_txn if state in states]
    if dup:
        raise Conflict(
            f"{len(dup)} transaction(s) are already on a filed {state_code} return: {', '.join(dup[:10])}"
            f"{' ...' if len(dup) > 10 else ''}; a transaction is filed once.",
            meta={"transaction_ids": dup},
        )


def check_unchanged(prepared_figures: object, current_figures: object, filing_id: str) -> None:
    """409 when the return computed now differs from the prepared one being confirmed.

    Compare the prepared :class:`~levy.domain.filing.Return` with one prepared again, under lock,
    from the current transactions: the user files only figures they have seen.
    """
    if prepared_figures != current_figures:
        raise Conflict(
            f"The transactions of filing {filing_id} changed since it was prepared; prepare it again and review "
            "the new figures before filing.",
            meta={"filing_id": filing_id},
        )
