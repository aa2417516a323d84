"""VAT and GST outside the US: the EU-27, the United Kingdom, Canada and Australia.

Pure: the rates come in as plain data (``src/levy/data/tax/international/*.json``, loaded by
:func:`levy.ratefiles.builtin.load_international`), tax ids are checked with python-stdnum (formats and
check digits, no network). See docs/international.md.

* **Where**: the customer's address (the destination) decides, for goods and for digital services
  alike. A country has one tax level (``DE``: German VAT; ``CA``: the federal GST); a Canadian
  province may replace it (the HST provinces) or add one (``CA-PR-BC`` PST, ``CA-PR-QC`` QST).
* **Which rate**: the level's standard rate on the date, unless a category rule of the level covers
  the line's tax code (the longest matching code prefix wins): a reduced, zero or exempt rate.
* **Who is registered**: a level is covered by a registration under its own code, and an EU member
  state's also by ``EU-OSS`` (the Union One-Stop-Shop covers B2C sales to every member state).
* **Who pays** (:func:`reverse_charge`): a customer's valid business tax id for the destination
  country turns the line's tax to a reverse charge (tax 0, a row naming the rule); a malformed id
  earns none and the row says why. The row's rule name names the id's country and number. An EU
  VAT id may also have been checked online (VIES, by the application: ``TaxId.online``): an
  "invalid" answer earns no reverse charge; "unavailable" leaves the format check to decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.tax.model import TaxId, VatCheck
from levy.domain.tax.rate_table import DatedRate

EU_OSS = "EU-OSS"
# Codes a registration may name: a country (``DE``), a province (``CA-PR-BC``), or ``EU-OSS``.


@dataclass(frozen=True, slots=True)
class CategoryRate:
    """The rate of the codes starting with one of ``codes`` over ``dated``'s period and its source;
    ``exempt``: not taxed at all (outside the tax, rather than at a zero rate)."""

    codes: tuple[str, ...]
    name: str
    dated: DatedRate
    exempt: bool = False

    @property
    def rate(self) -> Decimal | None:
        return None if self.exempt else self.dated.rate

    @property
    def source(self) -> str:
        return self.dated.source

    def covers(self, on: date) -> bool:
        return self.dated.covers(on)


@dataclass(frozen=True, slots=True)
class TaxLevel:
    """One tax on a place: German VAT, Canada's GST, Ontario's HST, BC's PST."""

    code: str  # the jurisdiction code of its rows, and the registration that covers it
    name: str
    type: str  # "country" or "province"
    tax_type: str  # "vat", "gst", "hst", "pst", "qst"
    tax_name: str  # "VAT", "GST", ...
    rates: tuple[DatedRate, ...]
    categories: tuple[CategoryRate, ...] = ()
    covered_by: frozenset[str] = frozenset()  # registrations that cover it (its own code, EU-OSS)

    def rate_on(self, on: date) -> DatedRate | None:
        return next((r for r in self.rates if r.covers(on)), None)

    def category_on(self, category: str | None, on: date) -> CategoryRate | None:
        """The category rule for a code path (the longest prefix that matches on ``on``)."""
        if not category:
            return None
        best: CategoryRate | None = None
        best_len = -1
        for c in self.categories:
            if not c.covers(on):
                continue
            for prefix in c.codes:
                if (category == prefix or category.startswith(prefix + ".")) and len(prefix) > best_len:
                    best, best_len = c, len(prefix)
        return best


@dataclass(frozen=True, slots=True)
class Subdivision:
    name: str
    levels: tuple[TaxLevel, ...]
    replaces_country: bool = False  # the HST provinces: one harmonized level instead of the GST


@dataclass(frozen=True, slots=True)
class Country:
    code: str
    name: str
    union: str | None  # "EU" for a member state
    levels: tuple[TaxLevel, ...]
    postal_code: re.Pattern[str] | None
    tax_id_types: tuple[str, ...]
    subdivisions: Mapping[str, Subdivision] = field(default_factory=dict)
    subdivision_required: bool = False


@dataclass(frozen=True, slots=True)
class Place:
    """Where an international line is taxed: its country and (Canada) province, and their tax levels."""

    country: Country
    subdivision: str | None
    levels: tuple[TaxLevel, ...]

    @property
    def how(self) -> str:
        where = self.country.name
        if self.subdivision is not None:
            where = f"{self.country.subdivisions[self.subdivision].name}, {where}"
        return f"resolved by country{' and province' if self.subdivision else ''}: {where} (taxed at the destination)"


