"""levy.domain.values.value: a frozen slotted dataclass with a faster __init__."""

import dataclasses
from decimal import Decimal

import pytest

from levy.domain.tax.model import CalculationResult, TaxRow
from levy.domain.values import value


@value
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)


def test_behaves_as_the_frozen_dataclass() -> None:
    p = Point(1, tags=("a",))
    assert (p.x, p.y, p.tags) == (1, 0, ("a",))
    assert p == Point(1, 0, ("a",)) and hash(p) == hash(Point(1, 0, ("a",)))
    assert repr(p) == "Point(x=1, y=0, tags=('a',))"
    assert dataclasses.replace(p, y=5) == Point(1, 5, ("a",))
    assert [f.name for f in dataclasses.fields(p)] == ["x", "y", "tags"]
    assert not hasattr(p, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, (), 4)  # type: ignore[call-arg]


def test_default_factory_makes_a_value_per_instance() -> None:
    @value
    class Box:
        items: list[int] = dataclasses.field(default_factory=list)

    a, b = Box(), Box()
    assert a.items == [] and a.items is not b.items


def test_refuses_what_it_does_not_support() -> None:
    with pytest.raises(TypeError):
        @value
        class WithPostInit:
            x: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError):
        @value
        class WithHidden:
            x: int
            y: int = dataclasses.field(default=0, init=False)


def test_engine_rows_are_values() -> None:
    row = TaxRow("US-ST-TX", "Texas", "state", Decimal("0.0625"), 3998, 250, True, "General")
    assert row.tax_type == "sales_tax" and row.exempt_reason is None and row.tax_amount_before_discounts == 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.tax_amount = 0  # type: ignore[misc]
    assert CalculationResult(0, "USD").lines == ()
