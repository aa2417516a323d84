"""Item rules: rules that act on the items of a sale rather than on a
product code alone. Data (``levy/data/tax/item_rules.json``, read by
:func:`levy.ratefiles.builtin.load_item_rules`), dated and sourced per row; nothing here names
a state. Pure: no I/O. See docs/tax-engine.md ("Item rules").

* **Delivery that follows the goods** (:class:`DeliveryRule`): a delivery, shipping or
  handling line (a category under one of the rule's ``codes``) in a state with such a rule
  is taxed according to the goods of the same calculation delivered in that state. Per
  jurisdiction row, the goods' taxable base in that jurisdiction against the goods' amounts:

  - ``follows_goods``: nothing taxable among the goods -> the delivery row is exempt;
    otherwise the delivery row is taxed as its taxability rule says (in full);
  - ``taxable_share``: the delivery row's base is its base x (the goods' taxable base /
    the goods' amount), rounded half up: exempt when every good is, whole when every good
    is taxable.

  Without goods in that state (a delivery charge alone) the line is taxed as its
  taxability rule says, and the rows say so. The other two treatments (taxed always;
  exempt when separately stated) are what the taxability files' ``SHIPPING`` rules say.

* **Single-article bands** (:class:`Band`): a component that applies only to the part of
  one article's price within (``band_from``, ``band_to``] (minor units; per unit: the
  quantity multiplies the band). Without ``rate`` the band caps the base of the rows of its
  ``types`` (local tax on the first $1,600 of a single article); with ``rate`` it adds a
  row of that rate on the band of the base of the rows of its ``types`` (an extra state
  tax on the part of the price from $1,600.01 to $3,200).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from levy.domain.money import mul_round, round_half_up, share_half_up
from levy.domain.periods import Dated
from levy.domain.tax.model import LineInput, LineResult, TaxRow

DeliveryMode = Literal["follows_goods", "taxable_share"]
DELIVERY_MODES = ("follows_goods", "taxable_share")
ROW_TYPES = ("state", "county", "city", "special")


@dataclass(frozen=True, slots=True)
class Codes:
    """Category prefixes: a category is under them when it is one or below one (on a dot boundary)."""

    codes: tuple[str, ...]
    dotted: tuple[str, ...]

    @classmethod
    def of(cls, codes: Iterable[str]) -> Codes:
        codes = tuple(codes)
        return cls(codes, tuple(c + "." for c in codes))

    def __contains__(self, category: object) -> bool:
        return isinstance(category, str) and (category in self.codes or category.startswith(self.dotted))

    def __iter__(self) -> Iterator[str]:
        return iter(self.codes)


def _money(minor: int) -> str:
    return f"${minor // 100:,}.{minor % 100:02d}"


@dataclass(frozen=True, slots=True)
class DeliveryRule(Dated):
    """How a state taxes delivery charges against the goods delivered (see the module)."""

    state: str
    mode: DeliveryMode
    codes: Codes  # categories that are delivery charges (and so never goods)
    except_codes: Codes  # delivery charges the rule leaves to taxability (electronic delivery)
    name: str
    source: str
    effective_from: date
    effective_to: date | None = None

    def is_charge(self, category: str | None) -> bool:
        return category in self.codes

    def applies_to(self, category: str | None) -> bool:
        return category in self.codes and category not in self.except_codes


@dataclass(frozen=True, slots=True)
class Band(Dated):
    """A single-article band (see the module): the part of one article's price above
    ``band_from`` up to ``band_to`` (None: no upper end), in minor units."""

    state: str
    types: frozenset[str]
    band_from: int
    band_to: int | None
    name: str
    source: str
    effective_from: date
    effective_to: date | None = None
    rate: Decimal | None = None
    except_codes: Codes = Codes((), ())

    def portion(self, amount: int, quantity: Decimal) -> int:
        """The part of ``amount`` (``quantity`` articles of equal price) within the band, per article."""
        if amount <= 0:
            return 0
        if quantity <= 1:  # one article (or a part of one): the amount is its price
            part = min(amount, self.band_to if self.band_to is not None else amount) - self.band_from
            return max(0, part)
        per = Decimal(amount) / quantity
        top = per if self.band_to is None else min(per, Decimal(self.band_to))
        return max(0, round_half_up((top - self.band_from) * quantity))

    def words(self) -> str:
        top = f"up to {_money(self.band_to)}" if self.band_to is not None else "and above"
        part = f"from {_money(self.band_from + 1)} {top}" if self.band_from else f"the first {_money(self.band_to or 0)}"
        return f"{self.name}: {part} of each article"


class ItemRules:
    """Immutable index of the item rules by state."""

    __slots__ = ("_bands", "_delivery", "_roots", "band_states", "charges", "delivery_note")

    def __init__(self, delivery: Iterable[DeliveryRule] = (), bands: Iterable[Band] = (),
                 charges: tuple[Codes, Codes] = (Codes((), ()), Codes((), ())), delivery_note: str = "") -> None:
        d: dict[str, list[DeliveryRule]] = {}
        for r in delivery:
            d.setdefault(r.state, []).append(r)
        b: dict[str, list[Band]] = {}
        for band in bands:
            b.setdefault(band.state, []).append(band)
        self._delivery = {s: tuple(rs) for s, rs in d.items()}
        self._bands = {s: tuple(bs) for s, bs in b.items()}
        self.band_states = frozenset(self._bands)  # the states with a band (a quick test)
        # What a delivery charge is where a threshold counts delivery (codes, except codes).
        self.charges = charges
        self.delivery_note = delivery_note  # the states checked and left out of ``delivery``, and why
        # The first segments of every delivery code: a line of another category is never a delivery charge.
        self._roots = tuple(sorted({c.split(".", 1)[0] for rs in self._delivery.values() for r in rs for c in r.codes}
                                   | {c.split(".", 1)[0] for c in charges[0]}))

    def delivery(self, state: str) -> tuple[DeliveryRule, ...]:
        return self._delivery.get(state, ())

    def bands(self, state: str) -> tuple[Band, ...]:
        return self._bands.get(state, ())

    def delivery_rule(self, state: str | None, on: date) -> DeliveryRule | None:
        for r in self._delivery.get(state or "", ()):
            if r.covers(on):
                return r
        return None

    def bands_for(self, state: str | None, category: str | None, on: date) -> tuple[Band, ...]:
        """The bands of ``state`` in force on ``on`` for a line of ``category``."""
        found = self._bands.get(state or "")
        if not found:
            return ()
        return tuple(b for b in found if b.covers(on) and category not in b.except_codes)

    def may_be_charge(self, category: str | None) -> bool:
        """Whether a line of ``category`` can be a delivery charge under some rule (a quick test)."""
        return category is not None and category.startswith(self._roots)

    def has_charge(self, lines: Iterable[LineInput]) -> bool:
        """Whether any of ``lines`` can be a delivery charge (:meth:`may_be_charge`, for every line of a calculation)."""
        roots = self._roots
        if roots:
            for line in lines:
                category = line.category
                if category is not None and category.startswith(roots):
                    return True
        return False


NO_ITEM_RULES = ItemRules()


def banded(bands: Sequence[Band], row: TaxRow, gross_base: int, quantity: Decimal) -> list[TaxRow]:
    """``row`` with the bands applied: its base capped by a band without a rate, and after it a
    row for each band with a rate that has a part of the base. ``gross_base`` is the row's base
    before discounts (for ``tax_amount_before_discounts``)."""
    out = [row]
    for band in bands:
        if row.jurisdiction_type not in band.types or row.taxable_base <= 0:
            continue
        base = band.portion(row.taxable_base, quantity)
        before_base = band.portion(gross_base, quantity)
        if band.rate is None:
            if base >= out[0].taxable_base:
                continue
            first = out[0]
            out[0] = replace(first, taxable_base=base, tax_amount=mul_round(base, first.tax_rate),
                             tax_amount_before_discounts=mul_round(before_base, first.tax_rate),
                             detail=f"{first.detail}; {band.words()}: base {_money(base)} of {_money(row.taxable_base)}")
        elif base > 0:
            out.append(replace(row, tax_rate=band.rate, taxable_base=base, tax_amount=mul_round(base, band.rate),
                               tax_amount_before_discounts=mul_round(before_base, band.rate), rule_name=band.name,
                               detail=f"{row.detail}; {band.words()}: base {_money(base)}"))
    return out


@dataclass(frozen=True, slots=True)
class DeliveryShare:
    """How a delivery rule reshapes one delivery line: the goods of the calculation delivered in its
    state (``whole``, their amounts before tax) and, per jurisdiction code, the part of them taxable there."""

    rule: DeliveryRule
    taxable: Mapping[str, int]
    whole: int

    def part(self, code: str) -> int:
        return min(self.taxable.get(code, 0), self.whole)

    def factor(self, code: str) -> Fraction:
        """The share of a row's base the rule keeps taxed (exact): 0 or 1 (``follows_goods``), the goods'
        taxable share (``taxable_share``), 1 without goods. For a tax-inclusive delivery line's price."""
        if self.whole <= 0:
            return Fraction(1)
        part = self.part(code)
        if part == 0 or part == self.whole or self.rule.mode == "follows_goods":
            return Fraction(1 if part else 0)
        return Fraction(part, self.whole)

    def reshape(self, row: TaxRow) -> TaxRow:
        """``row`` (of the delivery line, as its taxability rule taxed it) as the rule taxes it."""
        if self.whole <= 0:
            return _said(row, self.rule, "no goods of this calculation delivered in the state: "
                                         "taxed as its taxability rule says")
        return _follow(row, self.rule, self.part(row.jurisdiction_code), self.whole)


