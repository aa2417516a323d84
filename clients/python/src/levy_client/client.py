"""The REST clients: ``LevyClient`` (sync) and ``AsyncLevyClient`` (asyncio).

Both send the same operations (``levy_client._ops``) with the same rules
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

from levy_client import _ops as ops
from levy_client import models as m
from levy_client._core import SERVICE_VERSION, Attempts, Call, RetryPolicy, default_headers

T = TypeVar("T")
USER_AGENT = "levy-client-python/0.1.0"


class LevyClient:
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

    def _items(self, page: Callable[[str | None], Call[m.Page[T]]]) -> Iterator[T]:
        cursor: str | None = None
        while True:
            result = self.send(page(cursor))
            yield from result["data"]
            if not result["has_more"] or not result["data"]:
                return
            cursor = ops.cursor_of(result["data"][-1])

    # calculations
    def create_calculation(self, request: m.CalculationRequest, *,
                           include_unregistered: bool = False) -> m.Calculation:
        return self.send(ops.create_calculation(request, include_unregistered))

    # transactions
    def create_transaction(self, transaction: m.TransactionInput, *,
                           idempotency_key: str | None = None) -> m.Transaction:
        return self.send(ops.create_transaction(transaction, idempotency_key))

    def update_transaction(self, transaction_id: str, changes: m.TransactionInput, *,
                           idempotency_key: str | None = None) -> m.Transaction:
        return self.send(ops.update_transaction(transaction_id, changes, idempotency_key))

    def get_transaction(self, transaction_id: str) -> m.Transaction:
        return self.send(ops.get_transaction(transaction_id))

    def list_transactions(self, *, limit: int | None = None, starting_after: str | None = None,
                          **filters: Any) -> m.Page[m.Transaction]:
        return self.send(ops.list_transactions(limit, starting_after, filters))  # type: ignore[arg-type]

    def iter_transactions(self, *, page_size: int = 100, **filters: Any) -> Iterator[m.Transaction]:
        return self._items(lambda after: ops.list_transactions(page_size, after, filters))  # type: ignore[arg-type]

    # customers
    def create_customer(self, customer: m.CustomerInput, *, idempotency_key: str | None = None) -> m.Customer:
        return self.send(ops.create_customer(customer, idempotency_key))

    def get_customer(self, customer_id: str) -> m.Customer:
        return self.send(ops.get_customer(customer_id))

    def update_customer(self, customer_id: str, changes: m.CustomerInput) -> m.Customer:
        return self.send(ops.update_customer(customer_id, changes))

    def delete_customer(self, customer_id: str) -> None:
        self.send(ops.delete_customer(customer_id))

    def list_customers(self, *, limit: int | None = None, starting_after: str | None = None) -> m.Page[m.Customer]:
        return self.send(ops.list_customers(limit, starting_after))

    def iter_customers(self, *, page_size: int = 100) -> Iterator[m.Customer]:
        return self._items(lambda after: ops.list_customers(page_size, after))

    def batch_upsert_customers(self, customers: list[m.CustomerInput], *,
                               idempotency_key: str | None = None) -> m.BatchResponse:
        return self.send(ops.batch_upsert_customers(customers, idempotency_key))

    # products
    def create_product(self, product: m.ProductInput) -> m.Product:
        return self.send(ops.create_product(product))

    def update_product(self, product_id: str, changes: m.ProductInput) -> m.Product:
        return self.send(ops.update_product(product_id, changes))

    def get_product(self, product_id: str) -> m.Product:
        return self.send(ops.get_product(product_id))

    def delete_product(self, product_id: str) -> None:
        self.send(ops.delete_product(product_id))

    def list_products(self, *, limit: int | None = None, starting_after: str | None = None) -> m.Page[m.Product]:
        return self.send(ops.list_products(limit, starting_after))

    def iter_products(self, *, page_size: int = 100) -> Iterator[m.Product]:
        return self._items(lambda after: ops.list_products(page_size, after))

    # reference data
    def list_product_tax_codes(self, *, limit: int | None = None,
                               starting_after: str | None = None) -> m.Page[m.ProductTaxCode]:
        return self.send(ops.list_product_tax_codes(limit, starting_after))

    def iter_product_tax_codes(self, *, page_size: int = 1000) -> Iterator[m.ProductTaxCode]:
        return self._items(lambda after: ops.list_product_tax_codes(page_size, after))

    def list_product_attributes(self, *, ptc: str | None = None, limit: int | None = None,
                                starting_after: str | None = None) -> m.Page[m.ProductAttribute]:
        return self.send(ops.list_product_attributes(limit, starting_after, ptc))

    def iter_product_attributes(self, *, ptc: str | None = None, page_size: int = 1000) -> Iterator[m.ProductAttribute]:
        return self._items(lambda after: ops.list_product_attributes(page_size, after, ptc))

    # organization (Levy's extensions)
    def get_organization_settings(self) -> m.OrganizationSettings:
        return self.send(ops.get_organization_settings())

    def update_organization_settings(self, changes: m.OrganizationSettingsInput) -> m.OrganizationSettings:
        return self.send(ops.update_organization_settings(changes))

    def create_registration(self, registration: m.RegistrationInput) -> m.Registration:
        return self.send(ops.create_registration(registration))

    def delete_registration(self, registration_id: str) -> None:
        self.send(ops.delete_registration(registration_id))

    def iter_registrations(self, *, page_size: int = 100) -> Iterator[m.Registration]:
        return self._items(lambda after: ops.list_registrations(page_size, after))


class AsyncLevyClient:
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

    async def _items(self, page: Callable[[str | None], Call[m.Page[T]]]) -> AsyncIterator[T]:
        cursor: str | None = None
        while True:
            result = await self.send(page(cursor))
            for item in result["data"]:
                yield item
            if not result["has_more"] or not result["data"]:
                return
            cursor = ops.cursor_of(result["data"][-1])

    # calculations
    async def create_calculation(self, request: m.CalculationRequest, *,
                                 include_unregistered: bool = False) -> m.Calculation:
        return await self.send(ops.create_calculation(request, include_unregistered))

    # transactions
    async def create_transaction(self, transaction: m.TransactionInput, *,
                                 idempotency_key: str | None = None) -> m.Transaction:
        return await self.send(ops.create_transaction(transaction, idempotency_key))

    async def update_transaction(self, transaction_id: str, changes: m.TransactionInput, *,
                                 idempotency_key: str | None = None) -> m.Transaction:
        return await self.send(ops.update_transaction(transaction_id, changes, idempotency_key))

    async def get_transaction(self, transaction_id: str) -> m.Transaction:
        return await self.send(ops.get_transaction(transaction_id))

    async def list_transactions(self, *, limit: int | None = None, starting_after: str | None = None,
                                **filters: Any) -> m.Page[m.Transaction]:
        return await self.send(ops.list_transactions(limit, starting_after, filters))  # type: ignore[arg-type]

    def iter_transactions(self, *, page_size: int = 100, **filters: Any) -> AsyncIterator[m.Transaction]:
        return self._items(lambda after: ops.list_transactions(page_size, after, filters))  # type: ignore[arg-type]

    # customers
    async def create_customer(self, customer: m.CustomerInput, *,
                              idempotency_key: str | None = None) -> m.Customer:
        return await self.send(ops.create_customer(customer, idempotency_key))

    async def get_customer(self, customer_id: str) -> m.Customer:
        return await self.send(ops.get_customer(customer_id))

    async def update_customer(self, customer_id: str, changes: m.CustomerInput) -> m.Customer:
        return await self.send(ops.update_customer(customer_id, changes))

    async def delete_customer(self, customer_id: str) -> None:
        await self.send(ops.delete_customer(customer_id))

    async def list_customers(self, *, limit: int | None = None,
                             starting_after: str | None = None) -> m.Page[m.Customer]:
        return await self.send(ops.list_customers(limit, starting_after))

    def iter_customers(self, *, page_size: int = 100) -> AsyncIterator[m.Customer]:
        return self._items(lambda after: ops.list_customers(page_size, after))

    async def batch_upsert_customers(self, customers: list[m.CustomerInput], *,
                                     idempotency_key: str | None = None) -> m.BatchResponse:
        return await self.send(ops.batch_upsert_customers(customers, idempotency_key))

    # products
    async def create_product(self, product: m.ProductInput) -> m.Product:
        return await self.send(ops.create_product(product))

    async def update_product(self, product_id: str, changes: m.ProductInput) -> m.Product:
        return await self.send(ops.update_product(product_id, changes))

    async def get_product(self, product_id: str) -> m.Product:
        return await self.send(ops.get_product(product_id))

    async def delete_product(self, product_id: str) -> None:
        await self.send(ops.delete_product(product_id))

    async def list_products(self, *, limit: int | None = None,
                            starting_after: str | None = None) -> m.Page[m.Product]:
        return await self.send(ops.list_products(limit, starting_after))

    def iter_products(self, *, page_size: int = 100) -> AsyncIterator[m.Product]:
        return self._items(lambda after: ops.list_products(page_size, after))

    # reference data
    async def list_product_tax_codes(self, *, limit: int | None = None,
                                     starting_after: str | None = None) -> m.Page[m.ProductTaxCode]:
        return await self.send(ops.list_product_tax_codes(limit, starting_after))

    def iter_product_tax_codes(self, *, page_size: int = 1000) -> AsyncIterator[m.ProductTaxCode]:
        return self._items(lambda after: ops.list_product_tax_codes(page_size, after))

    async def list_product_attributes(self, *, ptc: str | None = None, limit: int | None = None,
                                      starting_after: str | None = None) -> m.Page[m.ProductAttribute]:
        return await self.send(ops.list_product_attributes(limit, starting_after, ptc))

    def iter_product_attributes(self, *, ptc: str | None = None,
                                page_size: int = 1000) -> AsyncIterator[m.ProductAttribute]:
        return self._items(lambda after: ops.list_product_attributes(page_size, after, ptc))

    # organization (Levy's extensions)
    async def get_organization_settings(self) -> m.OrganizationSettings:
        return await self.send(ops.get_organization_settings())

    async def update_organization_settings(self, changes: m.OrganizationSettingsInput) -> m.OrganizationSettings:
        return await self.send(ops.update_organization_settings(changes))

    async def create_registration(self, registration: m.RegistrationInput) -> m.Registration:
        return await self.send(ops.create_registration(registration))

    async def delete_registration(self, registration_id: str) -> None:
        await self.send(ops.delete_registration(registration_id))

    def iter_registrations(self, *, page_size: int = 100) -> AsyncIterator[m.Registration]:
        return self._items(lambda after: ops.list_registrations(page_size, after))
