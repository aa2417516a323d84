"""The codec's fast paths for repeated items give exactly what the general paths give:
the same message, errors, per-item errors and rendered JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from google.protobuf import descriptor, json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from levy.app import error_objects
from levy.app.registry import field_policy, methods
from levy.transport import codec
from levy.v1 import calculations_pb2, customers_pb2

FD = descriptor.FieldDescriptor

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


# ---------------------------------------------------------------- rendering


def _walk_to_json(msg: Any) -> dict[str, Any]:
    """The rendering rules as a plain walk over the fields (what the generated renderers unroll)."""
    out: dict[str, Any] = {}
    for f in msg.DESCRIPTOR.fields:
        special = f.message_type.full_name if f.type == FD.TYPE_MESSAGE else None
        if codec.is_map(f):  # map<string, scalar>: a JSON object
            out[f.name] = dict(getattr(msg, f.name))
        elif f.is_repeated:
            values = getattr(msg, f.name)
            if not values and field_policy(f).null_when_empty:
                out[f.name] = None
            elif special:
                out[f.name] = [_walk_value(v, special) for v in values]
            else:
                out[f.name] = list(values)
        elif f.has_presence and not msg.HasField(f.name):
            out[f.name] = None
        elif special:
            out[f.name] = _walk_value(getattr(msg, f.name), special)
        else:
            out[f.name] = getattr(msg, f.name)
    return out


def _walk_value(v: Any, special: str) -> Any:
    if special == "google.protobuf.Timestamp":
        return codec.format_timestamp(v)
    if special == "google.protobuf.Struct":
        return json_format.MessageToDict(v)
    if special == "levy.v1.ErrorObject":  # the spec's shape (tests/unit/foundation/test_error_objects.py)
        return error_objects.message_json(v)
    return _walk_to_json(v)


def _fill(msg: Any, draw: Any, depth: int) -> None:
    """Set a random subset of ``msg``'s fields (messages to ``depth`` levels)."""
    name = msg.DESCRIPTOR.full_name
    if name == "google.protobuf.Timestamp":
        msg.seconds = draw(st.integers(-62135596800, 253402300799))
        msg.nanos = draw(st.sampled_from([0, 1000, 999_999_000]))
        return
    if name == "google.protobuf.Struct":
        msg.update(draw(st.dictionaries(st.text(max_size=3), st.one_of(st.none(), st.booleans(), st.text(max_size=3)),
                                        max_size=2)))
        return
    for f in msg.DESCRIPTOR.fields:
        if not draw(st.booleans()) or (f.type == FD.TYPE_MESSAGE and depth == 0):
            continue
        if f.containing_oneof is not None and msg.WhichOneof(f.containing_oneof.name):
            continue
        if codec.is_map(f):
            getattr(msg, f.name).update(draw(st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2)))
            continue
        count = draw(st.integers(0, 2)) if f.is_repeated else 1
        for _ in range(count):
            if f.type == FD.TYPE_MESSAGE:
                sub = getattr(msg, f.name).add() if f.is_repeated else getattr(msg, f.name)
                _fill(sub, draw, depth - 1)
                if not f.is_repeated:
                    sub.SetInParent()
                continue
            if f.type == FD.TYPE_STRING:
                value: Any = draw(st.text(max_size=4))
            elif f.type == FD.TYPE_BOOL:
                value = draw(st.booleans())
            elif f.type == FD.TYPE_ENUM:
                value = draw(st.sampled_from([v.number for v in f.enum_type.values]))
            elif f.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
                value = draw(st.sampled_from([0.0, 1.5, -2.0]))
            elif f.type == FD.TYPE_BYTES:
                value = draw(st.binary(max_size=3))
            else:
                value = draw(st.integers(0, 1000))
            if f.is_repeated:
                getattr(msg, f.name).append(value)
            else:
                setattr(msg, f.name, value)


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=lambda v: v.hex() if isinstance(v, bytes) else repr(v))


def _response_types() -> list[Any]:
    return sorted({m.response_cls for m in methods()}, key=lambda c: c.DESCRIPTOR.full_name)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_every_response_renders_as_the_field_walk(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(_response_types()))
    msg = cls()
    _fill(msg, data.draw, 3)
    assert _dumps(codec.to_json(msg)) == _dumps(_walk_to_json(msg))  # the same keys in the same order


def test_a_batch_response_renders_as_the_field_walk() -> None:
    resp = customers_pb2.BatchUpsertCustomersResponse(object="batch")
    resp.summary.created = 1
    out = resp.data.add(index=0, status="created")
    out.customer.id, out.customer.source_id, out.customer.name = "cust_1", "s", ""
    out.customer.created_at.FromJsonString("2026-01-02T03:04:05.000123Z")
    resp.data.add(index=1, status="failed").errors.add(status="422", code="invalid").source.pointer = "/data/1"
    assert codec.to_json(resp) == _walk_to_json(resp)
    assert _dumps(codec.to_json(resp)) == _dumps(_walk_to_json(resp))