def delivery_shares(
    lines: Sequence[LineInput], states: Sequence[str | None], results: Sequence[LineResult], rules: ItemRules, on: date
) -> Iterator[tuple[int, DeliveryShare]]:
    """(line index, its :class:`DeliveryShare`) for each delivery line that a delivery rule reshapes.

    ``states``: each line's state (after sourcing; None for lines not taxed in a state);
    ``results``: the lines as taxed by their taxability rules (the goods' bases, before tax)."""
    for idx, line in enumerate(lines):
        if not rules.may_be_charge(line.category):
            continue
        rule = rules.delivery_rule(states[idx], on)
        if rule is None or line.is_sales_tax or not rule.applies_to(line.category):
            continue
        goods = [i for i, ln in enumerate(lines)
                 if states[i] == states[idx] and not ln.is_sales_tax and not rule.is_charge(ln.category)]
        whole = sum(max(0, results[i].taxable_amount) for i in goods)
        taxable: dict[str, int] = {}
        for i in goods if whole > 0 else ():
            seen: set[str] = set()
            for r in results[i].taxes:
                if r.jurisdiction_code not in seen:  # a band's extra row is not more goods
                    seen.add(r.jurisdiction_code)
                    taxable[r.jurisdiction_code] = taxable.get(r.jurisdiction_code, 0) + r.taxable_base
        yield idx, DeliveryShare(rule, taxable, whole)


