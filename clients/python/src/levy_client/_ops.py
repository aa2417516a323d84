"""Every operation once, as a Call; the sync and async clients only send them."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from levy_client import models as m
from levy_client._core import Call, idempotent_write, query


def _p(value: str) -> str:
    return quote(value, safe="")


# calculations (spec 4.5)
def create_calculation(request: m.CalculationRequest, include_unregistered: bool = False) -> Call[m.Calculation]:
    headers = {"X-Include-Unregistered": "true"} if include_unregistered else {}
    return Call("POST", "/calculations", json=request, headers=headers)


# transactions (spec 4.6)
def create_transaction(transaction: m.TransactionInput, idempotency_key: str | None) -> Call[m.Transaction]:
    return idempotent_write("POST", "/transactions", transaction, idempotency_key)


def update_transaction(transaction_id: str, changes: m.TransactionInput,
                       idempotency_key: str | None) -> Call[m.Transaction]:
    return idempotent_write("POST", f"/transactions/{_p(transaction_id)}", changes, idempotency_key)


def get_transaction(transaction_id: str) -> Call[m.Transaction]:
    return Call("GET", f"/transactions/{_p(transaction_id)}")


def list_transactions(limit: int | None, starting_after: str | None,
                      filters: m.TransactionFilters) -> Call[m.Page[m.Transaction]]:
    return Call("GET", "/transactions", params=query(limit=limit, starting_after=starting_after, **filters))


# customers (spec 4.1, 4.2)
def create_customer(customer: m.CustomerInput, idempotency_key: str | None) -> Call[m.Customer]:
    return idempotent_write("POST", "/customers", customer, idempotency_key)


def get_customer(customer_id: str) -> Call[m.Customer]:
    return Call("GET", f"/customers/{_p(customer_id)}")


def update_customer(customer_id: str, changes: m.CustomerInput) -> Call[m.Customer]:
    return Call("PATCH", f"/customers/{_p(customer_id)}", json=changes)


def delete_customer(customer_id: str) -> Call[None]:
    return Call("DELETE", f"/customers/{_p(customer_id)}", empty=True)


def list_customers(limit: int | None, starting_after: str | None) -> Call[m.Page[m.Customer]]:
    return Call("GET", "/customers", params=query(limit=limit, starting_after=starting_after))


def batch_upsert_customers(customers: list[m.CustomerInput], idempotency_key: str | None) -> Call[m.BatchResponse]:
    return idempotent_write("POST", "/customers/batch", {"data": customers}, idempotency_key)


# products (spec 4.3; get, list and delete are Levy's)
def create_product(product: m.ProductInput) -> Call[m.Product]:
    # POST /products takes no Idempotency-Key: not retried once it may have arrived.
    return Call("POST", "/products", json=product, repeatable=False)


def update_product(product_id: str, changes: m.ProductInput) -> Call[m.Product]:
    return Call("PATCH", f"/products/{_p(product_id)}", json=changes)


def get_product(product_id: str) -> Call[m.Product]:
    return Call("GET", f"/products/{_p(product_id)}")


def delete_product(product_id: str) -> Call[None]:
    return Call("DELETE", f"/products/{_p(product_id)}", empty=True)


def list_products(limit: int | None, starting_after: str | None) -> Call[m.Page[m.Product]]:
    return Call("GET", "/products", params=query(limit=limit, starting_after=starting_after))


# reference data (spec 4.4)
def list_product_tax_codes(limit: int | None, starting_after: str | None) -> Call[m.Page[m.ProductTaxCode]]:
    return Call("GET", "/product-tax-codes", params=query(limit=limit, starting_after=starting_after))


def list_product_attributes(limit: int | None, starting_after: str | None,
                            ptc: str | None) -> Call[m.Page[m.ProductAttribute]]:
    return Call("GET", "/product-attributes", params=query(ptc=ptc, limit=limit, starting_after=starting_after))


# organization (Levy's extensions; settings changes and registrations need an admin key)
def get_organization_settings() -> Call[m.OrganizationSettings]:
    return Call("GET", "/organization/settings")


def update_organization_settings(changes: m.OrganizationSettingsInput) -> Call[m.OrganizationSettings]:
    return Call("PATCH", "/organization/settings", json=changes)


def create_registration(registration: m.RegistrationInput) -> Call[m.Registration]:
    return Call("POST", "/organization/registrations", json=registration, repeatable=False)


def delete_registration(registration_id: str) -> Call[None]:
    return Call("DELETE", f"/organization/registrations/{_p(registration_id)}", empty=True)


def list_registrations(limit: int | None, starting_after: str | None) -> Call[m.Page[m.Registration]]:
    return Call("GET", "/organization/registrations", params=query(limit=limit, starting_after=starting_after))


def cursor_of(item: Any) -> str:
    """``starting_after`` for the page after ``item``: its ``id``, or for the
    reference lists its ``code`` (spec section 4)."""
    return str(item["id"] if "id" in item else item["code"])
