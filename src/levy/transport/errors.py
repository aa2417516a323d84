"""Domain errors mapped once, for each transport.

gRPC: ``google.rpc.Status`` with ``ErrorInfo`` (reason = the spec's error
code), ``BadRequest`` field violations (field = JSON pointer), ``RetryInfo``
on 429, and ``levy.v1.ErrorBody`` carrying the exact JSON:API error objects.

REST: the spec's JSON:API body ``{"errors": [...]}`` with the item's HTTP
status, or, for methods whose policy says so, the calculation endpoint's shape
(422 ``{"detail": [{type, loc, msg, input}]}``, 429 ``{"detail": "..."}``,
500 a plain string).
"""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf import any_pb2, duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2

import logging

from levy.app.error_objects import error_object, item_json
from levy.domain.errors import ErrorItem, InternalError, LevyError, RateLimited, Unavailable
from levy.store.db import is_unavailable, is_write_conflict
from levy.v1 import errors_pb2, options_pb2

ERROR_DOMAIN = "levy.dev"
log = logging.getLogger("levy.errors")


def from_unexpected(exc: BaseException, ctx: Any, where: str) -> LevyError:
    """The caller-visible error for an exception that is not a domain error.

    A database that is unreachable or unusable right now (refused or killed
    connection, restart, SQLite lock timeout), and a transaction still aborted as a
    deadlock victim after its retries, is 503 / UNAVAILABLE with
    ``Retry-After: 1``: the request changed nothing and may be retried. Anything
    else is a 500 whose internals stay in the log under the request id."""
    rid = ctx.request_id
    if is_write_conflict(exc):
        log.warning("write conflict in %s (request id %s) after retries: %s", where, rid, type(exc).__name__,
                    extra={"request_id": rid, "method": where})
        ctx.response_headers["retry-after"] = "1"
        return Unavailable(
            "The request kept conflicting with concurrent writes and was rolled back; it changed nothing. "
            f"Retry shortly. Request id: {rid}."
        )
    if is_unavailable(exc):
        log.warning("database unavailable in %s (request id %s): %s: %s", where, rid, type(exc).__name__,
                    str(exc).splitlines()[0] if str(exc) else "", extra={"request_id": rid, "method": where})
        ctx.response_headers["retry-after"] = "1"
        return Unavailable(
            "The database is unavailable; the request was not completed and changed nothing. "
            f"Retry shortly. Request id: {rid}."
        )
    log.error("unexpected error in %s (request id %s)", where, rid, exc_info=exc,
              extra={"request_id": rid, "method": where})
    return InternalError(f"An unexpected error occurred. Request id: {rid}.")


def _loc(item: ErrorItem) -> list[Any]:
    if item.parameter is not None:
        return ["query", item.parameter] if item.parameter[0].islower() else ["header", item.parameter]
    if item.pointer is None:
        return ["body"]
    parts: list[Any] = ["body"]
    for p in item.pointer.split("/")[1:]:
        p = p.replace("~1", "/").replace("~0", "~")
        parts.append(int(p) if p.isascii() and p.isdigit() else p)  # "²".isdigit() is True
    return parts


def http_body(err: LevyError, style: int) -> tuple[int, bytes, str]:
    """(status, body, content type) of an error for the JSON gateway."""
    status = err.status
    if style == options_pb2.ERROR_STYLE_CALCULATION and status in (422, 429, 500):
        if status == 422:
            detail = [
                {"type": it.type or "value_error", "loc": _loc(it), "msg": it.detail, "input": _jsonable(it.input)}
                for it in err.items
            ]
            return status, orjson.dumps({"detail": detail}), "application/json"
        if status == 429:
            return status, orjson.dumps({"detail": err.detail}), "application/json"
        return status, err.detail.encode("utf-8"), "text/plain; charset=utf-8"
    body = {"errors": [item_json(it) for it in err.items]}
    return status, orjson.dumps(body, default=str), "application/json"


def _jsonable(value: Any) -> Any:
    try:
        orjson.dumps(value)
        return value
    except TypeError:
        return str(value)


def to_rpc_status(err: LevyError) -> status_pb2.Status:
    first = err.first
    code = getattr(code_pb2, err.grpc_code)
    details = []
    info = error_details_pb2.ErrorInfo(reason=first.code, domain=ERROR_DOMAIN, metadata={"http_status": str(first.status)})
    details.append(info)
    violations = [
        error_details_pb2.BadRequest.FieldViolation(field=it.pointer or it.parameter or "", description=it.detail,
                                                    reason=it.type or "")
        for it in err.items
        if it.pointer is not None or it.parameter is not None
    ]
    if violations:
        details.append(error_details_pb2.BadRequest(field_violations=violations))
    if isinstance(err, RateLimited):
        details.append(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=err.retry_after)))
    details.append(errors_pb2.ErrorBody(errors=[error_object(it) for it in err.items]))
    packed = []
    for d in details:
        a = any_pb2.Any()
        a.Pack(d)
        packed.append(a)
    return status_pb2.Status(code=code, message=err.detail, details=packed)
