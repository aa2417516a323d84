"""Pure rules of organization administration: jurisdiction codes, settings
changes, registration validation and overlap."""

from __future__ import annotations

from datetime import date
from functools import partial

import pytest

from levy.domain.errors import RequiredField, ValidationFailed
from levy.domain.jurisdictions import US_STATES, validate_jurisdiction
from levy.domain import organization
from levy.domain.organization import (
    SettingsChange,
    overlaps,
    parse_date,
    validate_key_name,
    validate_registration,
)
from levy.domain.settings import DEFAULTS
from levy.domain.tax.model import Registration
from levy.store.reference_data import catalogue, filing_currencies

apply_settings_change = partial(organization.apply_settings_change, catalogue=catalogue(),
                                filing_currencies=filing_currencies())


def test_states_are_the_50_states_dc_and_puerto_rico() -> None:
    assert len(US_STATES) == 52 and "DC" in US_STATES and "PR" in US_STATES and "GU" not in US_STATES


@pytest.mark.parametrize("code", ["US-ST-CA", "US-ST-DC", "US-ST-PR", "US-CO-PR-SAN_JUAN_MUNICIPIO", "US-CO-NY-NEW_YORK_COUNTY", "US-CI-CO-DENVER",
                                  "US-SP-CA-LOS_ANGELES_COUNTY_MTA", "US-CI-TX-SAN_ANTONIO2"])
def test_valid_codes(code: str) -> None:
    assert validate_jurisdiction(code, "/j") == code


@pytest.mark.parametrize("code", ["US-ST-GU", "US-ST-ca", "us-st-ca", "US-ST-CA-LOCAL", "US-CO-NY", "US-XX-CA",
                                  "CA-ST-ON", "US-CI-CO-DENVER_", "US-CI-CO-DEN VER", "", "US-ST-CAL"])
def test_invalid_codes(code: str) -> None:
    with pytest.raises(ValidationFailed) as e:
        validate_jurisdiction(code, "/j")
    assert e.value.first.pointer == "/j"


def test_settings_change_applies_only_named_fields() -> None:
    name, s = apply_settings_change("Acme", DEFAULTS, SettingsChange(exemption_management=False))
    assert name == "Acme" and s.exemption_management is False
    assert s.default_tax_codes == DEFAULTS.default_tax_codes and s.certificate_treatment == DEFAULTS.certificate_treatment
    name, s = apply_settings_change("Acme", s, SettingsChange(name=" New ", default_tax_codes=["FOOD.GROCERY.GENERAL"]))
    assert name == "New" and s.default_tax_codes == ("FOOD.GROCERY.GENERAL",) and s.exemption_management is False


def test_settings_change_collects_every_problem() -> None:
    with pytest.raises(ValidationFailed) as e:
        apply_settings_change("Acme", DEFAULTS, SettingsChange(
            name=None, default_tax_codes=["SALES_TAX"], certificate_treatment="x", exemption_management=None))
    assert {i.pointer for i in e.value.items} == {"/name", "/default_tax_codes/0", "/certificate_treatment",
                                                  "/exemption_management"}


@pytest.mark.parametrize("codes, pointer", [([], "/default_tax_codes"), (["_B2B"], "/default_tax_codes"),
                                            (["GENERAL.TANGIBLE.GOODS", "SALES_TAX"], "/default_tax_codes/1"),
                                            (["general.tangible.goods"], "/default_tax_codes/0")])
def test_bad_default_tax_codes(codes: list[str], pointer: str) -> None:
    with pytest.raises(ValidationFailed) as e:
        apply_settings_change("Acme", DEFAULTS, SettingsChange(default_tax_codes=codes))
    assert e.value.first.pointer == pointer


def test_registration_validation() -> None:
    d = validate_registration("US-ST-CA", "  ", "2024-01-01", None)
    assert d.registration_number is None and d.effective_to is None and d.effective_from == date(2024, 1, 1)
    with pytest.raises(ValidationFailed) as e:
        validate_registration(None, None, None, "2024-01-01")
    assert {(type(i).__name__, i.pointer, i.code) for i in [*e.value.items]} == {
        ("ErrorItem", "/jurisdiction", "validation_required_field"),
        ("ErrorItem", "/effective_from", "validation_required_field")}
    with pytest.raises(ValidationFailed, match="before effective_from"):
        validate_registration("US-ST-CA", None, "2024-01-02", "2024-01-01")
    assert validate_registration("US-ST-CA", None, "2024-01-01", "2024-01-01").effective_to == date(2024, 1, 1)


@pytest.mark.parametrize("value", ["2024-1-01", "20240101", "2024-02-30", "2024-01-01T00:00:00", " 2024-01-01"])
def test_dates_are_strictly_yyyy_mm_dd(value: str) -> None:
    with pytest.raises(ValidationFailed):
        parse_date(value, "/d")


def test_overlaps() -> None:
    a = Registration("US-ST-CA", date(2024, 1, 1), date(2024, 6, 30))
    assert overlaps(a, Registration("US-ST-CA", date(2024, 6, 30), None))
    assert overlaps(a, Registration("US-ST-CA", date(2020, 1, 1), None))
    assert overlaps(Registration("US-ST-CA", date(2020, 1, 1), None), a)
    assert not overlaps(a, Registration("US-ST-CA", date(2024, 7, 1), None))
    assert not overlaps(a, Registration("US-ST-CA", date(2023, 1, 1), date(2023, 12, 31)))
    assert not overlaps(a, Registration("US-ST-NV", date(2024, 1, 1), None))


def test_key_name() -> None:
    assert validate_key_name("  ci ") == "ci"
    for bad in (None, "", "   "):
        with pytest.raises(RequiredField):
            validate_key_name(bad)
