"""The per-process safeguards of the pipeline: rate limits (per API key and
per client address for failed authentication), the cap on concurrent requests
and the per-request timeout. Errors raised here are the domain's, refined."""

from __future__ import annotations

from levy.domain.errors import Unavailable


class Overloaded(Unavailable):
    """503 / RESOURCE_EXHAUSTED: the process is at LEVY_MAX_CONCURRENT_REQUESTS."""

    code = "service_overloaded"
    title = "Service Overloaded"
    grpc_code = "RESOURCE_EXHAUSTED"
    type = "service_overloaded"


class DeadlineExceeded(Unavailable):
    """503 / DEADLINE_EXCEEDED: the handler ran past its time (LEVY_REQUEST_TIMEOUT_SECONDS or the gRPC
    caller's deadline) and was cancelled; its database transaction was rolled back."""

    code = "deadline_exceeded"
    title = "Deadline Exceeded"
    grpc_code = "DEADLINE_EXCEEDED"
    type = "deadline_exceeded"