@dataclass(frozen=True, slots=True)
class ReverseCharge:
    """What a line's tax ids decide: ``applies`` (tax 0, the customer accounts for it) with the
    rule's name, or not, with why (``detail``, "" when no id was sent)."""

    applies: bool
    rule_name: str = ""
    detail: str = ""


# Reverse-charge rules by tax id type: (the countries it is for, what the id is called, the rule).
# The row's rule name is "<how>: customer's <country> <id name> <number>, <rule>" (:func:`rule_name`).
REVERSE_CHARGE_RULES: dict[str, tuple[str, str, str, str]] = {
    "eu_vat": ("EU", "Reverse charge", "VAT id", ("VAT Directive 2006/112/EC Art. 196 (the customer, identified "
                                                  "for VAT, accounts for the VAT; place of supply Art. 44)")),
    "gb_vat": ("GB", "Reverse charge", "VAT number",
               "Value Added Tax Act 1994 s. 8 (the UK business customer accounts for the VAT)"),
    "ca_gst_hst": ("CA", "Not collected", "GST/HST number",
                   "Excise Tax Act Part IX, Division II, Subdivision E (simplified registration: supply to a registrant)"),
    "ca_bn": ("CA", "Not collected", "GST/HST number",
              "Excise Tax Act Part IX, Division II, Subdivision E (simplified registration: supply to a registrant)"),
    "au_abn": ("AU", "Reverse charge", "ABN",
               "GST Act 1999 s. 84-65, Division 84 (the GST-registered Australian business accounts for the GST)"),
}


def rule_name(tax_type: str, country: str, number: str) -> str:
    """The reverse-charge row's rule name: the id's country and number, and the rule
    ("Reverse charge: customer's DE VAT id DE136695976, VAT Directive 2006/112/EC Art. 196 (...)")."""
    _, how, label, rule = REVERSE_CHARGE_RULES[tax_type]
    return f"{how}: customer's {country} {label} {number}, {rule}"


def _check_tax_id(tax_id: TaxId) -> tuple[str | None, str]:
    """(the id's country code, its compact number) when valid, else (None, why)."""
    from stdnum.exceptions import ValidationError

    value = tax_id.value.strip()
    try:
        if tax_id.type == "eu_vat":
            from stdnum.eu import vat

            number = vat.validate(value)  # by the rules of the country its prefix names
            # The prefix is the country, not vat.guess_country: that lists every member state whose
            # rules the number also passes (DE518538442 is a valid French number too), in set order.
            country = number[:2]
            return ("GR" if country == "EL" else country), number
        if tax_id.type == "gb_vat":
            from stdnum.gb import vat as gb_vat

            number = gb_vat.validate(value)
            return "GB", number if number.startswith("GB") else f"GB{number}"
        if tax_id.type in ("ca_gst_hst", "ca_bn"):
            from stdnum.ca import bn

            number = bn.validate(value)
            if len(number) != 15 or number[9:11] != "RT":
                return None, "a GST/HST number is a 15-character business number with the RT program (123456789RT0001)"
            return "CA", number
        if tax_id.type == "au_abn":
            from stdnum.au import abn

            return "AU", abn.validate(value)
    except ValidationError as e:
        return None, str(e).rstrip(".")
    return None, f"type '{tax_id.type}' is not one Levy checks ({', '.join(sorted(REVERSE_CHARGE_RULES))})"


def eu_vat_number(tax_id: TaxId) -> str | None:
    """The compact number (``DE136695976``) of a well-formed ``eu_vat`` id, else None: what the
    online (VIES) check is asked about."""
    if tax_id.type != "eu_vat":
        return None
    country, number = _check_tax_id(tax_id)
    return number if country is not None else None


def _online_note(check: VatCheck) -> str:
    """What the line's detail says of the VIES answer about an id whose format is valid."""
    ref = f", request identifier {check.request_identifier}" if check.request_identifier else ""
    if check.result == "valid":
        return f"; VIES: valid on {check.checked_on.isoformat()}{ref}"
    why = f" ({check.detail})" if check.detail else ""
    return f"; VIES online check unavailable{why}: the format check decides"


