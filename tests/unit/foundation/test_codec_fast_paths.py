"""The codec's fast path for repeated items gives exactly what the general path gives:
the same message, errors and per-item errors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from levy.transport import codec
from levy.v1 import calculations_pb2, customers_pb2

TIMES = ["2026-01-01T00:00:00Z", "2026-03-01", "2026-01-01T12:30:00.123456+02:00", "2026-01-01T00:00:00",
         "1970-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "yesterday", "", "2026-13-01",
         "x" * 80]
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False), st.sampled_from(TIMES),
    st.text(max_size=6), st.just("a\x00b"), st.just({}), st.just({"seconds": 5}), st.just([]), st.just(["a"]),
)
CUSTOMER_KEYS = ["source_id", "source", "source_account_id", "name", "email", "source_updated_at", "id",
                 "created_at", "exemption", "merged_into_customer_id", "bogus"]


def _parse(cls: Any, data: Any, monkeypatch: pytest.MonkeyPatch | None) -> tuple[bytes, Any, Any]:
    with pytest.MonkeyPatch.context() as mp:
        if monkeypatch is not None:  # the general path only
            mp.setattr(codec, "_item_plan", lambda desc: None)
        msg = cls()
        result = codec.ParseResult()
        codec.parse_into(msg, data, "", result, top=True)
    errors = [it for e in result.errors for it in e.items]
    return msg.SerializeToString(deterministic=True), errors, result.item_errors


def _same(cls: Any, data: Any) -> None:
    fast = _parse(cls, data, None)
    general = _parse(cls, data, pytest.MonkeyPatch())
    assert fast == general


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.dictionaries(st.sampled_from(CUSTOMER_KEYS), VALUES, max_size=7), VALUES), max_size=6))
def test_batch_items_parse_as_the_general_path(items: list[Any]) -> None:
    _same(customers_pb2.BatchUpsertCustomersRequest, {"data": items})


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["type", "value", "country", "x"]), VALUES, max_size=4), max_size=4))
def test_nested_plain_items_parse_as_the_general_path(tax_ids: list[Any]) -> None:
    _same(calculations_pb2.CreateCalculationRequest,
          {"line_items": [{"id": "l1", "customer": {"tax_ids": tax_ids}}]})


def test_plain_items_take_the_fast_path() -> None:
    data = {"data": [{"source_id": "a", "name": None, "source_updated_at": "2026-01-01T00:00:00Z"}]}
    assert codec._item_plan(customers_pb2.Customer.DESCRIPTOR) is not None
    assert codec._item_plan(calculations_pb2.LineItem.DESCRIPTOR) is None  # writable nested messages
    _same(customers_pb2.BatchUpsertCustomersRequest, data)

