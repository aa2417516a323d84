"""Numbers past the storage range (issue 16): every amount, quantity and total a
transaction stores stays within the signed 64-bit range (``levy.domain.money.MAX_AMOUNT``,
2**63 - 1 = 9223372036854775807), on create and update, through REST and gRPC, on
SQLite and PostgreSQL. Past it is 422 / INVALID_ARGUMENT with a pointer at the field
(or at ``/line_items`` for a sum) and nothing stored; before the fix each was a 500
(SQLite OverflowError, PostgreSQL DataError). Calculations use the same bound.

Figures by hand: TX without postal code = Texas 6.25% only."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from google.protobuf import json_format

from levyserver import Tenant
from levytest import call_error, md
from levy.v1 import calculations_pb2 as cpb
from levy.v1 import calculations_pb2_grpc as cpbg
from txn_api import D, Txn, body, line, tax_line, tx  # noqa: F401  (fixture)

MAX = 2**63 - 1  # 9223372036854775807
NINES = "9" * 30
TWO_63 = str(2**63)  # 9223372036854775808
TWO_62 = 2**62  # 4611686018427387904; two of them: 2**63, one past MAX

# (case, lines, extra transaction fields, pointer of the error)
CASES: list[tuple[str, list[dict[str, Any]], dict[str, Any], str]] = [
    ("unit_price 2**63", [line("1", price=2**63)], {}, "/line_items/0/unit_price"),
    ("unit_price -2**63", [line("1", price=-(2**63))], {}, "/line_items/0/unit_price"),
    ("quantity thirty 9s", [line("1", price=100, qty=NINES)], {}, "/line_items/0/quantity"),
    ("tax_amount 2**63", [line("1")], {"tax_amount": TWO_63}, "/tax_amount"),
    ("discount_amount thirty 9s", [line("1")], {"discount_amount": NINES}, "/discount_amount"),
    ("vendor_discount_amount thirty 9s", [line("1")], {"vendor_discount_amount": NINES}, "/vendor_discount_amount"),
    ("line discount_amount thirty 9s", [line("1", discount_amount=NINES)], {}, "/line_items/0/discount_amount"),
    ("line vendor_discount_amount thirty 9s", [line("1", vendor_discount_amount=NINES)], {},
     "/line_items/0/vendor_discount_amount"),
    ("line discounts amount thirty 9s", [line("1", discounts=[{"id": "d", "amount": NINES}])], {},
     "/line_items/0/discounts/0/amount"),
    ("SALES_TAX line thirty 9s", [line("1"), {**tax_line("T"), "unit_price": NINES}], {}, "/line_items/1/unit_price"),
    # Each field in range, the product past it: 2**62 x 2 = 2**63.
    ("quantity x unit_price 2**63", [line("1", price=TWO_62, qty="2")], {}, "/line_items/0"),
    # Two lines of 2**62: together 2**63.
    ("two lines of 2**62", [line("1", price=TWO_62), line("2", price=TWO_62)], {}, "/line_items"),
    # A line of 2**62 and a negative one of -2**62: by size 2**63 (each line's amount is stored
    # and the positive ones are summed apart).
    ("2**62 and -2**62", [line("1", price=TWO_62), line("2", price=-TWO_62)], {}, "/line_items"),
    ("two SALES_TAX lines of 2**62", [line("1"), tax_line("T1", TWO_62), tax_line("T2", TWO_62)], {}, "/line_items"),
    # tax_amount 2**62 plus a collected line of 2**62: stored tax 2**63.
    ("tax_amount plus SALES_TAX line", [line("1"), tax_line("T", TWO_62)], {"tax_amount": str(TWO_62)},
     "/tax_amount"),
]


def assert_refused(tx: Txn, result: tuple[int, dict[str, Any]], pointer: str) -> None:
    status, out = result
    assert status == 422, out
    errors = out["errors"]
    assert [e["code"] for e in errors] == ["validation_error"], errors
    assert errors[0]["source"]["pointer"] == pointer, errors
    assert "9223372036854775807" in errors[0]["detail"], errors
    if tx.transport == "grpc":
        assert out["grpc_code"] == grpc.StatusCode.INVALID_ARGUMENT
        assert [v[0] for v in out["violations"]] == [pointer]


def listed(tx: Txn) -> list[str]:
    return [t["id"] for t in tx.list()["data"]]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_create_past_the_range_is_422(tx: Txn, case: tuple[str, list[dict[str, Any]], dict[str, Any], str]) -> None:
    _, lines, extra, pointer = case
    before = listed(tx)
    assert_refused(tx, tx.create_raw(body(*lines, **extra)), pointer)
    assert listed(tx) == before  # nothing stored


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_update_past_the_range_is_422(tx: Txn, case: tuple[str, list[dict[str, Any]], dict[str, Any], str]) -> None:
    _, lines, extra, pointer = case
    draft = tx.create(body(line("1", price=10000)))  # 10000 x 6.25% = 625
    assert_refused(tx, tx.update_raw(draft["id"], {"line_items": lines, **extra}), pointer)
    after = tx.get(draft["id"])
    assert (after["tax_amount"], [ln["unit_price"] for ln in after["line_items"]]) == ("625", ["10000"])


def test_update_tax_amount_alone_past_the_range(tx: Txn) -> None:
    draft = tx.create(body(line("1", price=10000), tax_line("T", TWO_62)))
    assert draft["tax_amount"] == str(TWO_62)
    assert_refused(tx, tx.update_raw(draft["id"], {"tax_amount": TWO_63}), "/tax_amount")
    # Collected 2**62 stays counted: 2**62 more makes 2**63.
    assert_refused(tx, tx.update_raw(draft["id"], {"tax_amount": str(TWO_62)}), "/tax_amount")
    # 2**62 - 1 more is MAX exactly: accepted.
    assert tx.update(draft["id"], {"tax_amount": str(TWO_62 - 1)})["tax_amount"] == str(MAX)


def test_the_largest_amount_is_stored(tx: Txn) -> None:
    # One line of 2**63 - 1: Texas 6.25% = 9223372036854775807 / 16 = 576460752303423487.9375 -> 576460752303423488.
    sale = tx.create(body(line("1", price=MAX), status="finalized"))
    assert sale["tax_amount"] == "576460752303423488"
    got = tx.get(sale["id"])
    assert got["line_items"][0]["unit_price"] == str(MAX) and got["tax_amount"] == "576460752303423488"
    # Quantity at the bound with a price of 1: the same amount.
    assert tx.create(body(line("1", price=1, qty=str(MAX))))["tax_amount"] == "576460752303423488"


def calculate(tx: Txn, channel: grpc.Channel, tenant: Tenant, *lines: dict[str, Any]) -> tuple[int, Any]:
    """POST /calculations through the test's transport: (status, body); gRPC errors as the REST 422 shape."""
    req = {"transaction_date": D, "line_items": list(lines)}
    if tx.transport == "rest":
        r = tx.http.post("/calculations", json=req)
        return r.status_code, r.json()
    stub = cpbg.CalculationServiceStub(channel)
    msg = json_format.ParseDict(req, cpb.CreateCalculationRequest())
    try:
        return 200, json_format.MessageToDict(stub.CreateCalculation(msg, metadata=md(tenant.key)),
                                              preserving_proto_field_name=True)
    except grpc.RpcError:
        err = call_error(stub.CreateCalculation, msg, md(tenant.key))
        assert err.code == grpc.StatusCode.INVALID_ARGUMENT, err
        return 422, {"detail": [{"loc": ["body", *[int(p) if p.isdigit() else p for p in f.split("/")[1:]]]}
                                for f, _ in err.violations]}


def test_calculation_uses_the_same_bound(tx: Txn, channel: grpc.Channel, tenant: Tenant) -> None:
    status, out = calculate(tx, channel, tenant, line("1", price=2**63))
    assert status == 422 and [i["loc"] for i in out["detail"]] == [["body", "line_items", 0, "unit_price"]]
    status, out = calculate(tx, channel, tenant, line("1", price=TWO_62), line("2", price=TWO_62))
    assert status == 422 and [i["loc"] for i in out["detail"]] == [["body", "line_items"]]
    # At the bound the calculation answers: 9223372036854775807 x 6.25% -> 576460752303423488 (as above).
    status, out = calculate(tx, channel, tenant, line("1", price=MAX))
    assert status == 200 and out["tax_amount"] == "576460752303423488"
