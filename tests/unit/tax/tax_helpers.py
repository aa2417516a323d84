from __future__ import annotations

from datetime import date
from decimal import Decimal

from levy.domain.tax.model import Address, LineInput, Registration
from levy.ratefiles.builtin import load_states

ALL_STATES = [s.code for s in load_states()]
REG_ALL = tuple(Registration(f"US-ST-{s}", date(2000, 1, 1)) for s in ALL_STATES)
D = date(2026, 3, 15)


def mkline(
    id="1", state="TX", cat="GENERAL.TANGIBLE.GOODS", attrs=(), qty="1", price=10000, zip=None, country="US", **kw
) -> LineInput:
    return LineInput(
        id=id,
        quantity=Decimal(qty),
        unit_price=price,
        category=cat,
        attributes=tuple(attrs),
        address=Address(state=state, postal_code=zip, country=country),
        pointer=f"/line_items/{id}",
        **kw,
    )
