"""How a transaction's line is stored: the request line's input fields as protobuf bytes
(``StoredLine.input``), with the message kept to answer with (``StoredLine.message``).

The one place the transactions service meets the line's wire format: the line as received
(:func:`line_input`) and a credit by amount's lines rebuilt from its sale's (:func:`flat_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence

from levy.app.registry import output_only_names
from levy.domain.transactions.credits import FlatShare
from levy.domain.transactions.records import StoredLine
from levy.v1 import transactions_pb2 as pb

_LINE_OUTPUTS = output_only_names(pb.TransactionLineItem.DESCRIPTOR)


def line_input(li: pb.TransactionLineItem, tax_behavior: str | None = None) -> tuple[bytes, pb.TransactionLineItem]:
    """The request line as received (its input fields), stored and echoed back: serialized
    and as the message (the request's own when it sets no output field, as it usually does not).
    ``tax_behavior``: the transaction's, stored on a line that sends none (each line keeps the
    behaviour it was taxed with)."""
    inherit = tax_behavior is not None and not li.HasField("tax_behavior")
    if not inherit and not any(f.name in _LINE_OUTPUTS for f, _ in li.ListFields()):
        return li.SerializeToString(deterministic=True), li
    clean = pb.TransactionLineItem()
    clean.CopyFrom(li)
    for name in _LINE_OUTPUTS:
        clean.ClearField(name)
    if inherit and tax_behavior is not None:
        clean.tax_behavior = tax_behavior
    return clean.SerializeToString(deterministic=True), clean


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

