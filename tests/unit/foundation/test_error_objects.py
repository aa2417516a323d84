"""One error object shape (spec 7.1, issue 16): the JSON of an ErrorItem (REST error bodies)
and of the levy.v1.ErrorObject built from it (gRPC ErrorBody, failed batch items) agree."""

from __future__ import annotations

import pytest

from levy.app.error_objects import error_object, item_json, message_json
from levy.domain.errors import ErrorItem
from levy.transport import codec
from levy.v1 import customers_pb2

ITEMS = [
    ErrorItem(422, "validation_required_field", "Missing source_id", "The field 'source_id' is required.",
              pointer="/data/0/source_id", type="missing"),
    ErrorItem(422, "validation_error", "Validation Error", "limit must be 1..1000", parameter="limit"),
    ErrorItem(409, "conflict", "Conflict", "exists", meta={"existing_customer_id": "cust_1", "count": 3,
                                                          "nested": {"n": [1, 2.5, "x"]}, "deleted": True}),
    ErrorItem(404, "not_found", "Not Found", "No such thing."),
    ErrorItem(422, "validation_error", "Validation Error", "body", pointer=""),
]


@pytest.mark.parametrize("item", ITEMS, ids=[i.code + (i.pointer or i.parameter or "") for i in ITEMS])
def test_item_and_message_render_alike(item: ErrorItem) -> None:
    expected = item_json(item)
    assert message_json(error_object(item)) == expected
    # The codec renders a failed batch item's errors with the same function.
    batch_item = customers_pb2.BatchResult(index=0, status="failed", errors=[error_object(item)])
    assert codec.to_json(batch_item)["errors"] == [expected]


def test_the_shape_is_the_specs() -> None:
    # status, code, title, detail, source (only when pointing somewhere), meta; nothing else.
    pointing, parameter, conflict, nowhere, _ = (item_json(i) for i in ITEMS)
    assert list(pointing) == ["status", "code", "title", "detail", "source", "meta"]
    assert pointing["source"] == {"pointer": "/data/0/source_id"} and pointing["meta"] is None
    assert parameter["source"] == {"pointer": None, "parameter": "limit"}
    assert conflict["meta"] == {"existing_customer_id": "cust_1", "count": 3, "nested": {"n": [1, 2.5, "x"]},
                                "deleted": True}
    assert list(nowhere) == ["status", "code", "title", "detail", "meta"]
