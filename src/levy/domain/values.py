"""Immutable value objects that are cheap to build.

``@value`` is ``@dataclass(frozen=True, slots=True)`` (same fields, equality,
hash, repr, ``dataclasses.replace``, ``FrozenInstanceError`` on assignment)
with a faster ``__init__``. The frozen dataclass ``__init__`` stores each field
through ``object.__setattr__(self, "name", value)``: a global and an attribute
lookup, then a search of the class for the slot, per field. The one made here
calls each slot's own setter, bound once when the class is made. A 12-field
row is built in about 1.5 µs instead of 2.6 µs; the calculation path builds a
few dozen of them per request (rows, lines, addresses, results).

Only plain fields are supported (defaults and ``default_factory``, no
``InitVar``, ``init=False`` or ``kw_only`` fields); a class that needs more is
refused when it is defined, so the decorator never silently differs from the
dataclass it stands for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

_T = TypeVar("_T")
_NOTHING = object()


@dataclass_transform(frozen_default=True)
def value(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True, slots=True)`` with the fast ``__init__`` above."""
    cls = dataclasses.dataclass(frozen=True, slots=True)(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    hidden = [f.name for f in getattr(cls, "__dataclass_fields__", {}).values()
              if f._field_type is not dataclasses._FIELD]  # type: ignore[attr-defined]
    if hidden or any(not f.init or f.kw_only for f in fields) or hasattr(cls, "__post_init__"):
        raise TypeError(f"@value supports plain fields only; use @dataclass for {cls.__name__}")
    ns: dict[str, Any] = {"_NOTHING": _NOTHING}
    params: list[str] = []
    body: list[str] = []
    for f in fields:
        setter = f"_set_{f.name}"
        ns[setter] = cls.__dict__[f.name].__set__
        if f.default is not dataclasses.MISSING:
            ns[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
            body.append(f"    {setter}(self, {f.name})")
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_factory_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_NOTHING")
            body.append(f"    {setter}(self, _factory_{f.name}() if {f.name} is _NOTHING else {f.name})")
        else:
            if any(p.count("=") for p in params):
                raise TypeError(f"non-default field {f.name!r} follows a default one in {cls.__name__}")
            params.append(f.name)
            body.append(f"    {setter}(self, {f.name})")
    src = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(src, ns)  # noqa: S102 - source built above from the class's own field names
    init: Callable[..., None] = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[misc]
    return cls
