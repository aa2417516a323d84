"""What a calculation line sells and to whom: the rules that turn a line's
product and customer presets into the engine's input (spec 4.5 rules 2-4 and
4.7 marked products). Plain functions over plain values, no I/O:
``levy.app.calculate`` reads the presets and parses the request, these decide.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from levy.domain.errors import ValidationFailed
from levy.domain.tax.codes import parse_tax_codes
from levy.domain.tax.model import SALES_TAX_CODE, CustomerExemption
from levy.domain.catalogue import Catalogue


@dataclass(frozen=True, slots=True)
class SoldAs:
    """What the engine taxes a line as."""

    category: str | None
    attributes: tuple[str, ...] = ()
    is_sales_tax: bool = False  # a collected-tax (SALES_TAX) line
    sales_tax_violation: bool = False  # SALES_TAX combined with other codes (spec 4.7)
    marked_product: bool = False  # a SALES_TAX line because its product preset is marked


def is_marked_product(tax_codes: Sequence[str], marked_sales_tax: bool) -> bool:
    """A product preset marked as collected tax, or whose only code is ``SALES_TAX`` (spec 4.7)."""
    return marked_sales_tax or tuple(tax_codes) == (SALES_TAX_CODE,)


def what_is_sold(own_codes: Sequence[str], preset_codes: Sequence[str] | None, preset_marked: bool,
                 default_category: str | None, pointer: str, *, catalogue: Catalogue) -> SoldAs:
    """The line's tax codes by precedence (spec 4.5): its own ``tax_attributes``
    win over its product preset's codes, which win over the organization's
    default. Own attributes without a category take the preset's category (or
    the default); a ``SALES_TAX`` code makes a collected-tax line; a marked
    preset makes one unless the line carries its own attributes.

    ``pointer`` is the line's (``/line_items/2``); an unknown code raises with
    a pointer below it.
    """
    if own_codes:
        if any(c.split(".", 1)[0] == SALES_TAX_CODE for c in own_codes):
            parsed = parse_tax_codes(own_codes)
            return SoldAs(None, (), parsed.is_sales_tax, parsed.sales_tax_violation)
        base = parse_tax_codes(preset_codes) if preset_codes and not preset_marked else None
        resolved = catalogue.resolve(
            list(own_codes), f"{pointer}/product/tax_attributes",
            default_category=(base.category if base and base.category else default_category),
        )
        return SoldAs(resolved.category, tuple(resolved.attributes))
    if preset_marked:
        return SoldAs(None, (), is_sales_tax=True, marked_product=True)
    if preset_codes:
        parsed = parse_tax_codes(preset_codes)
        return SoldAs(parsed.category, tuple(parsed.attributes))
    return SoldAs(default_category)


TAX_BEHAVIORS = ("exclusive", "inclusive")


def is_inclusive(value: str | None, default: bool, pointer: str) -> bool:
    """A line's ``tax_behavior``: ``inclusive`` (its amount includes the tax) or
    ``exclusive``; None (not sent) takes ``default`` (the request's). Anything else is 422 at ``pointer``."""
    if value is None:
        return default
    if value not in TAX_BEHAVIORS:
        raise ValidationFailed(f"tax_behavior {value!r} is not supported: it must be 'exclusive' or 'inclusive'",
                               pointer=pointer, input=value, type="enum")
    return value == "inclusive"


class CustomerCandidate(Protocol):
    """A stored customer as the matching rules read it."""

    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def source_id(self) -> str: ...
    @property
    def source_account_id(self) -> str: ...
    @property
    def exemption(self) -> CustomerExemption: ...
    @property
    def merged_into_customer_id(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class CustomerMatch:
    """The customer a line's preset names, or why none applies (the line is then
    taxed without exemptions and ``detail`` says so on its rows)."""

    customer_id: str | None = None
    exemption: CustomerExemption | None = None
    merged_into: str | None = None
    detail: str | None = None


def match_customer(candidates: Iterable[CustomerCandidate], source: str, source_id: str,
                   account: str | None) -> CustomerMatch:
    """Spec 4.5 rules 2-4: the live customers with this source and ``source_id``
    (and ``source_account_id`` when the line sends one). Exactly one: its
    exemptions apply. None: the line is taxed without exemptions. Several (one
    per account): the caller must say which; taxed without exemptions meanwhile.
    """
    matches = [
        c for c in candidates
        if c.source == source and c.source_id == source_id and (account is None or c.source_account_id == account)
    ]
    if len(matches) == 1:
        (m,) = matches
        return CustomerMatch(m.id, m.exemption, m.merged_into_customer_id)
    if not matches:
        return CustomerMatch(detail=f"no customer matches preset '{source_id}' (source {source}): "
                                    "line taxed without exemptions")
    return CustomerMatch(detail=(
        f"customer preset '{source_id}' (source {source}) matches {len(matches)} customers in different "
        "accounts: send source_account_id; line taxed without exemptions"
    ))
