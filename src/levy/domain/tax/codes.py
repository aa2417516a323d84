"""Parsing tax codes of a line: category path, trailing attributes, SALES_TAX."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from levy.domain.tax.model import SALES_TAX_CODE


@dataclass(frozen=True, slots=True)
class TaxCodes:
    category: str | None
    attributes: tuple[str, ...]
    is_sales_tax: bool = False
    sales_tax_violation: bool = False


def parse_tax_codes(codes: Sequence[str]) -> TaxCodes:
    """Split full codes (``CAT.PATH._ATTR1._ATTR2``) into a category path and attributes.

    The first code's category path is the line's category; attributes are the
    union over all codes, in order (a bare ``_ATTR`` code is an attribute).
    ``SALES_TAX`` is recognised case-sensitively; any code whose first
    component is ``SALES_TAX`` makes a collected-tax line, and anything but
    exactly ``["SALES_TAX"]`` is then a violation (section 4.7 rule 1).
    """
    return _parse(tuple(codes))


@lru_cache(maxsize=4096)
def _parse(codes: tuple[str, ...]) -> TaxCodes:
    """:func:`parse_tax_codes` of an immutable tuple; pure, so its results are kept
    (a catalogue has a few hundred distinct code lists; the cache is bounded)."""
    if any(c.split(".", 1)[0] == SALES_TAX_CODE for c in codes):
        return TaxCodes(None, (), True, not (len(codes) == 1 and codes[0] == SALES_TAX_CODE))
    category: str | None = None
    attrs: list[str] = []
    for code in codes:
        parts = code.split(".")
        path = [p for p in parts if not p.startswith("_")]
        for p in parts:
            if p.startswith("_") and p not in attrs:
                attrs.append(p)
        if category is None and path:
            category = ".".join(path)
    return TaxCodes(category, tuple(attrs))
