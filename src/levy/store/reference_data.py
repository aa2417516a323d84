"""The reference data Levy ships in ``levy/data``, read from its files and parsed once.

:func:`load` reads every file the domain and the application use and returns one immutable
:class:`ReferenceData`; the composition root (:mod:`levy.app.bootstrap`, through
:class:`levy.app.services.AppServices`) loads it once per process and passes it down, and the
command line builds what it needs through the same functions. The domain never reads a file:
it gets the parsed values as arguments (each domain module has the ``parse_*`` function of its
data; this module only reads the JSON and hands the document to it).

The built-in rate data (state rates, the ZIP directory, level inclusions, VAT and GST outside
the US) is read by :mod:`levy.ratefiles.builtin` into the rate table (:mod:`levy.app.rates_runtime`);
the taxability, sourcing, holiday and item rules are read there too and collected here.
Each file is read and parsed once per process (the readers are cached, as those of
:mod:`levy.ratefiles.builtin` are); the values are immutable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from levy.domain import currency, customers, filing_international, nexus, nexus_international
from levy.domain import catalogue as tax_catalogue
from levy.domain.tax.holidays import Holidays
from levy.domain.tax.item_rules import ItemRules
from levy.domain.tax.sourcing import SourcingTable
from levy.domain.tax.taxability import Taxability
from levy.domain.transactions.collected import NettingPolicies, parse_netting_policies
from levy.ratefiles import builtin


def read_json(name: str) -> Any:
    """The parsed JSON document of ``levy/data/<name>``."""
    return json.loads(resources.files("levy").joinpath("data", name).read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class ReferenceData:
    """Everything under ``levy/data`` that the domain or the application reads, parsed."""

    #: The supported customer sources (``customer_sources.json``) and their netting policies.
    customer_sources: customers.CustomerSources
    netting_policies: NettingPolicies
    #: Economic nexus thresholds by state, oldest first (``nexus/thresholds.json``).
    nexus_thresholds: nexus.NexusThresholds
    #: Product tax codes and attributes (``catalogue/``).
    catalogue: tax_catalogue.Catalogue
    #: Default filing currency by country (``currency/filing_currencies.json``).
    filing_currencies: currency.FilingCurrencyDefaults
    #: Returns outside the US by jurisdiction (``filing/international_returns.json``).
    international_returns: Mapping[str, filing_international.InternationalReturn]
    #: Registration thresholds outside the US (``nexus/international_thresholds.json``).
    international_thresholds: tuple[nexus_international.InternationalThreshold, ...]
    #: Taxability rules (``tax/taxability/<ST>.json``).
    taxability: Taxability
    #: Sourcing rules by state (``tax/sourcing.json``).
    sourcing: SourcingTable
    #: Sales tax holidays (``tax/holidays.json``), their codes checked against the catalogue.
    holidays: Holidays
    #: Item rules (``tax/item_rules.json``).
    item_rules: ItemRules


@cache
def customer_sources() -> dict[str, customers.CustomerSource]:
    return customers.parse_sources(read_json("customer_sources.json"))


@cache
def netting_policies() -> NettingPolicies:
    return parse_netting_policies(read_json("customer_sources.json"))


@cache
def nexus_thresholds() -> nexus.NexusThresholds:
    return nexus.parse_thresholds(read_json("nexus/thresholds.json"))


@cache
def catalogue() -> tax_catalogue.Catalogue:
    return tax_catalogue.parse_catalogue(read_json("catalogue/product_tax_codes.json"),
                                    read_json("catalogue/product_attributes.json"))


@cache
def filing_currencies() -> currency.FilingCurrencyDefaults:
    return currency.parse_filing_currency_defaults(read_json("currency/filing_currencies.json"))


@cache
def international_returns() -> dict[str, filing_international.InternationalReturn]:
    return filing_international.parse_returns(read_json("filing/international_returns.json"))


@cache
def international_thresholds() -> tuple[nexus_international.InternationalThreshold, ...]:
    return nexus_international.parse_thresholds(read_json("nexus/international_thresholds.json"))


def load() -> ReferenceData:
    """Every reference data file, parsed (a bad file raises ValueError or KeyError)."""
    return ReferenceData(
        customer_sources=customer_sources(),
        netting_policies=netting_policies(),
        nexus_thresholds=nexus_thresholds(),
        catalogue=catalogue(),
        filing_currencies=filing_currencies(),
        international_returns=international_returns(),
        international_thresholds=international_thresholds(),
        taxability=builtin.load_taxability(),
        sourcing=builtin.load_sourcing(),
        holidays=builtin.load_holidays(),
        item_rules=builtin.load_item_rules(),
    )
