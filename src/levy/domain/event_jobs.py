"""The time-based events: which certificates and nexus states are due an event on a
day, and the key that makes each event once per organization, object and period.

Pure: the events job (:mod:`levy.app.event_jobs`) reads the certificates and the nexus report,
asks here, and writes each event with its key in a unique index (``event_marks``) in one
transaction, so replicas running the job at once produce it once.

* ``certificate.expiring``: a certificate ``in_review`` or ``valid`` whose ``expires_at`` (its
  last day covered) is today or within the next ``days`` days. Key: the certificate and its
  ``expires_at`` (a certificate given a later date is announced again).
* ``certificate.expired``: such a certificate whose ``expires_at`` has passed, by at most
  ``days`` days (an old certificate the job first sees long after its end gets none).
* ``nexus.threshold_crossed``: a state whose threshold is exceeded (registered there or not);
  ``nexus.threshold_approaching``: one not exceeded that has reached the share the nexus report
  calls approaching (:func:`levy.domain.nexus.standing`, one rule for both). Key: the state and
  the year its deciding measurement period ends in (a calendar-year rule: that year; a rolling
  12 months: the current year), so each is produced once a year at most.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

from levy.domain.nexus import standing
from levy.domain.nexus_report import NexusStateReport

#: Certificate statuses whose expiry is announced (rejected, renewed and expired ones are not).
WATCHED_STATUSES = ("in_review", "valid")


def certificate_event(status: str, expires_at: date | None, today: date, days: int) -> str | None:
    """The event a certificate is due on ``today``, if any (see the module doc)."""
    if expires_at is None or status not in WATCHED_STATUSES:
        return None
    if expires_at < today:
        return "certificate.expired" if (today - expires_at).days <= days else None
    return "certificate.expiring" if (expires_at - today).days <= days else None


def certificate_key(event_type: str, certificate_id: str, expires_at: date) -> str:
    return f"{event_type}:{certificate_id}:{expires_at.isoformat()}"


def certificate_window(today: date, days: int) -> tuple[date, date]:
    """The ``expires_at`` dates that may be due an event on ``today`` (inclusive)."""
    return today - timedelta(days=days), today + timedelta(days=days)


def nexus_event(r: NexusStateReport, approaching: Decimal) -> str | None:
    """The event a state's line of the nexus report is due, if any (``approaching``: the
    organization's ``nexus_approaching_share``)."""
    s = standing(r.share, exceeded=r.exceeded, needs_registration=r.needs_registration, approaching=approaching)
    if s in ("register", "crossed"):
        return "nexus.threshold_crossed"
    return "nexus.threshold_approaching" if s == "approaching" else None


def nexus_key(event_type: str, r: NexusStateReport) -> str:
    return f"{event_type}:{r.jurisdiction_code}:{r.period_end.year}"
