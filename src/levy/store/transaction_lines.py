"""How a transaction's line is stored: the request line's input fields as the bytes of its
``TransactionLineItem`` message (``StoredLine.input``), with the message kept to answer with
(``StoredLine.message``). The handlers make those bytes from the request
(:func:`levy.app.handlers.transactions.line_input`); :func:`flat_lines` makes a credit by amount's
lines from its sale's.
"""

from __future__ import annotations

from collections.abc import Sequence

from levy.domain.transactions.credits import FlatShare
from levy.domain.transactions.records import StoredLine
from levy.v1 import transactions_pb2 as pb

def flat_lines(shares: Sequence[FlatShare]) -> tuple[StoredLine, ...]:
    """The lines of a credit by amount: each the sale's line it reverses, as received,
    with quantity 1, the net amount refunded as its unit price and no discounts; the sale line's
    customer, product and ship-from."""
    out = []
    for share in shares:
        sale_line = share.sale_line
        li = pb.TransactionLineItem()
        li.MergeFromString(sale_line.input)
        for name in ("discounts", "discount_amount", "vendor_discount_amount"):
            li.ClearField(name)
        li.quantity, li.unit_price = "1", str(share.result.amount)
        out.append(StoredLine(li.SerializeToString(deterministic=True), share.result, sale_line.customer_id,
                              sale_line.product_id, ship_from=sale_line.ship_from, message=li))
    return tuple(out)