def delivery_counted(lines: Sequence[LineInput], states: Sequence[str | None], nets: Sequence[int],
                     rules: ItemRules) -> list[int]:
    """Each goods line's share of the delivery charges of the calculation in its state, by its amount
    after discounts among the goods of that state (rounded half up per line), for the
    thresholds that count delivery (``threshold_counts``: ``price_and_delivery``); 0 elsewhere."""
    codes, excepted = rules.charges
    is_goods = [not ln.is_sales_tax and ln.category not in codes for ln in lines]
    delivery: dict[str | None, int] = {}
    goods: dict[str | None, int] = {}
    for i, ln in enumerate(lines):
        if ln.is_sales_tax or states[i] is None:
            continue
        if is_goods[i]:
            goods[states[i]] = goods.get(states[i], 0) + nets[i]
        elif ln.category not in excepted:
            delivery[states[i]] = delivery.get(states[i], 0) + nets[i]
    out = [0] * len(lines)
    for i in range(len(lines)):
        total, whole = delivery.get(states[i], 0), goods.get(states[i], 0)
        if total > 0 and whole > 0 and is_goods[i]:
            out[i] = share_half_up(total, nets[i], whole)
    return out


def _said(row: TaxRow, rule: DeliveryRule, words: str) -> TaxRow:
    return replace(row, detail=f"{row.detail}; {rule.name}: {words}")


