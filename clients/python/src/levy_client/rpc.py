"""gRPC helper (install the ``grpc`` extra: ``pip install 'levy-client[grpc]'``).

``channel()`` gives a channel that sends the API key and the pinned
``service-version`` as metadata on every call, adds an ``idempotency-key`` to the
writes that honour one, and retries UNAVAILABLE and RESOURCE_EXHAUSTED (429) with
gRPC's own retry policy, declared in the service config (it honours the server's
pushback, Levy's Retry-After). The stubs are in
``levy_client.grpc_stubs``::

    from levy_client.rpc import channel
    from levy_client.grpc_stubs import reference_pb2, reference_pb2_grpc

    with channel("127.0.0.1:50051", api_key) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        page = stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=3))

The server-streaming ``EventService.WatchEvents`` (admin keys) goes through it too::

    from levy_client.grpc_stubs import events_pb2, events_pb2_grpc

    with channel("127.0.0.1:50051", admin_key) as ch:
        for event in events_pb2_grpc.EventServiceStub(ch).WatchEvents(
                events_pb2.WatchEventsRequest(starting_after=last_id)):
            last_id = event.id

An error answer of a blocking call (``stub.Method(request)``, ``.with_call``) is
raised as the ``ApiError`` subclass a REST caller would get (``NotFoundError``,
``ValidationError``, ...), with the same ``status`` and ``errors``; it is also a
``grpc.RpcError`` with ``code()``, ``details()`` and ``trailing_metadata()``, so
``except grpc.RpcError`` still catches it. An error without Levy's details (no
connection, a deadline) stays gRPC's own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, cast

import grpc
from google.protobuf import json_format
from google.rpc import error_details_pb2, status_pb2

from levy_client._core import SERVICE_VERSION, RetryPolicy
from levy_client.errors import ERROR_CLASSES, ApiError
from levy_client.grpc_stubs import errors_pb2

SERVICES = ("CalculationService", "TransactionService", "CustomerService", "ProductService",
            "ReferenceService", "OrganizationService", "FilingService")

#: The RPCs that honour ``idempotency-key`` (docs/api.md, "Idempotent requests").
IDEMPOTENT_METHODS = frozenset({
    "/levy.v1.TransactionService/CreateTransaction",
    "/levy.v1.TransactionService/UpdateTransaction",
    "/levy.v1.CustomerService/CreateCustomer",
    "/levy.v1.CustomerService/BatchUpsertCustomers",
})


def service_config(retry: RetryPolicy | None = None) -> str:
    """The channel's service config: a retry policy for every Levy service.

    gRPC retries with jittered exponential backoff (``retry.max_backoff`` bounds
    the wait), or after a rate limit waits the server's ``grpc-retry-pushback-ms``
    trailer (Retry-After in milliseconds). gRPC allows at most 5 attempts.
    """
    retry = retry or RetryPolicy()
    policy = {
        "maxAttempts": max(2, min(retry.max_attempts, 5)),
        "initialBackoff": f"{retry.base_backoff}s",
        "maxBackoff": f"{retry.max_backoff}s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"],
    }
    names = [{"service": f"levy.v1.{s}"} for s in SERVICES]
    return json.dumps({"methodConfig": [{"name": names, "retryPolicy": policy}]})


class ErrorCode(str):
    """The spec's error code (``"not_found"``, a ``str`` as ``ApiError.code`` is) that,
    called, gives the gRPC status code (``grpc.StatusCode.NOT_FOUND``, as
    ``grpc.RpcError.code()`` does): both ways of reading an error keep working."""

    status_code: grpc.StatusCode

    def __call__(self) -> grpc.StatusCode:
        return self.status_code


class RpcFailure(grpc.RpcError):
    """What makes an ``ApiError`` a gRPC error too (it comes first in the classes'
    bases): the call's status code, message and metadata, and the finished-call
    (future) methods gRPC's interceptor chain asks."""

    rpc_error: grpc.RpcError

    @property
    def code(self) -> ErrorCode:
        code = ErrorCode(ApiError.code.fget(self) or "")  # type: ignore[attr-defined]
        code.status_code = self.rpc_error.code()
        return code

    def details(self) -> str | None:
        return self.rpc_error.details()

    def trailing_metadata(self) -> Any:
        return _call(self.rpc_error).trailing_metadata()

    def initial_metadata(self) -> Any:
        return _call(self.rpc_error).initial_metadata()

    def result(self, timeout: float | None = None) -> Any:
        raise self

    def exception(self, timeout: float | None = None) -> BaseException:
        return self

    def traceback(self, timeout: float | None = None) -> Any:
        return self.__traceback__

    def done(self) -> bool:
        return True

    def running(self) -> bool:
        return False

    def cancelled(self) -> bool:
        return False

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        fn(self)


class RpcApiError(RpcFailure, ApiError):
    """An ``ApiError`` that arrived over gRPC (the status code family has no class of its own)."""


def _rpc_class(family: type[ApiError]) -> type[ApiError]:
    return type(f"Rpc{family.__name__}", (RpcFailure, family), {"__doc__": f"{family.__name__}, over gRPC."})


