"""Product rules (spec sections 2.2, 4.3, 4.7). Pure: no I/O.

A product carries its own ``tax_codes`` or none; with none it uses the
organization default. ``resolved_tax_codes`` is computed at read time from
the current organization settings (:func:`resolved_codes`), never stored, so a
change of the default reaches every product without codes at once.

Input arrives as a dict of the fields *present* in the request (a field sent
as JSON ``null`` is present with the value ``None``; an omitted field is
absent). :func:`validate_create` and :func:`validate_update` turn it into the
column values to store, raising every problem together as 422 with pointers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from levy.domain.customers import DEFAULT_ACCOUNT_ID, DEFAULT_SOURCE, CustomerSources, validate_source
from levy.domain.errors import FailedPrecondition, RequiredField, ValidationFailed
from levy.domain.settings import OrganizationSettings
from levy.domain.catalogue import DEFAULT_TAX_CODE, Catalogue

PRODUCT_FIELDS = (
    "source_id",
    "source",
    "source_account_id",
    "name",
    "description",
    "source_category",
    "tax_codes",
    "source_updated_at",
)

# Error codes Levy chose where the spec shows none (docs/products.md).
OUTDATED_SOURCE_UPDATED_AT = "outdated_source_updated_at"
PRODUCT_ARCHIVED = "product_archived"
DUPLICATE_PRODUCT = "duplicate_product"


@dataclass(frozen=True, slots=True)
class ProductRecord:
    id: str
    organization_id: str
    source: str
    source_account_id: str
    source_id: str
    name: str
    description: str | None
    source_category: str | None
    tax_codes: tuple[str, ...]  # () = the organization default
    marked_sales_tax: bool
    source_updated_at: datetime | None
    created_at: datetime
    updated_at: datetime
    archived_at: datetime | None

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


@dataclass(frozen=True, slots=True)
class ProductView:
    """A stored product as callers see it: its record and the codes calculations use for it
    (:func:`resolved_codes` under the organization's settings of the same read)."""

    record: ProductRecord
    resolved_tax_codes: tuple[str, ...]


def product_path(product_id: str) -> str:
    return f"/products/{product_id}"


def resolved_codes(record: ProductRecord, settings: OrganizationSettings) -> list[str]:
    """The codes calculations use: the product's own, else the organization default. Never empty."""
    if record.tax_codes:
        return list(record.tax_codes)
    return list(settings.default_tax_codes) or [DEFAULT_TAX_CODE]


def validate_tax_codes(codes: list[str], pointer: str = "/tax_codes", *,
                       catalogue: Catalogue) -> tuple[tuple[str, ...], bool]:
    """Validate a product's ``tax_codes`` (section 2.4 composition rules).

    Returns the codes as given (``()`` for the organization default) and
    whether the product is marked (its only code is ``SALES_TAX``). The list
    must name a category path (or be exactly ``["SALES_TAX"]``): bare
    attributes alone would depend on whatever the organization default is.
    """
    if not codes:
        return (), False
    resolved = catalogue.resolve(list(codes), pointer)
    if resolved.category is None:
        raise ValidationFailed(
            "tax_codes name no category path: attributes trail a category path, for example "
            f"'{DEFAULT_TAX_CODE}._RESALE'; send [] to use the organization default",
            pointer=f"{pointer}/0",
        )
    return tuple(codes), resolved.is_sales_tax


def _text(
    errors: list[ValidationFailed], fields: dict[str, Any], key: str, *, required: bool, clearable: bool
) -> str | None:
    """A string field: required/blank/null rules. Lengths come from the proto field policies."""
    value = fields.get(key)
    pointer = f"/{key}"
    if value is None:
        if required:
            errors.append(RequiredField(key, pointer=pointer))
        elif key in fields and not clearable:
            errors.append(ValidationFailed(f"{key} cannot be null: it cannot be cleared", pointer=pointer))
        return None
    if not value.strip() and (required or not clearable):
        errors.append(ValidationFailed(f"{key} cannot be blank", pointer=pointer))
        return None
    return value


def _source(errors: list[ValidationFailed], fields: dict[str, Any], *, partial: bool,
            sources: CustomerSources) -> str | None:
    value = fields.get("source")
    if value is None:
        if partial and "source" in fields:
            errors.append(ValidationFailed("source cannot be null: it cannot be cleared", pointer="/source"))
        return None if partial else DEFAULT_SOURCE
    try:
        return validate_source(value, "/source", sources=sources)
    except ValidationFailed as exc:
        errors.append(exc)
        return None


def _codes(errors: list[ValidationFailed], fields: dict[str, Any],
           catalogue: Catalogue) -> tuple[tuple[str, ...], bool] | None:
    try:
        return validate_tax_codes(list(fields.get("tax_codes") or []), catalogue=catalogue)
    except ValidationFailed as exc:
        errors.append(exc)
        return None


def _raise(errors: list[ValidationFailed]) -> None:
    if errors:
        raise ValidationFailed.many(errors)


def validate_create(fields: dict[str, Any], *, catalogue: Catalogue, sources: CustomerSources) -> dict[str, Any]:
    """Column values of a new product from the fields present on create."""
    errors: list[ValidationFailed] = []
    source_id = _text(errors, fields, "source_id", required=True, clearable=False)
    name = _text(errors, fields, "name", required=True, clearable=False)
    source = _source(errors, fields, partial=False, sources=sources)
    account = _text(errors, fields, "source_account_id", required=False, clearable=True)
    if account is not None and not account.strip():
        errors.append(ValidationFailed("source_account_id cannot be blank", pointer="/source_account_id"))
    codes = _codes(errors, fields, catalogue)
    _raise(errors)
    assert codes is not None
    return {
        "source": source,
        "source_account_id": account if account is not None else DEFAULT_ACCOUNT_ID,
        "source_id": source_id,
        "name": name,
        "description": fields.get("description"),
        "source_category": fields.get("source_category"),
        "tax_codes": codes[0],
        "marked_sales_tax": codes[1],
        "source_updated_at": fields.get("source_updated_at"),
    }


def check_source_updated_at(current: datetime | None, new: datetime | None, *, present: bool) -> None:
    """``source_updated_at`` on update: cannot be cleared, cannot move back (equal is accepted)."""
    if not present:
        return
    if new is None:
        raise ValidationFailed(
            "source_updated_at cannot be cleared; omit it if source timestamps are not tracked",
            pointer="/source_updated_at",
        )
    if current is not None and new < current:
        raise FailedPrecondition(
            f"source_updated_at {new.isoformat()} is older than the stored {current.isoformat()}: "
            "it must move forward (the update is older than what Levy already has)",
            pointer="/source_updated_at",
            code=OUTDATED_SOURCE_UPDATED_AT,
            title="Outdated source_updated_at",
            meta={"current_source_updated_at": current.isoformat()},
        )


def validate_update(current: ProductRecord, fields: dict[str, Any], *, catalogue: Catalogue,
                    sources: CustomerSources) -> dict[str, Any]:
    """Column values to change on PATCH. Omitted fields are unchanged; ``description``
    and ``source_category`` sent as null are cleared; ``tax_codes`` ``[]`` or null revert
    to the organization default. Raises for an archived product."""
    if current.archived:
        raise FailedPrecondition(
            f"product {current.id} is archived and cannot be updated",
            code=PRODUCT_ARCHIVED,
            title="Product Archived",
        )
    errors: list[ValidationFailed] = []
    changes: dict[str, Any] = {}
    for key in ("source_id", "name", "source_account_id"):
        if key in fields:
            value = _text(errors, fields, key, required=False, clearable=False)
            if value is not None:
                changes[key] = value
    if "source" in fields:
        source = _source(errors, fields, partial=True, sources=sources)
        if source is not None:
            changes["source"] = source
    for key in ("description", "source_category"):
        if key in fields:
            changes[key] = fields[key]
    if "tax_codes" in fields:
        codes = _codes(errors, fields, catalogue)
        if codes is not None:
            changes["tax_codes"], changes["marked_sales_tax"] = codes
    try:
        check_source_updated_at(
            current.source_updated_at, fields.get("source_updated_at"), present="source_updated_at" in fields
        )
    except ValidationFailed as exc:
        errors.append(exc)
    else:
        if fields.get("source_updated_at") is not None:
            changes["source_updated_at"] = fields["source_updated_at"]
    _raise(errors)
    return changes


def require_usable_preset(record: ProductRecord | None, product_id: str, pointer: str) -> ProductRecord:
    """For calculations and transactions: a ``product.preset`` must name a live product of the organization."""
    if record is None:
        raise ValidationFailed(f"product preset '{product_id}' does not exist", pointer=pointer)
    if record.archived:
        raise ValidationFailed(
            f"product preset '{product_id}' is archived and cannot be used in new calculations or transactions",
            pointer=pointer,
            code=PRODUCT_ARCHIVED,
        )
    return record
