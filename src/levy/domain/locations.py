"""Business locations: the organization's places of business.

A location is a named address with effective dates; at most one non-archived
location of an organization is its default ship-from address. Pure: the
application layer loads the current location, calls these rules and stores the
result. Every problem of one request is collected and raised together, with
JSON pointers relative to the location object (``/name``, ``/address/postal_code``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from levy.domain.errors import ErrorCollector, LevyError, RequiredField, ValidationFailed
from levy.domain.jurisdictions import US_STATES
from levy.domain.organization import parse_date
from levy.domain.periods import Dated
from levy.domain.tax.model import Address

# ``zip_in_state(zip5, state)``: True when the ZIP lies in the state, False when
# it lies elsewhere, None when no ZIP directory or imported record knows it.
ZipInState = Callable[[str, str], "bool | None"]

_ZIP = re.compile(r"([0-9]{5})(?:-?([0-9]{4}))?\Z")
_COUNTRY = re.compile(r"[A-Z]{2}\Z")
_US = ("US", "USA")
# The API's field_policy max_length (locations.proto), checked here too for the CLI.
_LIMITS = (("name", "/name", 200), ("line1", "/address/line1", 500), ("line2", "/address/line2", 500),
           ("city", "/address/city", 200), ("state", "/address/state", 100),
           ("postal_code", "/address/postal_code", 20))


@dataclass(frozen=True, slots=True)
class LocationDraft:
    """A valid location to store (normalised: trimmed, upper-case codes)."""

    name: str
    address: Address
    line2: str | None
    is_default: bool
    effective_from: date
    effective_to: date | None


@dataclass(frozen=True, slots=True)
class BusinessLocation(LocationDraft, Dated):
    """A stored location: its draft's values and its id and times. ``address`` is what the tax engine
    reads (line1, city, state, country, postal_code); ``line2`` is kept beside it for display."""

    id: str
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime

    @property
    def archived(self) -> bool:
        return self.archived_at is not None

    def as_input(self) -> LocationInput:
        """The location's values as input, for a partial update to start from."""
        a = self.address
        return LocationInput(
            name=self.name,
            line1=a.line1,
            line2=self.line2,
            city=a.city,
            state=a.state,
            postal_code=a.postal_code,
            country=a.country,
            is_default=self.is_default,
            effective_from=self.effective_from.isoformat(),
            effective_to=self.effective_to.isoformat() if self.effective_to else None,
        )


@dataclass(frozen=True, slots=True)
class LocationInput:
    """A location as sent (strings as given; ``None`` = not given)."""

    name: str | None = None
    line1: str | None = None
    line2: str | None = None
    city: str | None = None
    state: str | None = None
    postal_code: str | None = None
    country: str | None = None
    is_default: bool | None = None
    effective_from: str | None = None
    effective_to: str | None = None


def _text(value: str | None) -> str | None:
    value = value.strip() if value is not None else None
    return value or None


def validate_location(given: LocationInput, zip_in_state: ZipInState) -> LocationDraft:
    """The location to store; 422 with every problem otherwise.

    Required: ``name``, ``address.line1``, ``address.city``, ``effective_from``.
    ``address.country`` is a two-letter code (default ``US``). A US address needs
    a state (a US state code, DC or PR) and a ZIP code (12345 or 12345-6789) that
    lies in that state. ``effective_to``, when given, is not before ``effective_from``.
    """
    collector = ErrorCollector()
    errors: list[LevyError] = collector.errors

    def required(value: str | None, name: str, pointer: str) -> str | None:
        out = _text(value)
        if out is None:
            errors.append(RequiredField(name, pointer=pointer))
        return out

    def day(value: str | None, name: str) -> date | None:
        return None if value is None else collector.attempt(parse_date, value, f"/{name}")

    for field_name, pointer, limit in _LIMITS:
        value = getattr(given, field_name)
        if value is not None and len(value.strip()) > limit:
            errors.append(ValidationFailed(f"At most {limit} characters ({len(value.strip())} given).",
                                           pointer=pointer))
    name = required(given.name, "name", "/name")
    line1 = required(given.line1, "address.line1", "/address/line1")
    city = required(given.city, "address.city", "/address/city")
    country = (_text(given.country) or "US").upper()
    state = _text(given.state)
    postal = _text(given.postal_code)
    if country in _US:
        country = "US"
        if state is None:
            errors.append(RequiredField("address.state", pointer="/address/state",
                                        detail="The field 'address.state' is required for a US address."))
        else:
            state = state.upper()
            if state not in US_STATES:
                errors.append(ValidationFailed(
                    f"'{given.state}' is not a US state code (two letters, e.g. 'TX'; DC and PR included).",
                    pointer="/address/state",
                ))
                state = None
        if postal is None:
            errors.append(RequiredField("address.postal_code", pointer="/address/postal_code",
                                        detail="The field 'address.postal_code' is required for a US address."))
        else:
            m = _ZIP.match(postal)
            if m is None:
                errors.append(ValidationFailed(
                    f"'{postal}' is not a US ZIP code (12345 or 12345-6789).", pointer="/address/postal_code"
                ))
            else:
                postal = m.group(1) + (f"-{m.group(2)}" if m.group(2) else "")
                if state is not None:
                    found = zip_in_state(m.group(1), state)
                    if found is False:
                        errors.append(ValidationFailed(
                            f"The ZIP code {m.group(1)} does not lie in {US_STATES[state]} ({state}).",
                            pointer="/address/postal_code",
                        ))
                    elif found is None:
                        errors.append(ValidationFailed(
                            f"The ZIP code {m.group(1)} is not a known US ZIP code.", pointer="/address/postal_code"
                        ))
    elif not _COUNTRY.match(country):
        errors.append(ValidationFailed(
            f"'{given.country}' is not a two-letter country code (ISO 3166-1 alpha-2, e.g. 'US').",
            pointer="/address/country",
        ))
    start = day(given.effective_from, "effective_from")
    if given.effective_from is None:
        errors.append(RequiredField("effective_from", pointer="/effective_from",
                                    detail="The field 'effective_from' is required: the first day (YYYY-MM-DD) "
                                           "sales ship from this location."))
    end = day(given.effective_to, "effective_to")
    if start is not None and end is not None and end < start:
        errors.append(ValidationFailed(
            f"effective_to ({end.isoformat()}) is before effective_from ({start.isoformat()}).",
            pointer="/effective_to",
        ))
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    assert name is not None and line1 is not None and city is not None and start is not None
    return LocationDraft(
        name=name,
        address=Address(line1=line1, city=city, state=state, country=country, postal_code=postal),
        line2=_text(given.line2),
        is_default=bool(given.is_default),
        effective_from=start,
        effective_to=end,
    )
