"""Pure rules of business locations (issue 19): validation with pointers, the
ZIP-in-state check (directory, and imported records for ZIPs crossing a state
line), effective dates."""

from __future__ import annotations

from datetime import date

import pytest

from levy.app.locations import zip_checker
from levy.domain.errors import ValidationFailed
from levy.domain.locations import LocationInput, validate_location
from levy.domain.tax.model import Address
from levy.domain.tax.rate_table import ZipPlace

DIRECTORY = {"78701": ZipPlace("TX", "Travis County", "Austin"), "90210": ZipPlace("CA", "Los Angeles County", None)}
ZIPS = zip_checker(DIRECTORY)
OK = LocationInput(name=" Austin ", line1="100 Congress Ave", city="Austin", state="tx", postal_code="787011234",
                   effective_from="2026-01-01")


def pointers(given: LocationInput) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as e:
        validate_location(given, ZIPS)
    return {i.pointer: i.detail for i in e.value.items}  # type: ignore[misc]


def test_valid_location_is_normalised() -> None:
    draft = validate_location(OK, ZIPS)
    assert draft.name == "Austin" and not draft.is_default and draft.line2 is None
    assert draft.address == Address(line1="100 Congress Ave", city="Austin", state="TX", country="US",
                                    postal_code="78701-1234")
    assert draft.effective_from == date(2026, 1, 1) and draft.effective_to is None


@pytest.mark.parametrize("change, pointer, fragment", [
    ({"postal_code": "90210"}, "/address/postal_code", "does not lie in Texas (TX)"),
    ({"postal_code": "10001"}, "/address/postal_code", "not a known US ZIP code"),
    ({"postal_code": "ABCDE"}, "/address/postal_code", "not a US ZIP code"),
    ({"state": "ZZ"}, "/address/state", "not a US state code"),
    ({"country": "USA", "state": None}, "/address/state", "required for a US address"),
    ({"country": "Canada"}, "/address/country", "two-letter"),
    ({"name": "   "}, "/name", "required"),
    ({"name": "n" * 201}, "/name", "At most 200 characters"),
    ({"effective_from": None}, "/effective_from", "required"),
    ({"effective_to": "2025-12-31"}, "/effective_to", "before effective_from"),
])
def test_invalid_location(change: dict, pointer: str, fragment: str) -> None:
    from dataclasses import replace

    assert fragment in pointers(replace(OK, **change))[pointer]


def test_a_zip_crossing_a_state_line_is_in_each_state_a_record_places_it() -> None:
    class Table:  # the rate table: a record places 78701 in CA
        def has_zip(self, state: str, zip5: str) -> bool:
            return (state, zip5) == ("CA", "78701")

    check = zip_checker(DIRECTORY, Table())  # type: ignore[arg-type]
    assert check("78701", "TX") is True and check("78701", "CA") is True
    assert check("90210", "TX") is False and check("00000", "TX") is None


def test_non_us_addresses_need_no_state_or_zip() -> None:
    draft = validate_location(LocationInput(name="Toronto", line1="100 King St W", city="Toronto", country="ca",
                                            effective_from="2026-01-01", effective_to="2026-01-01"), ZIPS)
    assert draft.address.country == "CA" and draft.address.state is None and draft.address.postal_code is None
    assert draft.effective_to == date(2026, 1, 1)  # a one-day location: both days inclusive
