"""The JSON codec on real contract messages, without a server."""

from levy.transport import codec
from levy.v1 import customers_pb2, products_pb2


def parse(cls, data):  # type: ignore[no-untyped-def]
    msg = cls()
    result = codec.ParseResult()
    codec.parse_into(msg, data, "", result, top=True)
    return msg, result


def test_null_is_unset_but_present() -> None:
    msg, result = parse(products_pb2.Product, {"description": None, "name": "n"})
    assert not msg.HasField("description") and msg.name == "n"
    assert result.present == ["description", "name"] and not result.errors


def test_types_are_not_coerced() -> None:
    _, result = parse(customers_pb2.Customer, {"name": 5, "source_updated_at": "yesterday", "email": True})
    pointers = sorted(e.first.pointer for e in result.errors)
    assert pointers == ["/email", "/name", "/source_updated_at"]


def test_per_item_errors_stay_with_their_item() -> None:
    msg, result = parse(customers_pb2.BatchUpsertCustomersRequest,
                        {"data": [{"source_id": "a"}, {"source_id": 1, "bogus": 2}, {"source_id": "c"}]})
    assert not result.errors
    assert len(msg.data) == 3 and msg.data[2].source_id == "c"
    assert sorted(i.pointer for i in result.item_errors[1]) == ["/data/1/bogus", "/data/1/source_id"]


def test_rendering_nulls_and_timestamps() -> None:
    c = customers_pb2.Customer(id="cust_1", source_id="s")
    c.created_at.FromJsonString("2026-01-02T03:04:05Z")
    out = codec.to_json(c)
    assert out["name"] is None and out["email"] is None and out["exemption"] is None
    assert out["created_at"] == "2026-01-02T03:04:05Z" and out["source_id"] == "s"
    r = customers_pb2.BatchResult(index=0, status="created")
    assert codec.to_json(r)["errors"] is None and codec.to_json(r)["customer"] is None


def test_dates_are_accepted_as_midnight_utc() -> None:
    msg, result = parse(customers_pb2.Customer, {"source_updated_at": "2026-03-01"})
    assert not result.errors and msg.source_updated_at.ToJsonString() == "2026-03-01T00:00:00Z"