#: The class raised for each HTTP status a gRPC error maps to: each a subclass of the
#: REST class (``RpcNotFoundError`` of ``NotFoundError``) and of ``grpc.RpcError``.
RPC_ERROR_CLASSES: dict[int, type[ApiError]] = {status: _rpc_class(c) for status, c in ERROR_CLASSES.items()}


def api_error_of(error: grpc.RpcError) -> ApiError | None:
    """The ``ApiError`` subclass carrying a Levy gRPC error's objects, or None when the
    error has no Levy details (``grpc-status-details-bin`` with ``levy.v1.ErrorBody``).

    ``status`` is ErrorInfo's ``http_status`` (what a REST caller gets), ``errors`` the
    ``ErrorBody`` objects as the REST body has them, ``headers`` the text trailers
    (``retry-after``, ``x-request-id``), ``body`` the decoded ``google.rpc.Status``."""
    trailers = list(_call(error).trailing_metadata() or ()) if hasattr(error, "trailing_metadata") else []
    raw = next((v for k, v in trailers if k == "grpc-status-details-bin" and isinstance(v, bytes)), None)
    if raw is None:
        return None
    status = status_pb2.Status.FromString(raw)
    http_status, errors = None, None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):  # False, and nothing unpacked, for another type
            http_status = int(info.metadata.get("http_status", "0")) or None
        elif detail.Is(errors_pb2.ErrorBody.DESCRIPTOR):
            body = errors_pb2.ErrorBody()
            detail.Unpack(body)
            errors = [_error_object(e) for e in body.errors]
    if http_status is None or errors is None:
        return None
    headers = {k: v for k, v in trailers if isinstance(v, str)}
    result = RPC_ERROR_CLASSES.get(http_status, RpcApiError)(http_status, errors, status, headers)
    result.rpc_error = error  # type: ignore[attr-defined]
    return result


def _call(error: grpc.RpcError) -> grpc.Call:
    """The call a gRPC error is: gRPC raises errors that are ``grpc.Call`` too, with its metadata as
    (key, value) pairs (``grpc.RpcError`` alone types them otherwise)."""
    return cast(grpc.Call, error)


def _error_object(message: Any) -> Any:
    """One ``levy.v1.ErrorObject`` as the REST body's dict (whole numbers in ``meta``
    as ints, as JSON has them: ``Struct`` keeps every number as a double)."""
    obj = json_format.MessageToDict(message, preserving_proto_field_name=True)
    if isinstance(obj.get("meta"), dict):
        obj["meta"] = {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in obj["meta"].items()}
    obj.setdefault("meta", None)
    if "source" in obj:
        obj["source"].setdefault("pointer", None)  # REST's {"pointer": null, "parameter": ...}
    return obj


class _Metadata(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._metadata = list(metadata)

    def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        """A server-streaming call (``EventService.WatchEvents``): the key and version too."""
        sent = list(details.metadata or [])
        names = {k for k, _ in sent}
        return continuation(_with_metadata(details, sent + [(k, v) for k, v in self._metadata if k not in names]),
                            request)

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        sent = list(details.metadata or [])
        names = {k for k, _ in sent}
        extra = [(k, v) for k, v in self._metadata if k not in names]
        if details.method in IDEMPOTENT_METHODS and "idempotency-key" not in names:
            # One key per call: gRPC's retries of this call resend it, so the server replays.
            extra.append(("idempotency-key", str(uuid.uuid4())))
        outcome = continuation(_with_metadata(details, sent + extra), request)
        # A blocking call's failure is already done; a .future() still running is left as gRPC's.
        if isinstance(outcome, grpc.RpcError) and isinstance(outcome, grpc.Future) and outcome.done():
            return api_error_of(outcome) or outcome
        return outcome


def _with_metadata(details: Any, metadata: list[tuple[str, str]]) -> Any:
    class Details(grpc.ClientCallDetails):
        method = details.method
        timeout = details.timeout
        credentials = details.credentials
        wait_for_ready = getattr(details, "wait_for_ready", None)
        compression = getattr(details, "compression", None)

    result = Details()
    result.metadata = tuple(metadata)
    return result


def channel(target: str, api_key: str, *, service_version: str | None = SERVICE_VERSION,
            credentials: grpc.ChannelCredentials | None = None, retry: RetryPolicy | None = None,
            options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A channel to ``target`` (``host:port``) carrying ``api_key``. Plaintext unless
    ``credentials`` (for example ``grpc.ssl_channel_credentials()``) are given.
    ``retry=NO_RETRIES`` (one attempt) turns gRPC's retries off; an option given in
    ``options`` replaces the helper's own of that name."""
    retries = 0 if retry is not None and retry.max_attempts <= 1 else 1
    given = {name for name, _ in options}
    defaults = [("grpc.enable_retries", retries), ("grpc.service_config", service_config(retry))]
    opts = [(k, v) for k, v in defaults if k not in given] + list(options)
    raw = (grpc.secure_channel(target, credentials, options=opts) if credentials
           else grpc.insecure_channel(target, options=opts))
    metadata = [("x-api-key", api_key)]
    if service_version:
        metadata.append(("service-version", service_version))
    return grpc.intercept_channel(raw, _Metadata(metadata))
