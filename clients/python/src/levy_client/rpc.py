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
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from levy_client._core import SERVICE_VERSION, RetryPolicy

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


class _Metadata(grpc.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._metadata = list(metadata)

    def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        sent = list(details.metadata or [])
        names = {k for k, _ in sent}
        extra = [(k, v) for k, v in self._metadata if k not in names]
        if details.method in IDEMPOTENT_METHODS and "idempotency-key" not in names:
            # One key per call: gRPC's retries of this call resend it, so the server replays.
            extra.append(("idempotency-key", str(uuid.uuid4())))
        return continuation(_with_metadata(details, sent + extra), request)


def _with_metadata(details: Any, metadata: list[tuple[str, str]]) -> Any:
    class Details(grpc.ClientCallDetails):  # type: ignore[misc]
        method = details.method
        timeout = details.timeout
        credentials = details.credentials
        wait_for_ready = getattr(details, "wait_for_ready", None)
        compression = getattr(details, "compression", None)

    result = Details()
    result.metadata = metadata
    return result


def channel(target: str, api_key: str, *, service_version: str | None = SERVICE_VERSION,
            credentials: grpc.ChannelCredentials | None = None, retry: RetryPolicy | None = None,
            options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A channel to ``target`` (``host:port``) carrying ``api_key``. Plaintext unless
    ``credentials`` (for example ``grpc.ssl_channel_credentials()``) are given."""
    opts = [("grpc.enable_retries", 1), ("grpc.service_config", service_config(retry)), *options]
    raw = (grpc.secure_channel(target, credentials, options=opts) if credentials
           else grpc.insecure_channel(target, options=opts))
    metadata = [("x-api-key", api_key)]
    if service_version:
        metadata.append(("service-version", service_version))
    return grpc.intercept_channel(raw, _Metadata(metadata))