def reverse_charge(country: Country, tax_ids: Sequence[TaxId]) -> ReverseCharge:
    """Whether a line to ``country`` is reverse charged for the customer's ``tax_ids``.

    A valid id of a type for the destination (an ``eu_vat`` of a member state for an EU country;
    ``gb_vat`` for GB; ``ca_gst_hst`` or ``ca_bn`` with the RT program for Canada; ``au_abn`` for
    Australia) reverse charges the line. An id of such a type that is malformed earns none, and
    ``detail`` says why; ids for other places are ignored (and said so). An ``eu_vat`` id that
    VIES answered invalid (``TaxId.online``) earns none either; when VIES was unavailable the
    format check decides and ``detail`` says so."""
    notes: list[str] = []
    for tax_id in tax_ids:
        rule = REVERSE_CHARGE_RULES.get(tax_id.type)
        shown = f"tax id {tax_id.type} '{tax_id.value}'"
        if rule is None:
            notes.append(f"{shown}: type not checked by Levy, no reverse charge")
            continue
        if rule[0] != (country.union or country.code):
            notes.append(f"{shown} is not for {country.name}: no reverse charge")
            continue
        id_country, number = _check_tax_id(tax_id)
        if id_country is None:
            notes.append(f"{shown} is not valid ({number}): no reverse charge, taxed as a sale to a consumer")
            continue
        online = tax_id.online
        if online is not None and online.result == "invalid":
            ref = f", request identifier {online.request_identifier}" if online.request_identifier else ""
            notes.append(f"{shown} is not valid according to VIES (checked {online.checked_on.isoformat()}{ref}): "
                         "no reverse charge, taxed as a sale to a consumer")
            continue
        return ReverseCharge(True, rule_name(tax_id.type, id_country, number),
                             f"{shown} valid (format and check digits, python-stdnum; issued in {id_country})"
                             + (_online_note(online) if online is not None else ""))
    return ReverseCharge(False, "", "; ".join(notes))


class International:
    """The international rates: immutable, built once from the data files."""

    __slots__ = ("countries", "member_states")

    def __init__(self, countries: Iterable[Country]) -> None:
        self.countries: dict[str, Country] = {c.code: c for c in countries}
        # The EU member states' codes (where an EU VAT id may be reverse charged and checked online).
        self.member_states = frozenset(c.code for c in self.countries.values() if c.union == "EU")

    def covers(self, country: str) -> bool:
        return country in self.countries

    # ------------------------------------------------------------ registrations
    def registration_codes(self) -> frozenset[str]:
        codes = {EU_OSS}
        for c in self.countries.values():
            for level in c.levels:
                codes.add(level.code)
            for sub in c.subdivisions.values():
                codes.update(level.code for level in sub.levels)
        return frozenset(codes)

    # ------------------------------------------------------------ addresses
    def place(self, country_code: str, state: str | None, postal_code: str | None, apointer: str) -> Place:
        """The place of an address in a covered country; 422 with pointers for what is missing or wrong."""
        country = self.countries[country_code]
        errors: list[LevyError] = []
        postal = (postal_code or "").strip().upper()
        if country.postal_code is not None:
            if not postal:
                errors.append(ValidationFailed(f"An address in {country.name} needs its postal code.",
                                               pointer=f"{apointer}/postal_code", type="missing"))
            elif not country.postal_code.fullmatch(postal):
                errors.append(ValidationFailed(f"'{postal_code}' is not a postal code of {country.name}.",
                                               pointer=f"{apointer}/postal_code", input=postal_code))
        subdivision = _subdivision(country, state, f"{apointer}/state", errors)
        if errors:
            raise ValidationFailed.many(errors)  # type: ignore[arg-type]
        levels = country.levels
        if subdivision is not None and subdivision in country.subdivisions:
            sub = country.subdivisions[subdivision]
            levels = sub.levels if sub.replaces_country else (*levels, *sub.levels)
        return Place(country, subdivision if subdivision in country.subdivisions else None, levels)


def _subdivision(country: Country, state: str | None, pointer: str, errors: list[LevyError]) -> str | None:
    """The ISO 3166-2 subdivision of ``state`` (``ON`` or ``CA-ON``), checked with pycountry; None when absent."""
    import pycountry

    given = (state or "").strip().upper()
    if not country.subdivisions:  # no tax of its own below the country: a state or county is not looked at
        return None
    if not given:
        if country.subdivision_required:
            errors.append(ValidationFailed(f"An address in {country.name} needs its province or territory "
                                           f"(ISO 3166-2, e.g. '{next(iter(country.subdivisions))}').",
                                           pointer=pointer, type="missing"))
        return None
    code = given.removeprefix(f"{country.code}-")
    if pycountry.subdivisions.get(code=f"{country.code}-{code}") is None:
        errors.append(ValidationFailed(
            f"'{state}' is not a subdivision of {country.name} (ISO 3166-2 code, e.g. "
            f"'{next(iter(country.subdivisions), 'XX')}').", pointer=pointer, input=state))
        return None
    if country.subdivisions and code not in country.subdivisions:  # pragma: no cover - the data lists them all
        errors.append(ValidationFailed(f"'{state}': no tax data for this subdivision of {country.name}.",
                                       pointer=pointer, input=state))
        return None
    return code
