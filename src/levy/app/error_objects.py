"""The spec's error object (section 7.1), one shape wherever an error is shown.

``{status, code, title, detail, source?, meta}``: ``source`` only when the error
points somewhere, as ``{"pointer": <JSON pointer or null>}`` plus ``"parameter"``
for a query parameter or header; ``meta`` an object or null. The same object in a
REST error body (:func:`item_json`), in a gRPC ``levy.v1.ErrorBody`` and in a
failed batch item (:func:`error_object`, the one builder of the message), and in
the JSON of a failed batch item (:func:`message_json`, which the codec uses for
every ``levy.v1.ErrorObject``). A unit test checks that the two JSON forms agree.
"""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf import json_format, struct_pb2

from levy.domain.errors import ErrorItem
from levy.v1 import errors_pb2


def item_json(item: ErrorItem) -> dict[str, Any]:
    out: dict[str, Any] = {"status": str(item.status), "code": item.code, "title": item.title, "detail": item.detail}
    if item.pointer is not None or item.parameter is not None:
        out["source"] = _source(item.pointer, item.parameter)
    out["meta"] = item.meta
    return out


def error_object(item: ErrorItem) -> errors_pb2.ErrorObject:
    out = errors_pb2.ErrorObject(status=str(item.status), code=item.code, title=item.title, detail=item.detail)
    if item.pointer is not None:
        out.source.pointer = item.pointer
    if item.parameter is not None:
        out.source.parameter = item.parameter
    if item.meta is not None:
        meta = struct_pb2.Struct()
        meta.update(orjson.loads(orjson.dumps(item.meta, default=str)))
        out.meta.CopyFrom(meta)
    return out


def message_json(m: errors_pb2.ErrorObject) -> dict[str, Any]:
    out: dict[str, Any] = {"status": m.status, "code": m.code, "title": m.title, "detail": m.detail}
    if m.HasField("source"):
        s = m.source
        out["source"] = _source(s.pointer if s.HasField("pointer") else None,
                                s.parameter if s.HasField("parameter") else None)
    out["meta"] = _integral(json_format.MessageToDict(m.meta)) if m.HasField("meta") else None
    return out


def _source(pointer: str | None, parameter: str | None) -> dict[str, Any]:
    src: dict[str, Any] = {"pointer": pointer}
    if parameter is not None:
        src["parameter"] = parameter
    return src


def _integral(value: Any) -> Any:
    """A Struct holds every number as a double: whole ones back to integers, as ``meta`` was built."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value
