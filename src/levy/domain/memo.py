"""A bounded memo for pure functions of immutable in-memory data (the rate
table's resolutions, the taxability index's lookups): kept until it holds
``size`` entries, then started over (entries are cheap to work out again)."""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedMemo(dict[K, V], Generic[K, V]):
    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: K, value: V) -> V:
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value
