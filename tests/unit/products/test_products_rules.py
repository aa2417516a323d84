"""Pure product rules (levy.domain.products)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import partial

import pytest

from levy.domain.errors import FailedPrecondition, RequiredField, ValidationFailed
from levy.domain import products
from levy.domain.products import (
    ProductRecord,
    require_usable_preset,
    resolved_codes,
)
from levy.domain.settings import DEFAULTS, OrganizationSettings
from levy.store.reference_data import catalogue, customer_sources

validate_create = partial(products.validate_create, catalogue=catalogue(), sources=customer_sources())
validate_tax_codes = partial(products.validate_tax_codes, catalogue=catalogue())
validate_update = partial(products.validate_update, catalogue=catalogue(), sources=customer_sources())

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def record(**kw: object) -> ProductRecord:
    base: dict[str, object] = dict(
        id="prd_1", organization_id="org_1", source="native", source_account_id="__default__", source_id="s",
        name="n", description="d", source_category=None, tax_codes=(), marked_sales_tax=False,
        source_updated_at=T0, created_at=T0, updated_at=T0, archived_at=None,
    )
    base.update(kw)
    return ProductRecord(**base)  # type: ignore[arg-type]


def test_resolved_codes_use_own_codes_else_the_current_default() -> None:
    assert resolved_codes(record(), DEFAULTS) == ["GENERAL.TANGIBLE.GOODS"]
    other = OrganizationSettings(default_tax_codes=("FOOD.GROCERY.GENERAL",))
    assert resolved_codes(record(), other) == ["FOOD.GROCERY.GENERAL"]
    assert resolved_codes(record(tax_codes=("SALES_TAX",)), other) == ["SALES_TAX"]
    assert resolved_codes(record(), OrganizationSettings(default_tax_codes=())) == ["GENERAL.TANGIBLE.GOODS"]


def test_validate_tax_codes_marks_sales_tax_only() -> None:
    assert validate_tax_codes([]) == ((), False)
    assert validate_tax_codes(["SALES_TAX"]) == (("SALES_TAX",), True)
    assert validate_tax_codes(["SOFTWARE.SAAS.GENERAL", "_B2B"]) == (("SOFTWARE.SAAS.GENERAL", "_B2B"), False)
    with pytest.raises(ValidationFailed) as exc:
        validate_tax_codes(["_RESALE"], "/product/tax_codes")
    assert exc.value.first.pointer == "/product/tax_codes/0"


def test_validate_create_defaults_and_required() -> None:
    v = validate_create({"source_id": "a", "name": "b"})
    assert v["source"] == "native" and v["source_account_id"] == "__default__" and v["tax_codes"] == ()
    with pytest.raises(ValidationFailed) as exc:
        validate_create({"name": None})
    assert {i.pointer for i in exc.value.items} == {"/source_id", "/name"}
    assert all(i.code == RequiredField.code for i in exc.value.items)


def test_validate_update_rules() -> None:
    cur = record(tax_codes=("FOOD.GROCERY.GENERAL",))
    assert validate_update(cur, {}) == {}
    assert validate_update(cur, {"description": None}) == {"description": None}
    assert validate_update(cur, {"tax_codes": []}) == {"tax_codes": (), "marked_sales_tax": False}
    assert validate_update(cur, {"source_updated_at": T0}) == {"source_updated_at": T0}
    with pytest.raises(FailedPrecondition) as exc:
        validate_update(cur, {"source_updated_at": T0 - timedelta(seconds=1)})
    assert exc.value.first.code == "outdated_source_updated_at" and exc.value.first.pointer == "/source_updated_at"
    with pytest.raises(ValidationFailed):
        validate_update(cur, {"source_updated_at": None})
    with pytest.raises(FailedPrecondition) as exc:
        validate_update(record(archived_at=T0), {"name": "x"})
    assert exc.value.first.code == "product_archived"


def test_require_usable_preset() -> None:
    live = record()
    assert require_usable_preset(live, "prd_1", "/p") is live
    with pytest.raises(ValidationFailed) as exc:
        require_usable_preset(None, "prd_9", "/p")
    assert "does not exist" in exc.value.first.detail and exc.value.first.pointer == "/p"
    with pytest.raises(ValidationFailed) as exc:
        require_usable_preset(record(archived_at=T0), "prd_1", "/p")
    assert exc.value.first.code == "product_archived"
