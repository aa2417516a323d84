"""Product tax code catalogue (spec sections 2.3, 2.4, 4.4, 4.7).

The catalogue is data: ``levy/data/catalogue/product_tax_codes.json`` and
``levy/data/catalogue/product_attributes.json``, read by
:mod:`levy.store.reference_data` and parsed by :func:`parse_catalogue`;
everything here is pure.

A tax code is a dot-separated UPPERCASE category path ``TOP.SECOND.LEAF``,
optionally followed by attributes (components starting with ``_``):
``SOFTWARE.SAAS.GENERAL._B2B._SUBSCRIPTION``. ``SALES_TAX`` is a special
single-component code (section 4.7) that never takes attributes and is only
ever the sole code of a list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from levy.domain.errors import ValidationFailed

DEFAULT_TAX_CODE = "GENERAL.TANGIBLE.GOODS"
SALES_TAX_CODE = "SALES_TAX"



@dataclass(frozen=True, slots=True)
class TaxCode:
    code: str
    description: str | None


@dataclass(frozen=True, slots=True)
class AttributeGroup:
    key: str
    name: str
    exclusive: bool


@dataclass(frozen=True, slots=True)
class ProductAttribute:
    code: str
    name: str
    description: str
    group: AttributeGroup
    ptcs: tuple[str, ...]  # top-level categories; () = every product

    def applies_to(self, category: str) -> bool:
        """True when this attribute may trail ``category`` (a category path)."""
        if category == SALES_TAX_CODE:
            return False
        return not self.ptcs or category.split(".", 1)[0] in self.ptcs


@dataclass(frozen=True, slots=True)
class ResolvedTaxCode:
    """A validated ``tax_codes`` / ``tax_attributes`` list.

    ``category`` is the category path named in the list or, when the list
    holds only bare attributes, the ``default_category`` they were applied to
    (None when neither exists, e.g. an empty list). ``attributes`` keep the
    order in which they were given. For ``SALES_TAX`` the category is
    ``"SALES_TAX"`` and ``is_sales_tax`` is True.
    """

    category: str | None
    attributes: tuple[str, ...]
    is_sales_tax: bool

    @property
    def full_code(self) -> str:
        parts = ([self.category] if self.category else []) + list(self.attributes)
        return ".".join(parts)


class Catalogue:
    """The product tax codes and attributes, with lookup, paging and validation."""

    def __init__(self, tax_codes: list[TaxCode], attributes: list[ProductAttribute]) -> None:
        self._tax_codes = tuple(sorted(tax_codes, key=lambda t: t.code))
        self._attributes = tuple(sorted(attributes, key=lambda a: a.code))
        self._codes = {t.code: t for t in self._tax_codes}
        self._attrs = {a.code: a for a in self._attributes}
        if len(self._codes) != len(self._tax_codes):
            raise ValueError("duplicate tax code in catalogue data")
        if len(self._attrs) != len(self._attributes):
            raise ValueError("duplicate attribute in catalogue data")
        prefixes: set[str] = set()
        for code in self._codes:
            if code == SALES_TAX_CODE:
                continue
            parts = code.split(".")
            for i in range(1, len(parts) + 1):
                prefixes.add(".".join(parts[:i]))
        self._prefixes = frozenset(prefixes)
        self._top_level = frozenset(c.split(".", 1)[0] for c in self._codes if c != SALES_TAX_CODE)

    # -- lookup ---------------------------------------------------------
    @property
    def tax_codes(self) -> tuple[TaxCode, ...]:
        return self._tax_codes

    @property
    def attributes(self) -> tuple[ProductAttribute, ...]:
        return self._attributes

    @property
    def top_level_categories(self) -> frozenset[str]:
        return self._top_level

    def get_tax_code(self, code: str) -> TaxCode | None:
        return self._codes.get(code)

    def get_attribute(self, code: str) -> ProductAttribute | None:
        return self._attrs.get(code)

    # -- paging (section 4.4) -------------------------------------------
    @staticmethod
    def _check_limit(limit: int) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValidationFailed(f"limit must be a positive integer, got {limit!r}", parameter="limit")

    @staticmethod
    def _page(items: list, limit: int, starting_after: str | None) -> tuple[list, bool]:
        if starting_after is not None:
            items = [i for i in items if i.code > starting_after]
        return items[:limit], len(items) > limit

    def page_tax_codes(self, limit: int, starting_after: str | None = None) -> tuple[list[TaxCode], bool]:
        """Keyset page by code: items with ``code > starting_after``; returns (items, has_more)."""
        self._check_limit(limit)
        return self._page(list(self._tax_codes), limit, starting_after)

    def page_attributes(
        self, limit: int, starting_after: str | None = None, ptc: str | None = None
    ) -> tuple[list[ProductAttribute], bool]:
        """Keyset page of attributes, optionally only those applying to ``ptc``.

        ``ptc`` is a tax code, possibly with attribute suffixes
        (``SOFTWARE.SAAS.GENERAL._B2B``), or a known category prefix
        (``SOFTWARE`` or ``SOFTWARE.SAAS``). ``SALES_TAX`` takes no
        attributes, so its page is empty. Anything else is refused.
        """
        self._check_limit(limit)
        items = list(self._attributes)
        if ptc is not None:
            category = self._ptc_category(ptc)
            items = [a for a in items if a.applies_to(category)]
        return self._page(items, limit, starting_after)

    def _ptc_category(self, ptc: str) -> str:
        if ptc == SALES_TAX_CODE:
            return SALES_TAX_CODE
        if ptc in self._prefixes:
            return ptc
        try:
            resolved = self.resolve([ptc], "/ptc")
        except ValidationFailed as exc:
            detail = "; ".join(item.detail for item in exc.items)
            raise ValidationFailed(f"ptc {ptc!r} is not a known product tax code: {detail}", parameter="ptc") from None
        if resolved.category is None:
            raise ValidationFailed(
                f"ptc {ptc!r} is not a known product tax code: it names no category path", parameter="ptc"
            )
        return resolved.category

    # -- validation of a code list (sections 2.4, 4.7) -------------------
    def resolve(
        self,
        codes: list[str],
        pointer: str,
        *,
        allow_sales_tax: bool = True,
        default_category: str | None = None,
    ) -> ResolvedTaxCode:
        """Validate a product's ``tax_codes`` or a line's ``product.tax_attributes``.

        Each entry is a category path, a path with trailing attributes, or one
        or more bare attributes (``_A`` or ``_A._B``) that apply to the path
        given by another entry or else to ``default_category``. Every problem
        is collected (pointer ``{pointer}/{index}``) and raised together.
        """
        if default_category is not None and default_category not in self._codes:
            raise ValueError(f"default_category {default_category!r} is not a catalogue code")
        errors: list[tuple[int, ValidationFailed]] = []

        def fail(index: int, detail: str) -> None:
            errors.append((index, ValidationFailed(detail, pointer=f"{pointer}/{index}")))

        if not codes:
            return ResolvedTaxCode(None, (), False)

        category: str | None = None
        category_index = -1
        attrs: list[tuple[int, str]] = []  # (index, code) in given order
        sales_tax_ok = False

        for index, entry in enumerate(codes):
            if not isinstance(entry, str):
                fail(index, f"tax code must be a string, got {type(entry).__name__}")
                continue
            if entry == SALES_TAX_CODE or entry.split(".", 1)[0] == SALES_TAX_CODE:
                if entry != SALES_TAX_CODE:
                    fail(index, f"'{entry}': SALES_TAX never takes attributes; send exactly 'SALES_TAX'")
                elif not allow_sales_tax:
                    fail(index, "SALES_TAX is not allowed here (it cannot be the organization default)")
                elif len(codes) != 1:
                    fail(index, "SALES_TAX must be the only tax code: no other code or attribute beside it")
                else:
                    sales_tax_ok = True
                continue
            if entry.upper() == SALES_TAX_CODE or entry.split(".", 1)[0].upper() == SALES_TAX_CODE:
                fail(index, f"unknown tax code '{entry}': codes are case-sensitive (did you mean 'SALES_TAX'?)")
                continue
            parts = entry.split(".")
            if entry == "" or any(p == "" for p in parts):
                fail(index, f"malformed tax code '{entry}': empty component")
                continue
            path_parts: list[str] = []
            entry_attrs: list[str] = []
            misplaced = False
            for part in parts:
                if part.startswith("_"):
                    entry_attrs.append(part)
                elif entry_attrs:
                    misplaced = True
                else:
                    path_parts.append(part)
            if misplaced:
                fail(index, f"malformed tax code '{entry}': attributes must trail the category path")
                continue
            if path_parts:
                path = ".".join(path_parts)
                if path not in self._codes:
                    if path.upper() in self._codes:
                        fail(index, f"unknown tax code '{path}': codes are case-sensitive (did you mean '{path.upper()}'?)")
                    elif path in self._prefixes:
                        fail(index, f"unknown tax code '{path}': a category path must name a leaf code, not a prefix")
                    else:
                        fail(index, f"unknown tax code '{path}'")
                    continue
                if category is not None:
                    fail(
                        index,
                        f"more than one category path: '{path}' given after '{category}' (at index {category_index})",
                    )
                    continue
                category, category_index = path, index
            attrs.extend((index, a) for a in entry_attrs)

        if sales_tax_ok and not errors:
            return ResolvedTaxCode(SALES_TAX_CODE, (), True)

        effective = category if category is not None else default_category
        seen: dict[str, int] = {}
        groups: dict[str, tuple[int, str]] = {}
        accepted: list[str] = []
        for index, code in attrs:
            attr = self._attrs.get(code)
            if attr is None:
                if code.upper() in self._attrs:
                    fail(index, f"unknown attribute '{code}': codes are case-sensitive (did you mean '{code.upper()}'?)")
                else:
                    fail(index, f"unknown attribute '{code}'")
                continue
            if code in seen:
                fail(index, f"duplicate attribute '{code}' (already given at index {seen[code]})")
                continue
            seen[code] = index
            if effective is None:
                if attr.ptcs:
                    fail(
                        index,
                        f"attribute '{code}' applies only to {', '.join(attr.ptcs)} codes and no category path was given",
                    )
                    continue
            elif not attr.applies_to(effective):
                fail(
                    index,
                    f"attribute '{code}' does not apply to '{effective}': it applies only to "
                    f"{', '.join(attr.ptcs)} codes",
                )
                continue
            if attr.group.exclusive:
                other = groups.get(attr.group.key)
                if other is not None:
                    fail(
                        index,
                        f"attribute '{code}' conflicts with '{other[1]}' (index {other[0]}): "
                        f"both are in the exclusive group '{attr.group.key}'",
                    )
                    continue
                groups[attr.group.key] = (index, code)
            accepted.append(code)

        if errors:
            errors.sort(key=lambda e: e[0])  # stable: by entry, then in order found
            raise ValidationFailed.many([e for _, e in errors])
        return ResolvedTaxCode(effective, tuple(accepted), False)


def parse_catalogue(codes_doc: Mapping[str, Any], attrs_doc: Mapping[str, Any]) -> Catalogue:
    """The catalogue of ``product_tax_codes.json`` and ``product_attributes.json`` (their parsed documents)."""
    tax_codes = [TaxCode(e["code"], e.get("description")) for e in codes_doc["tax_codes"]]
    attributes = [
        ProductAttribute(
            code=e["code"],
            name=e["name"],
            description=e["description"],
            group=AttributeGroup(e["group"]["key"], e["group"]["name"], bool(e["group"]["exclusive"])),
            ptcs=tuple(e["ptcs"]),
        )
        for e in attrs_doc["attributes"]
    ]
    return Catalogue(tax_codes, attributes)
