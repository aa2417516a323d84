"""Organization tax settings and their documented defaults."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from levy.domain.currency import FilingCurrencyDefaults, filing_currency_map
from levy.domain.catalogue import DEFAULT_TAX_CODE

#: The default share of a threshold from which a state is "approaching": a convention to draw
#: attention in time to register (98 % said only "below"), not a rule of any state.
DEFAULT_APPROACHING_SHARE = Decimal("0.8")

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
    #: The organization's own filing currencies, country -> ISO 4217, sorted: only those that
    #: differ from the defaults of ``levy/data/currency/filing_currencies.json``.
    filing_currencies: tuple[tuple[str, str], ...] = ()
    #: From this share of a state's threshold its nexus standing is "approaching".
    nexus_approaching_share: Decimal = DEFAULT_APPROACHING_SHARE

    def filing_currency_map(self, defaults: FilingCurrencyDefaults) -> dict[str, str]:
        """Country -> filing currency: the ``defaults`` with the organization's choices over them."""
        return filing_currency_map(defaults, dict(self.filing_currencies))

    def filing_currency(self, defaults: FilingCurrencyDefaults, country: str = "US") -> str | None:
        """The currency of the organization's returns in ``country`` (None: none set, no default)."""
        return self.filing_currency_map(defaults).get(country)


DEFAULTS = OrganizationSettings()
