"""Customer input rules (spec sections 2.1, 4.1, 4.2, 8).

The allowed ``source`` values and which of them keep customers per account
are data: ``levy/data/customer_sources.json``, parsed by :func:`parse_sources`
from the document :mod:`levy.store.reference_data` reads, and passed in as
``sources``. Everything here is pure validation raising :class:`ValidationFailed`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from levy.domain.errors import RequiredField, ValidationFailed

DEFAULT_SOURCE = "native"
DEFAULT_ACCOUNT_ID = "__default__"

MAX_SOURCE_ID = 255
MAX_SOURCE_ACCOUNT_ID = 255
MAX_NAME = 500
MAX_EMAIL = 320

CUSTOMER_FIELDS = frozenset(
    {"source_id", "source", "source_account_id", "name", "email", "source_updated_at"}
)

# A deliberately basic shape: something@something.tld, no whitespace, one '@'.
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s.]+(\.[^@\s.]+)+$")


@dataclass(frozen=True, slots=True)
class CustomerSource:
    source: str
    platform: str
    kind: str  # native | accounting | billing | commerce | payments
    per_account: bool
    account_noun: str  # what an "account" is called on the platform (company, site, store...)
    account_id_name: str | None  # short name of the account id, for per-account sources
    account_id_description: str
    rationale: str
    nets_marked_lines: bool  # spec 4.7 "Marked products" rule 3
    nets_credit_notes: bool


#: The supported sources by ``source``, in the data's order (``native`` first).
CustomerSources = Mapping[str, CustomerSource]


def parse_sources(doc: Mapping[str, Any]) -> dict[str, CustomerSource]:
    """The sources of ``customer_sources.json`` (its parsed document), keyed by ``source``."""
    return {
        e["source"]: CustomerSource(
            source=e["source"],
            platform=e["platform"],
            kind=e["kind"],
            per_account=bool(e["per_account"]),
            account_noun=e["account_noun"],
            account_id_name=e["account_id_name"],
            account_id_description=e["account_id_description"],
            rationale=e["rationale"],
            nets_marked_lines=bool(e["nets_marked_lines"]),
            nets_credit_notes=bool(e["nets_credit_notes"]),
        )
        for e in doc["sources"]
    }


def validate_source(source: Any, pointer: str, *, sources: CustomerSources) -> str:
    """``source`` must be one of ``sources`` (case-sensitive); returns it."""
    if not isinstance(source, str) or source not in sources:
        allowed = ", ".join(sources)
        shown = repr(source) if isinstance(source, str) else f"a {type(source).__name__}"
        raise ValidationFailed(f"source {shown} is not supported: it must be one of {allowed}", pointer=pointer)
    return source


def validate_source_account(source: str, source_account_id: str | None, pointer: str, *,
                            sources: CustomerSources) -> str:
    """Check ``source_account_id`` has the form ``source`` needs; returns the effective value.

    ``None`` means omitted and stands for ``__default__``. ``source`` must
    already be valid (see :func:`validate_source`).
    """
    info = sources.get(source)
    if info is None:
        raise ValueError(f"unknown source {source!r}: call validate_source first")
    value = DEFAULT_ACCOUNT_ID if source_account_id is None else source_account_id
    if info.per_account:
        if value == DEFAULT_ACCOUNT_ID:
            raise ValidationFailed(
                f"source '{source}' keeps customers per {info.account_noun}: source_account_id must be "
                f"{info.account_id_name}, not '{DEFAULT_ACCOUNT_ID}'",
                pointer=pointer,
            )
        if not value.strip():
            raise ValidationFailed(
                f"source '{source}' keeps customers per {info.account_noun}: source_account_id must be "
                f"{info.account_id_name}, not blank",
                pointer=pointer,
            )
    elif value != DEFAULT_ACCOUNT_ID:
        raise ValidationFailed(
            f"source '{source}' does not keep customers per account: source_account_id must be "
            f"'{DEFAULT_ACCOUNT_ID}' (or omitted), not '{value}'",
            pointer=pointer,
        )
    return value


def _check_string(
    errors: list[ValidationFailed], data: dict, key: str, pointer: str, max_len: int, *, nullable: bool
) -> bool:
    """Type and length of an optional string field; True if present, valid and non-null."""
    if key not in data:
        return False
    value = data[key]
    if value is None:
        if not nullable:
            errors.append(ValidationFailed(f"{key} cannot be null", pointer=pointer))
        return False
    if not isinstance(value, str):
        errors.append(ValidationFailed(f"{key} must be a string, got {type(value).__name__}", pointer=pointer))
        return False
    if len(value) > max_len:
        errors.append(
            ValidationFailed(
                f"{key} is too long: {len(value)} characters, the maximum is {max_len}", pointer=pointer
            )
        )
        return False
    return True


def validate_customer_fields(
    data: dict, pointer_prefix: str, *, sources: CustomerSources, partial: bool = False, reject_unknown: bool = True
) -> dict[str, Any]:
    """Validate a customer input object (create, batch item, or with ``partial=True`` a PATCH body).

    Limits of section 8: ``source_id`` required (unless ``partial``) and not
    blank, max 255; ``source_account_id`` max 255 and of the form its source
    needs; ``name`` max 500; ``email`` max 320, null allowed, basic shape.
    Unknown properties are refused. All problems are raised together.
    Returns a copy of ``data`` with ``source`` / ``source_account_id``
    defaults applied (not in ``partial`` mode, where omitted means unchanged).

    In ``partial`` mode ``source_account_id`` is checked against ``source``
    only when both are in the body; the caller re-checks the stored pair.
    """
    errors: list[ValidationFailed] = []

    def ptr(key: str) -> str:
        return f"{pointer_prefix}/{key}"

    if not isinstance(data, dict):
        raise ValidationFailed("a customer must be a JSON object", pointer=pointer_prefix or None)

    if reject_unknown:
        for key in data:
            if key not in CUSTOMER_FIELDS:
                errors.append(ValidationFailed(f"unknown property '{key}'", pointer=ptr(str(key))))

    # source_id
    if data.get("source_id") is None:
        if not partial:
            errors.append(RequiredField("source_id", pointer=ptr("source_id")))
    elif _check_string(errors, data, "source_id", ptr("source_id"), MAX_SOURCE_ID, nullable=False):
        if not data["source_id"].strip():
            errors.append(ValidationFailed("source_id cannot be blank", pointer=ptr("source_id")))

    # source
    source: str | None = None
    if data.get("source") is not None:
        try:
            source = validate_source(data["source"], ptr("source"), sources=sources)
        except ValidationFailed as exc:
            errors.append(exc)
    elif not partial:
        source = DEFAULT_SOURCE

    # source_account_id
    account = data.get("source_account_id")
    account_ok = account is None or _check_string(
        errors, data, "source_account_id", ptr("source_account_id"), MAX_SOURCE_ACCOUNT_ID, nullable=True
    )
    if account_ok and source is not None and not (partial and account is None):
        try:
            account = validate_source_account(source, account, ptr("source_account_id"), sources=sources)
        except ValidationFailed as exc:
            errors.append(exc)

    # name
    _check_string(errors, data, "name", ptr("name"), MAX_NAME, nullable=True)

    # email
    if _check_string(errors, data, "email", ptr("email"), MAX_EMAIL, nullable=True):
        if not _EMAIL_RE.match(data["email"]):
            errors.append(
                ValidationFailed(
                    f"email '{data['email']}' is not an email address (expected name@domain.tld)",
                    pointer=ptr("email"),
                )
            )

    # source_updated_at (shape only; ordering against the stored value is the store's job)
    sua = data.get("source_updated_at")
    if sua is not None:
        bad = not isinstance(sua, str)
        if not bad:
            try:
                parsed = datetime.fromisoformat(sua)
                bad = parsed.tzinfo is None or "T" not in sua.upper()
            except ValueError:
                bad = True
        if bad:
            errors.append(
                ValidationFailed(
                    "source_updated_at must be an ISO 8601 date-time with a time zone, e.g. 2025-04-15T12:00:00Z",
                    pointer=ptr("source_updated_at"),
                )
            )

    if errors:
        raise ValidationFailed.many(errors)

    out = dict(data)
    if not partial:
        out["source"] = source
        out["source_account_id"] = account
    return out


# ---------------------------------------------------------------- records and update rules

Triple = tuple[str, str, str]  # (source, source_account_id, source_id)


@dataclass(frozen=True, slots=True)
class CustomerRecord:
    """A stored customer (active, merged or a deleted tombstone)."""

    id: str
    source: str
    source_account_id: str
    source_id: str
    name: str | None
    email: str | None
    merged_into_customer_id: str | None
    source_updated_at: datetime | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    override_exempt: bool
    override_resale: bool
    override_manufacturing: bool
    exemption_updated_at: datetime | None

    @property
    def triple(self) -> Triple:
        return (self.source, self.source_account_id, self.source_id)

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    def values(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in VALUE_FIELDS}


VALUE_FIELDS = ("source", "source_account_id", "source_id", "name", "email", "source_updated_at")


def triple_of(values: dict[str, Any]) -> Triple:
    return (values["source"], values["source_account_id"], values["source_id"])


def is_older(incoming: datetime | None, stored: datetime | None) -> bool:
    """True when ``incoming`` source_updated_at is older than the stored one."""
    return incoming is not None and stored is not None and incoming < stored


def merge_values(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """Apply a partial update: keys absent or ``None`` in ``patch`` keep the current value."""
    return {k: (patch[k] if patch.get(k) is not None else current.get(k)) for k in VALUE_FIELDS}


def check_patch(current: CustomerRecord, patch: dict[str, Any], *, sources: CustomerSources) -> dict[str, Any]:
    """The customer's values after a PATCH, checked as a whole: the account id
    must have the form of the (possibly new) source, and ``source_updated_at``
    cannot move to an older time (422). Returns the merged values."""
    merged = merge_values(current.values(), patch)
    if patch.get("source") is not None or patch.get("source_account_id") is not None:
        validate_source_account(merged["source"], merged["source_account_id"], "/source_account_id",
                                sources=sources)
    if is_older(patch.get("source_updated_at"), current.source_updated_at):
        raise ValidationFailed(
            f"source_updated_at {patch['source_updated_at'].isoformat()} is older than the stored "
            f"{current.source_updated_at.isoformat()}: it can only move forward",  # type: ignore[union-attr]
            pointer="/source_updated_at",
            code="source_updated_at_older",
        )
    return merged


def duplicate_meta(existing: CustomerRecord) -> dict[str, Any]:
    """``meta`` of the 409 for a taken triple (spec 4.1 rule 1)."""
    if existing.deleted:
        return {"existing_customer_id": existing.id, "deleted": True}
    return {
        "existing_customer_id": existing.id,
        "existing_customer_path": f"/customers/{existing.id}",
        "deleted": False,
    }


# ---------------------------------------------------------------- batch upsert


@dataclass(slots=True)
class BatchItem:
    """One request item: its validated values (None when it failed) and its outcome."""

    index: int
    values: dict[str, Any] | None
    errors: list[Any]
    status: str = ""
    customer_id: str | None = None

    @property
    def triple(self) -> Triple:
        assert self.values is not None
        return triple_of(self.values)


def fail_duplicates(items: list[BatchItem]) -> None:
    """Every copy of a triple sent more than once in one request fails (spec 4.2 rule 3)."""
    seen: dict[Triple, list[BatchItem]] = {}
    for it in items:
        if it.values is not None:
            seen.setdefault(it.triple, []).append(it)
    for triple, copies in seen.items():
        if len(copies) < 2:
            continue
        where = ", ".join(str(c.index) for c in copies)
        for c in copies:
            c.values = None
            c.status = "failed"
            c.errors = ValidationFailed(
                f"customer (source '{triple[0]}', source_account_id '{triple[1]}', source_id '{triple[2]}') "
                f"appears more than once in this request (items {where}); send each customer once",
                pointer=f"/data/{c.index}/source_id",
                code="duplicate_in_request",
            ).items


def decide(item: BatchItem, stored: CustomerRecord | None) -> dict[str, Any] | None:
    """The outcome of a valid item against the stored customer with its triple
    (``None``: new). Sets ``item.status`` and returns the values to write,
    or ``None`` when nothing is written."""
    assert item.values is not None
    if stored is None:
        item.status = "created"
        return dict(item.values)
    item.customer_id = stored.id
    if stored.deleted:
        item.status = "deleted"
        return None
    if is_older(item.values.get("source_updated_at"), stored.source_updated_at):
        item.status = "stale"
        return None
    item.status = "updated"
    current = stored.values()
    merged = merge_values(current, item.values)
    return merged if merged != current else None
