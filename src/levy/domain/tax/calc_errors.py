"""The wording and shape of calculation errors (spec 4.7 rule 5), in one place.

The engine, the line rules and the application raise these; transports only
map them (levy/transport/errors.py).
"""

from __future__ import annotations

from levy.domain.errors import ErrorItem, LevyError, RequiredField, ValidationFailed

INVALID_SALES_TAX_LINE = "invalid_sales_tax_line"
SALES_TAX_DETAIL = "Validation failed: invalid_sales_tax_line"
MULTIPLE_VALIDATION = "Validation failed: multiple errors"
MULTIPLE_PROCESSING = "Processing failed: multiple errors"


def combine_errors(errors: list[LevyError]) -> LevyError:
    """Combine calculation errors as section 4.7 rule 5 says.

    Only collected-tax violations -> ``Validation failed: invalid_sales_tax_line``;
    several validation errors of other kinds too -> ``Validation failed: multiple
    errors``; any non-validation (calculation) error among several ->
    ``Processing failed: multiple errors``. A single other error is returned as is.
    """
    if not errors:
        raise ValueError("no errors to combine")
    items = [i for e in errors for i in e.items]
    sales_tax = [i for i in items if i.type == INVALID_SALES_TAX_LINE]
    if len(items) == len(sales_tax):
        return ValidationFailed(SALES_TAX_DETAIL, items=items)
    if len(items) == 1:
        return errors[0]
    if any(not isinstance(e, ValidationFailed) for e in errors):
        return ValidationFailed(MULTIPLE_PROCESSING, items=items)
    return ValidationFailed(MULTIPLE_VALIDATION, items=items)


def sales_tax_error(pointer: str, why: str) -> ValidationFailed:
    return ValidationFailed(SALES_TAX_DETAIL, pointer=pointer or None, type=INVALID_SALES_TAX_LINE, meta={"rule": why})


def shape_error(err: LevyError) -> LevyError:
    """Section 4.7 rule 5 in the calculation error shape.

    Collected-tax violations never name the line: they become one item
    ``{type: invalid_sales_tax_line, loc: ["body", "line_items"]}``. The first
    item's ``msg`` (and the gRPC status message) is the spec's detail:
    ``Validation failed: invalid_sales_tax_line`` alone, or ``Validation failed:
    multiple errors`` / ``Processing failed: multiple errors`` followed by the
    other errors' own items.
    """
    sales = [i for i in err.items if i.type == INVALID_SALES_TAX_LINE]
    if not sales:
        return err
    others = [i for i in err.items if i.type != INVALID_SALES_TAX_LINE]
    if not others:
        message = SALES_TAX_DETAIL
    elif err.detail == MULTIPLE_PROCESSING or any(i.status != 422 for i in others):
        message = MULTIPLE_PROCESSING
    else:
        message = MULTIPLE_VALIDATION
    head = ErrorItem(
        status=422,
        code="validation_error",
        title="Validation Error",
        detail=message,
        pointer="/line_items",
        meta={"rules": sorted({str((i.meta or {}).get("rule")) for i in sales})},
        type=INVALID_SALES_TAX_LINE,
        input=None,
    )
    return ValidationFailed(message, items=[head, *others])


# A line's own problems (levy.app.calculate parses the request line; these say what is wrong).

def line_id_required(p: str) -> RequiredField:
    return RequiredField("id", pointer=f"{p}/id", detail="The line item id is required.")


def unit_price_required(p: str) -> RequiredField:
    return RequiredField("unit_price", pointer=f"{p}/unit_price", detail="The line item unit_price is required.")


def discount_amount_required(p: str, j: int) -> RequiredField:
    return RequiredField("amount", pointer=f"{p}/discounts/{j}/amount", detail="The discount amount is required.")


def product_preset_id_required(p: str) -> RequiredField:
    return RequiredField("id", pointer=f"{p}/product/preset/id", detail="The product preset id is required.")


def no_such_product(p: str, pid: str) -> ValidationFailed:
    return ValidationFailed(f"No product '{pid}' exists.", pointer=f"{p}/product/preset/id", input=pid,
                            type="not_found")


def product_archived(p: str, pid: str) -> ValidationFailed:
    return ValidationFailed(f"The product '{pid}' is archived.", pointer=f"{p}/product/preset/id", input=pid,
                            type="archived")


def customer_preset_id_required(p: str) -> RequiredField:
    return RequiredField("id", pointer=f"{p}/customer/preset/id",
                         detail="The customer preset id (its source_id) is required.")
