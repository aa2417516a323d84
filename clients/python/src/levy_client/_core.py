"""What the sync and async clients share: the requests, the retry rules and the
decoding of responses. No I/O here."""

from __future__ import annotations

import email.utils
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from levy_client.errors import api_error, errors_from_body

T = TypeVar("T")

#: The version this package was written against (spec section 9). Pinned on every
#: request so a later breaking release on the server does not change the answers.
SERVICE_VERSION = "hydrogen.2025-04-15"

#: 429 (rate limited) and the 5xx a later attempt can cure. 501 (not implemented)
#: is permanent and is not retried.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries on 429, 5xx and connection failures (spec section 7).

    The wait before attempt ``n + 1`` is the response's ``Retry-After`` when it
    has one, else a random time in ``[0, min(max_backoff, base_backoff * 2**n))``
    ("full jitter", so many clients retrying at once do not retry in step). A
    ``Retry-After`` longer than ``max_retry_after`` is not waited for: the error
    is raised instead.
    """

    max_attempts: int = 5
    base_backoff: float = 0.25
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_backoff, self.base_backoff * 2**attempt))


NO_RETRIES = RetryPolicy(max_attempts=1)


@dataclass
class Call(Generic[T]):
    """One API operation: what to send, and whether sending it twice is harmless.

    ``repeatable`` is true for reads, deletes, PATCHes (they set values),
    calculations (they store nothing) and writes sent with an ``Idempotency-Key``.
    Only those are retried after a failure that may have reached the server (a
    5xx, a connection lost mid-request); a 429, or a connection never made, is
    retried for every call since nothing was done.
    """

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    repeatable: bool = True
    empty: bool = False  # 204: no body
    text: bool = False  # a file (CSV): the body as text, not JSON


def idempotent_write(method: str, path: str, body: Any, key: str | None) -> Call[Any]:
    """A write the server deduplicates by ``Idempotency-Key`` (docs/api.md): one key
    per logical request, kept across its retries, so a retry replays the first
    answer instead of writing twice."""
    return Call(method, path, json=body, headers={"Idempotency-Key": key or str(uuid.uuid4())})


def query(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class Attempts(Generic[T]):
    """The retry loop of one call, without the I/O: after each attempt (a response or
    a transport error) ``wait_after`` says how long to wait before the next, or None
    when there is none; ``outcome`` then gives the decoded body or raises."""

    def __init__(self, policy: RetryPolicy, call: Call[T]) -> None:
        self.policy, self.call, self.made = policy, call, 0

    def wait_after(self, result: httpx.Response | httpx.TransportError) -> float | None:
        self.made += 1
        if self.made >= self.policy.max_attempts:
            return None
        if isinstance(result, httpx.TransportError):
            if isinstance(result, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
                return self.policy.backoff(self.made - 1)  # never reached the server
            return self.policy.backoff(self.made - 1) if self.call.repeatable else None
        if result.status_code not in RETRY_STATUSES:
            return None
        if result.status_code != 429 and not self.call.repeatable:
            return None
        after = parse_retry_after(result.headers.get("retry-after"))
        if after is None:
            return self.policy.backoff(self.made - 1)
        return after if after <= self.policy.max_retry_after else None

    def outcome(self, result: httpx.Response | httpx.TransportError) -> T:
        if isinstance(result, httpx.TransportError):
            raise result
        return decode(self.call, result)


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds: delay-seconds or an HTTP-date (RFC 9110 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def decode(call: Call[T], response: httpx.Response) -> T:
    """The body of a success, or the ApiError (subclass) of its status carrying the error objects."""
    if response.is_success:
        if call.text:
            return response.text  # type: ignore[return-value]
        return None if call.empty or response.status_code == 204 else response.json()  # type: ignore[return-value]
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    raise api_error(response.status_code, errors_from_body(response.status_code, body), body, dict(response.headers))


def default_headers(api_key: str, service_version: str | None, user_agent: str) -> dict[str, str]:
    headers = {"X-API-Key": api_key, "User-Agent": user_agent, "Accept": "application/json"}
    if service_version:
        headers["Service-Version"] = service_version
    return headers
