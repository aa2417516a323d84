"""Organization administration rules: tax settings changes and registrations.

Pure: the application layer loads the current state, calls these and stores
the result. Every problem of one request is collected and raised together.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import TypeVar

from levy.domain.currency import FilingCurrencyDefaults, validate_filing_currencies
from levy.domain.errors import LevyError, RequiredField, ValidationFailed
from levy.domain.jurisdictions import validate_jurisdiction
from levy.domain.settings import CERTIFICATE_TREATMENTS, DEFAULT_APPROACHING_SHARE, OrganizationSettings
from levy.domain.tax.model import Registration
from levy.domain.catalogue import Catalogue

_UNSET = object()
T = TypeVar("T")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_SHARE = re.compile(r"0?\.[0-9]{1,4}\Z")


@dataclass(frozen=True, slots=True)
class SettingsChange:
    """The fields a PATCH names; ``None`` means "sent as null", absent fields are not listed."""

    name: object = _UNSET
    default_tax_codes: object = _UNSET
    exemption_management: object = _UNSET
    certificate_treatment: object = _UNSET
    filing_currencies: object = _UNSET
    nexus_approaching_share: object = _UNSET

    def given(self, field_name: str) -> bool:
        return getattr(self, field_name) is not _UNSET


def _raise_all(errors: list[LevyError]) -> None:
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]


def _not_null(change: SettingsChange, field_name: str, errors: list[LevyError]) -> bool:
    if getattr(change, field_name) is None:
        errors.append(ValidationFailed(f"'{field_name}' cannot be null; send a value.", pointer=f"/{field_name}"))
        return False
    return change.given(field_name)


def validate_default_tax_codes(codes: list[str], pointer: str = "/default_tax_codes", *,
                               catalogue: Catalogue) -> tuple[str, ...]:
    """Full tax codes for products without their own; never empty, never ``SALES_TAX``."""
    if not codes:
        raise ValidationFailed(
            "default_tax_codes cannot be empty: products without tax codes need a default "
            "(for example ['GENERAL.TANGIBLE.GOODS']).",
            pointer=pointer,
        )
    resolved = catalogue.resolve(list(codes), pointer, allow_sales_tax=False)
    if resolved.category is None:
        raise ValidationFailed(
            "default_tax_codes must name a category path (a full tax code such as 'GENERAL.TANGIBLE.GOODS'), "
            "not only attributes.",
            pointer=pointer,
        )
    return tuple(codes)


def apply_settings_change(
    current_name: str, current: OrganizationSettings, change: SettingsChange, *, catalogue: Catalogue,
    filing_currencies: FilingCurrencyDefaults,
) -> tuple[str, OrganizationSettings]:
    """The organization's name and settings after ``change``; 422 (all problems) when invalid.
    ``catalogue`` and ``filing_currencies`` (the default currencies): reference data."""
    errors: list[LevyError] = []
    name, settings = current_name, current
    if _not_null(change, "name", errors):
        value = str(change.name).strip()
        if not value:
            errors.append(ValidationFailed("'name' cannot be blank.", pointer="/name"))
        name = value
    if _not_null(change, "default_tax_codes", errors):
        try:
            codes = validate_default_tax_codes(list(change.default_tax_codes), catalogue=catalogue)  # type: ignore[call-overload]
            settings = replace(settings, default_tax_codes=codes)
        except ValidationFailed as e:
            errors.append(e)
    if _not_null(change, "exemption_management", errors):
        settings = replace(settings, exemption_management=bool(change.exemption_management))
    if _not_null(change, "certificate_treatment", errors):
        if change.certificate_treatment not in CERTIFICATE_TREATMENTS:
            errors.append(ValidationFailed(
                f"certificate_treatment must be one of {', '.join(repr(t) for t in CERTIFICATE_TREATMENTS)}; "
                f"got '{change.certificate_treatment}'.",
                pointer="/certificate_treatment",
            ))
        else:
            settings = replace(settings, certificate_treatment=str(change.certificate_treatment))
    if _not_null(change, "filing_currencies", errors):
        try:
            settings = replace(settings, filing_currencies=validate_filing_currencies(change.filing_currencies,
                                                                                     defaults=filing_currencies))
        except ValidationFailed as e:
            errors.append(e)
    if change.nexus_approaching_share is None:  # null: back to the default
        settings = replace(settings, nexus_approaching_share=DEFAULT_APPROACHING_SHARE)
    elif change.given("nexus_approaching_share"):
        try:
            settings = replace(settings, nexus_approaching_share=validate_share(change.nexus_approaching_share))
        except ValidationFailed as e:
            errors.append(e)
    _raise_all(errors)
    return name, settings


def validate_share(sent: object, pointer: str = "/nexus_approaching_share") -> Decimal:
    """A share of a threshold: a decimal string above 0 and below 1 (``"0.8"``), at most 4 decimals."""
    text = str(sent).strip()
    try:
        share = Decimal(text) if _SHARE.match(text) else None
    except InvalidOperation:
        share = None
    if share is None or not 0 < share < 1:
        raise ValidationFailed(f"nexus_approaching_share must be a decimal string above 0 and below 1 with at most "
                               f"4 decimals, for example '0.8'; got {text!r}.", pointer=pointer)
    return share


def parse_date(value: str, pointer: str) -> date:
    """A calendar date written YYYY-MM-DD (nothing else)."""
    if _DATE.match(value):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValidationFailed(f"'{value}' is not a date in the form YYYY-MM-DD.", pointer=pointer)


@dataclass(frozen=True, slots=True)
class RegistrationDraft:
    jurisdiction: str
    registration_number: str | None
    effective_from: date
    effective_to: date | None

    def as_registration(self) -> Registration:
        return Registration(self.jurisdiction, self.effective_from, self.effective_to)


def validate_registration(
    jurisdiction: str | None, registration_number: str | None, effective_from: str | None, effective_to: str | None
) -> RegistrationDraft:
    """A registration to store; 422 with every problem (pointers relative to the registration object)."""
    errors: list[LevyError] = []

    def check(value: str | None, name: str, parse: Callable[[str, str], T], required: bool) -> T | None:
        if value is None:
            if required:
                errors.append(RequiredField(name, pointer=f"/{name}"))
            return None
        try:
            return parse(value, f"/{name}")
        except ValidationFailed as e:
            errors.append(e)
            return None

    code = check(jurisdiction, "jurisdiction", validate_jurisdiction, True)
    start = check(effective_from, "effective_from", parse_date, True)
    end = check(effective_to, "effective_to", parse_date, False)
    if start is not None and end is not None and end < start:
        errors.append(ValidationFailed(
            f"effective_to ({end.isoformat()}) is before effective_from ({start.isoformat()}).", pointer="/effective_to"
        ))
    number = registration_number.strip() if registration_number is not None else None
    _raise_all(errors)
    assert code is not None and start is not None
    return RegistrationDraft(code, number or None, start, end)


def overlaps(a: Registration, b: Registration) -> bool:
    """Two registrations of the same jurisdiction cover a common day."""
    if a.jurisdiction != b.jurisdiction:
        return False
    a_end, b_end = a.effective_to or date.max, b.effective_to or date.max
    return a.effective_from <= b_end and b.effective_from <= a_end


def validate_key_name(name: str | None) -> str:
    if name is None or not name.strip():
        raise RequiredField("name", pointer="/name", detail="The field 'name' is required: name the key to recognise it.")
    return name.strip()
