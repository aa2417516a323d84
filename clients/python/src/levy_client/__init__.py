"""Levy client: REST (sync and async, on httpx) and a gRPC helper (``levy_client.rpc``,
with the ``grpc`` extra)."""

from levy_client._core import NO_RETRIES, SERVICE_VERSION, Call, RetryPolicy
from levy_client.client import AsyncLevyClient, LevyClient
from levy_client.errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    LevyError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ValidationError,
)

__all__ = ["NO_RETRIES", "SERVICE_VERSION", "ApiError", "AsyncLevyClient", "AuthenticationError", "Call",
           "ConflictError", "LevyClient", "LevyError", "NotFoundError", "PermissionDeniedError", "RateLimitError",
           "RetryPolicy", "ValidationError"]
