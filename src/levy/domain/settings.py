"""Organization tax settings and their documented defaults."""

from __future__ import annotations

from dataclasses import dataclass

from levy.domain.taxcodes import DEFAULT_TAX_CODE

CERTIFICATE_ONLY = "certificate_only"
CERTIFICATE_AND_PRODUCT_TAX_CODE = "certificate_and_product_tax_code"
CERTIFICATE_TREATMENTS = (CERTIFICATE_ONLY, CERTIFICATE_AND_PRODUCT_TAX_CODE)


@dataclass(frozen=True, slots=True)
class OrganizationSettings:
    """Defaults: products without codes use general tangible goods; exemption
    management is on; a certificate alone exempts sales in its jurisdiction."""

    default_tax_codes: tuple[str, ...] = (DEFAULT_TAX_CODE,)
    exemption_management: bool = True
    certificate_treatment: str = CERTIFICATE_ONLY


DEFAULTS = OrganizationSettings()
