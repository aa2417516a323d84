"""The REST clients: ``LevyClient`` (sync) and ``AsyncLevyClient`` (asyncio).

Both have a method for every operation of docs/openapi.json, generated into
``levy_client._generated`` (``SyncOperations``, ``AsyncOperations``) by
clients/python/scripts/gen-client, and send them with the same rules
(``levy_client._core``): API key and pinned ``Service-Version`` on every request,
an ``Idempotency-Key`` on the writes that accept one, bounded retries on 429, 5xx
and connection failures honouring ``Retry-After``, and ``ApiError`` for an error
answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

import httpx

from levy_client import models as m
from levy_client._core import (
    SERVICE_VERSION,
    Attempts,
    Call,
    RetryPolicy,
    default_headers,
    idempotent_write,
)
from levy_client._generated import AsyncOperations, SyncOperations

T = TypeVar("T")
USER_AGENT = "levy-client-python/0.1.0"


# The two operations whose hand-kept signatures differ from the generated ones
# (kept so code written against them keeps working).
def _calculation(request: m.CalculationRequest, include_unregistered: bool) -> Call[m.Calculation]:
    # A calculation stores nothing: repeatable, unlike a POST that writes.
    headers = {"X-Include-Unregistered": "true"} if include_unregistered else {}
    return Call("POST", "/calculations", json=request, headers=headers)


def _batch_upsert(customers: list[m.CustomerInput], idempotency_key: str | None) -> Call[m.BatchResponse]:
    return idempotent_write("POST", "/customers/batch", {"data": customers}, idempotency_key)



class LevyClient(SyncOperations):
    """Sync client. ``LevyClient("http://127.0.0.1:8080", api_key)``; close it or use ``with``."""

    def __init__(self, base_url: str, api_key: str, *, service_version: str | None = SERVICE_VERSION,
                 retry: RetryPolicy | None = None, timeout: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(base_url=base_url, timeout=timeout, transport=transport,
                                  headers=default_headers(api_key, service_version, USER_AGENT))

    def __enter__(self) -> LevyClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def send(self, call: Call[T]) -> T:
        """Sends one operation, retrying as ``self.retry`` allows."""
        attempts = Attempts(self.retry, call)
        while True:
            result: httpx.Response | httpx.TransportError
            try:
                result = self._http.request(call.method, call.path, params=call.params, json=call.json,
                                            headers=call.headers)
            except httpx.TransportError as exc:
                result = exc
            delay = attempts.wait_after(result)
            if delay is None:
                return attempts.outcome(result)
            time.sleep(delay)

    def _items(self, page: Callable[[str | None], Call[m.Page[T]]], cursor: str) -> Iterator[T]:
        """Every item of a list, page after page; ``cursor`` names the field of the last
        item that ``starting_after`` takes (``id``, or ``code`` for the reference lists)."""
        after: str | None = None
        while True:
            result = self.send(page(after))
            yield from result["data"]
            if not result["has_more"] or not result["data"]:
                return
            last: Any = result["data"][-1]
            after = str(last[cursor])

    # Hand-kept signatures (the generated ones take the OpenAPI body and header as they are).
    def create_calculation(self, request: m.CalculationRequest | None = None, *,  # type: ignore[override]
                           include_unregistered: bool = False) -> m.Calculation:
        """Calculates tax; ``include_unregistered`` also taxes where the seller is not registered."""
        return self.send(_calculation(request or {}, include_unregistered))

    def batch_upsert_customers(self, customers: list[m.CustomerInput], *,  # type: ignore[override]
                               idempotency_key: str | None = None) -> m.BatchResponse:
        """Creates or updates many customers at once (``{"data": customers}``)."""
        return self.send(_batch_upsert(customers, idempotency_key))


class AsyncLevyClient(AsyncOperations):
    """Asyncio client with the same methods as ``LevyClient``, awaited; the
    ``iter_*`` methods are async iterators."""

    def __init__(self, base_url: str, api_key: str, *, service_version: str | None = SERVICE_VERSION,
                 retry: RetryPolicy | None = None, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout, transport=transport,
                                       headers=default_headers(api_key, service_version, USER_AGENT))

    async def __aenter__(self) -> AsyncLevyClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call[T]) -> T:
        """Sends one operation, retrying as ``self.retry`` allows."""
        attempts = Attempts(self.retry, call)
        while True:
            result: httpx.Response | httpx.TransportError
            try:
                result = await self._http.request(call.method, call.path, params=call.params, json=call.json,
                                                  headers=call.headers)
            except httpx.TransportError as exc:
                result = exc
            delay = attempts.wait_after(result)
            if delay is None:
                return attempts.outcome(result)
            await asyncio.sleep(delay)

    async def _items(self, page: Callable[[str | None], Call[m.Page[T]]],
                     cursor: str) -> AsyncIterator[T]:
        after: str | None = None
        while True:
            result = await self.send(page(after))
            for item in result["data"]:
                yield item
            if not result["has_more"] or not result["data"]:
                return
            last: Any = result["data"][-1]
            after = str(last[cursor])

    # Hand-kept signatures (the generated ones take the OpenAPI body and header as they are).
    async def create_calculation(self, request: m.CalculationRequest | None = None, *,  # type: ignore[override]
                           include_unregistered: bool = False) -> m.Calculation:
        """Calculates tax; ``include_unregistered`` also taxes where the seller is not registered."""
        return await self.send(_calculation(request or {}, include_unregistered))

    async def batch_upsert_customers(self, customers: list[m.CustomerInput], *,  # type: ignore[override]
                               idempotency_key: str | None = None) -> m.BatchResponse:
        """Creates or updates many customers at once (``{"data": customers}``)."""
        return await self.send(_batch_upsert(customers, idempotency_key))
