"""Events: the types Levy records, and the filters of ``GET /events``.

Pure values: the app layer (:mod:`levy.app.events`) builds an event with each
change, in the change's database transaction; the store lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.transactions.rules import instant_range

#: Every event type, with the kind of object it carries (docs/events.md).
TYPES: dict[str, str] = {
    "transaction.created": "transaction",
    "transaction.finalized": "transaction",
    "transaction.voided": "transaction",
    "transaction.filed": "transaction",
    "credit.created": "transaction",
    "customer.created": "customer",
    "customer.updated": "customer",
    "customer.deleted": "customer",
    "certificate.created": "certificate",
    "certificate.updated": "certificate",
    "certificate.deleted": "certificate",
    "certificate.expiring": "certificate",
    "certificate.expired": "certificate",
    "nexus.threshold_approaching": "nexus_state",
    "nexus.threshold_crossed": "nexus_state",
    "filing.prepared": "filing",
    "filing.filed": "filing",
    "webhook_endpoint.disabled": "webhook_endpoint",
}

#: The event a transaction's move to a status reports (other moves report none).
STATUS_EVENTS = {"finalized": "transaction.finalized", "void": "transaction.voided", "filed": "transaction.filed"}


def transaction_events(type_: str, status: str) -> tuple[str, ...]:
    """The events of a new transaction: created (a credit: ``credit.created``), and the event of
    its status when it is created past draft (a sale created ``finalized`` is also finalized)."""
    created = "credit.created" if type_ == "credit" else "transaction.created"
    moved = STATUS_EVENTS.get(status)
    return (created, moved) if moved else (created,)


def status_event(before: str, after: str) -> str | None:
    """The event of a transaction's move from ``before`` to ``after``, if any."""
    return STATUS_EVENTS.get(after) if after != before else None


@dataclass(frozen=True)
class EventFilters:
    """Filters of ``GET /events`` (all optional, combined with AND)."""

    type: str | None = None
    created_from: datetime | None = None  # inclusive
    created_to: datetime | None = None  # exclusive


def parse_filters(type_: str | None, created_from: str | None, created_to: str | None) -> EventFilters:
    """Validate the query parameters of ``GET /events``; every problem at once (422)."""
    errors: list[LevyError] = []
    if type_ is not None and type_ not in TYPES:
        errors.append(ValidationFailed(f"type must be one of {', '.join(TYPES)}; got {type_!r}", parameter="type"))
    start, end = instant_range(created_from, created_to, "created_from", "created_to", errors)
    if errors:
        raise ValidationFailed.many(errors)
    return EventFilters(type_ or None, start, end)


def parse_types(types: list[str]) -> frozenset[str]:
    """The ``types`` of ``WatchEvents``: each a known type (422 at ``/types/<index>``)."""
    errors: list[LevyError] = [
        ValidationFailed(f"types[{i}] must be one of {', '.join(TYPES)}; got {t!r}", pointer=f"/types/{i}")
        for i, t in enumerate(types) if t not in TYPES
    ]
    if errors:
        raise ValidationFailed.many(errors)
    return frozenset(types)


#: Seconds a gap in the events' sequence is looked at again (see :class:`WatchCursor`).
GAP_SECONDS = 30.0
#: The most gaps a cursor keeps (the oldest are dropped first).
MAX_GAPS = 10_000


@dataclass
class WatchCursor:
    """Where ``WatchEvents`` stands in the sequence of every organization's events.

    The database numbers events when they are inserted, and on PostgreSQL concurrent transactions
    commit in any order: an event numbered 7 may become visible after 8 was read. So the numbers
    skipped between the cursor and the highest read (gaps: a transaction not yet committed, or one
    rolled back) are read again on each pass for :data:`GAP_SECONDS`; an insert whose commit comes
    later than that after its number is missed by the stream (``GET /events`` still lists it)."""

    after: int
    gaps: dict[int, float] = field(default_factory=dict)  # sequence -> when first missed

    def advance(self, seen: list[int], now: float, grace: float = GAP_SECONDS) -> None:
        """Take the sequences read by a pass (after the cursor and among the gaps) at ``now``."""
        found = set(seen)
        for s in found:
            self.gaps.pop(s, None)
        top = max(found, default=self.after)
        if top > self.after:
            for s in range(max(self.after + 1, top - MAX_GAPS), top):
                if s not in found:
                    self.gaps[s] = now
            self.after = top
        for s, since in list(self.gaps.items()):
            if now - since > grace:
                del self.gaps[s]
        while len(self.gaps) > MAX_GAPS:
            del self.gaps[min(self.gaps)]
