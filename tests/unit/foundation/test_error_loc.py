"""The calculation error shape's ``loc``: array indexes become integers, any
other pointer segment stays a string, even one Python calls a digit ("²")."""

from __future__ import annotations

import orjson

from levy.domain.errors import ValidationFailed
from levy.transport.errors import http_body


def _locs(err: ValidationFailed) -> list[list[object]]:
    from levy.v1 import options_pb2

    status, body, _ = http_body(err, options_pb2.ERROR_STYLE_CALCULATION)
    assert status == 422
    return [d["loc"] for d in orjson.loads(body)["detail"]]


def test_index_segments_are_integers_and_unicode_digits_stay_strings() -> None:
    err = ValidationFailed.many([
        ValidationFailed("Unknown property.", pointer="/line_items/0/product/\u00b2"),
        ValidationFailed("Bad.", pointer="/line_items/12/id"),
    ])
    assert _locs(err) == [["body", "line_items", 0, "product", "\u00b2"], ["body", "line_items", 12, "id"]]
