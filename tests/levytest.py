"""Helpers for tests that talk to a real server over gRPC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from levy.v1 import errors_pb2


@dataclass
class GrpcError:
    code: grpc.StatusCode
    message: str
    reason: str | None
    violations: list[tuple[str, str]]
    errors: list[dict[str, Any]]  # the JSON:API error objects carried in levy.v1.ErrorBody
    retry_after: int | None
    trailers: dict[str, str]
    violation_reasons: list[str]  # BadRequest field violations' reason (the calculation shape's type), in order


def grpc_error(e: grpc.RpcError) -> GrpcError:
    status = rpc_status.from_call(e)  # type: ignore[arg-type]
    reason = None
    violations: list[tuple[str, str]] = []
    reasons: list[str] = []
    errors: list[dict[str, Any]] = []
    retry = None
    for d in status.details if status else []:
        if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            m = error_details_pb2.ErrorInfo()
            d.Unpack(m)
            reason = m.reason
        elif d.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            m2 = error_details_pb2.BadRequest()
            d.Unpack(m2)
            violations = [(v.field, v.description) for v in m2.field_violations]
            reasons = [v.reason for v in m2.field_violations]
        elif d.Is(errors_pb2.ErrorBody.DESCRIPTOR):
            m3 = errors_pb2.ErrorBody()
            d.Unpack(m3)
            errors = [json_format.MessageToDict(x, preserving_proto_field_name=True) for x in m3.errors]
        elif d.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            m4 = error_details_pb2.RetryInfo()
            d.Unpack(m4)
            retry = m4.retry_delay.seconds
    trailers = {k: v for k, v in (e.trailing_metadata() or ()) if isinstance(v, str)}  # type: ignore[attr-defined]
    return GrpcError(e.code(), e.details(), reason, violations, errors, retry, trailers,  # type: ignore[attr-defined]
                     reasons)


def call_error(fn: Any, request: Any, metadata: list[tuple[str, str]] | None = None) -> GrpcError:
    """Call a unary stub method that must fail; return its decoded error."""
    try:
        fn(request, metadata=metadata or [])
    except grpc.RpcError as e:
        return grpc_error(e)
    raise AssertionError("the call succeeded; an error was expected")


def md(key: str, **extra: str) -> list[tuple[str, str]]:
    return [("x-api-key", key), *((k.replace("_", "-"), v) for k, v in extra.items())]
