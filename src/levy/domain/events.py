"""Events (issue 35): the types Levy records, and the filters of ``GET /events``.

Pure values: the app layer (:mod:`levy.app.events`) builds an event with each
change, in the change's database transaction; the store lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.transactions import instant_range

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
