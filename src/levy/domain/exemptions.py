"""Exemption certificates and a customer's exemption snapshot (spec 2.1).

Pure rules: certificate field validation, the read model's choice of one
certificate per jurisdiction, and the customer merge rules. No I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from levy.domain.errors import FailedPrecondition, RequiredField, ValidationFailed
from levy.domain.jurisdictions import US_STATES
from levy.domain.periods import within

EXEMPTION_TYPES = ("resale", "manufacturing", "government", "nonprofit", "agricultural", "other")
CERTIFICATE_STATUSES = ("in_review", "valid", "rejected", "expired", "renewed")
APPROVED_STATUS = "valid"

# Country, level marker, region: US-ST-CA. Levy supports state-level certificates.
_JURISDICTION_RE = re.compile(r"^([A-Z]{2})-([A-Z]{2,3})-([A-Z0-9]{1,16})$")


def state_names() -> dict[str, str]:
    """Two-letter code -> name for every state, DC and Puerto Rico."""
    return US_STATES


def validate_jurisdiction(value: str, pointer: str) -> str:
    """``US-ST-<state, DC or PR>``; returns the upper-cased code."""
    code = value.strip().upper()
    m = _JURISDICTION_RE.match(code)
    if m is None:
        raise ValidationFailed(
            f"jurisdiction '{value}' is not a jurisdiction code: expected country-level-region such as 'US-ST-CA'",
            pointer=pointer,
        )
    country, level, region = m.groups()
    if country != "US" or level != "ST":
        raise ValidationFailed(
            f"jurisdiction '{value}' is not supported: certificates are for US states, coded 'US-ST-<state>' "
            "(for example 'US-ST-CA')",
            pointer=pointer,
        )
    if region not in state_names():
        raise ValidationFailed(
            f"jurisdiction '{value}': '{region}' is not a US state, DC or PR code", pointer=pointer
        )
    return code


def jurisdiction_name(code: str) -> str:
    return state_names().get(code.rsplit("-", 1)[-1], code)


def _choice(value: str, allowed: tuple[str, ...], name: str, pointer: str) -> str:
    if value not in allowed:
        raise ValidationFailed(f"{name} '{value}' is not one of {', '.join(allowed)}", pointer=pointer)
    return value


def validate_exemption_type(value: str, pointer: str) -> str:
    return _choice(value, EXEMPTION_TYPES, "exemption_type", pointer)


def validate_status(value: str, pointer: str) -> str:
    return _choice(value, CERTIFICATE_STATUSES, "status", pointer)


def parse_date(value: str, name: str, pointer: str) -> date:
    try:
        if len(value) != 10:
            raise ValueError
        return date.fromisoformat(value)
    except ValueError:
        raise ValidationFailed(f"{name} '{value}' is not a date (YYYY-MM-DD)", pointer=pointer) from None


@dataclass(frozen=True, slots=True)
class Certificate:
    id: str
    customer_id: str
    jurisdiction: str
    exemption_type: str
    status: str
    starts_at: date | None
    expires_at: date | None
    created_at: datetime
    updated_at: datetime

    def current_on(self, day: date) -> bool:
        return within(day, self.starts_at, self.expires_at)


@dataclass(frozen=True, slots=True)
class CertificateFields:
    """Validated certificate input; ``None`` means not given (keep current on update)."""

    jurisdiction: str | None = None
    exemption_type: str | None = None
    status: str | None = None
    starts_at: date | None = None
    expires_at: date | None = None


def validate_certificate(
    raw: dict[str, str | None], *, create: bool, current: Certificate | None = None, pointer_prefix: str = ""
) -> CertificateFields:
    """Check a certificate input (``None`` = not given). On create, jurisdiction and
    exemption_type are required; on update the result is checked merged with ``current``.
    All problems are raised together."""
    errors: list[ValidationFailed] = []

    def ptr(k: str) -> str:
        return f"{pointer_prefix}/{k}"

    out: dict[str, object] = {}
    checks = {
        "jurisdiction": lambda v: validate_jurisdiction(v, ptr("jurisdiction")),
        "exemption_type": lambda v: validate_exemption_type(v, ptr("exemption_type")),
        "status": lambda v: validate_status(v, ptr("status")),
        "starts_at": lambda v: parse_date(v, "starts_at", ptr("starts_at")),
        "expires_at": lambda v: parse_date(v, "expires_at", ptr("expires_at")),
    }
    for key, check in checks.items():
        value = raw.get(key)
        if value is None:
            if create and key in ("jurisdiction", "exemption_type"):
                errors.append(RequiredField(key, pointer=ptr(key)))
            continue
        try:
            out[key] = check(value)
        except ValidationFailed as e:
            errors.append(e)
    if errors:
        raise ValidationFailed.many(errors)
    fields = CertificateFields(**out)  # type: ignore[arg-type]
    starts = fields.starts_at or (current.starts_at if current else None)
    expires = fields.expires_at or (current.expires_at if current else None)
    if starts is not None and expires is not None and starts > expires:
        raise ValidationFailed(
            f"starts_at {starts.isoformat()} is after expires_at {expires.isoformat()}",
            pointer=ptr("expires_at" if fields.expires_at else "starts_at"),
        )
    return fields


def covering_certificates(certificates: Iterable[Certificate], today: date) -> list[Certificate]:
    """The snapshot rows: approved (``valid``) certificates current on ``today``,
    one per jurisdiction: the one expiring last (no expiry counts as latest),
    ties broken by the newest id. Sorted by jurisdiction."""
    best: dict[str, Certificate] = {}
    for c in certificates:
        if c.status != APPROVED_STATUS or not c.current_on(today):
            continue
        held = best.get(c.jurisdiction)
        if held is None or _rank(c) > _rank(held):
            best[c.jurisdiction] = c
    return [best[j] for j in sorted(best)]


def _rank(c: Certificate) -> tuple[date, str]:
    return (c.expires_at or date.max, c.id)


def check_merge(
    customer_id: str,
    into_id: str,
    source_merged_into: str | None,
    target_merged_into: str | None,
    target_deleted: bool,
) -> None:
    """Merge rules: not into itself, not an already merged customer, not into a
    merged or deleted customer (422 naming the problem)."""
    if customer_id == into_id:
        raise FailedPrecondition("a customer cannot be merged into itself", pointer="/into_customer_id")
    if source_merged_into is not None:
        raise FailedPrecondition(
            f"customer {customer_id} is already merged into {source_merged_into}", pointer=None
        )
    if target_deleted:
        raise FailedPrecondition(f"customer {into_id} is deleted: cannot merge into it", pointer="/into_customer_id")
    if target_merged_into is not None:
        raise FailedPrecondition(
            f"customer {into_id} is itself merged into {target_merged_into}: merge into that customer instead",
            pointer="/into_customer_id",
        )