def _follow(row: TaxRow, rule: DeliveryRule, part: int, whole: int) -> TaxRow:
    """A delivery row against goods of ``whole`` of which ``part`` is taxable in its jurisdiction."""
    if row.exempt_reason is not None:
        return row
    if part == 0:
        return replace(_said(row, rule, "every good delivered is exempt here, so is its delivery"),
                       rule_name=rule.name, taxable_base=0, tax_amount=0, tax_amount_before_discounts=0,
                       exempt_reason="non_taxable_product")
    if rule.mode == "follows_goods" or part == whole:
        return replace(_said(row, rule, f"taxable goods delivered ({_money(part)} of {_money(whole)}): "
                                        "the delivery is taxed in full"), rule_name=rule.name)
    base = share_half_up(row.taxable_base, part, whole)
    tax = mul_round(base, row.tax_rate)
    # Before discounts: the same share of the row's tax before discounts (the tax itself when there were none).
    before = tax if row.tax_amount == row.tax_amount_before_discounts \
        else share_half_up(row.tax_amount_before_discounts, part, whole)
    return replace(
        _said(row, rule, f"taxed in the taxable goods' share of the goods' price: {_money(part)} of {_money(whole)} "
                         f"-> base {_money(base)} of {_money(row.taxable_base)}"),
        rule_name=rule.name, taxable_base=base, tax_amount=tax, tax_amount_before_discounts=before)


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def parse_rules(raw: Mapping[str, object]) -> ItemRules:
    """The rules of an ``item_rules.json`` document (ValueError when malformed)."""
    delivery: list[DeliveryRule] = []
    bands: list[Band] = []
    for e in raw.get("delivery", ()):  # type: ignore[attr-defined]
        if e["mode"] not in DELIVERY_MODES:
            raise ValueError(f"item_rules.json delivery {e['state']}: mode must be one of {DELIVERY_MODES}")
        delivery.append(DeliveryRule(e["state"], e["mode"], Codes.of(e["codes"]), Codes.of(e.get("except_codes", ())),
                                     e["name"], e["source"], date.fromisoformat(e["effective_from"]),
                                     _day(e.get("effective_to"))))
    for e in raw.get("bands", ()):  # type: ignore[attr-defined]
        types = frozenset(e["types"])
        if not types or not types <= set(ROW_TYPES):
            raise ValueError(f"item_rules.json band {e['state']}: types must be among {ROW_TYPES}")
        lo, hi = int(e["band_from"]), e.get("band_to")
        if lo < 0 or (hi is not None and int(hi) <= lo):
            raise ValueError(f"item_rules.json band {e['state']}: need 0 <= band_from < band_to")
        bands.append(Band(e["state"], types, lo, int(hi) if hi is not None else None, e["name"], e["source"],
                          date.fromisoformat(e["effective_from"]), _day(e.get("effective_to")),
                          Decimal(e["rate"]) if e.get("rate") is not None else None,
                          Codes.of(e.get("except_codes", ()))))
    charges = raw.get("delivery_charges") or {}
    return ItemRules(delivery, bands, (Codes.of(charges.get("codes", ())), Codes.of(charges.get("except_codes", ()))),  # type: ignore[attr-defined]
                     str(raw.get("delivery_note") or ""))
