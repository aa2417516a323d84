"""Typed request and response bodies (spec section 2, plus Levy's extensions).

They are ``TypedDict``s: a request is a plain ``dict`` a type checker can verify,
and a response is the decoded JSON, unchanged. Amounts are strings holding
integers in minor units (``"1000"`` is $10.00), as on the wire. Input types are
partial (``total=False``): send only what you set; ``None`` sends JSON null.

Every component schema of docs/openapi.json is generated into
``levy_client._generated`` (clients/python/scripts/gen-client) and re-exported
here under its schema name; below are the few names kept for code written against
the earlier hand-kept models.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, NotRequired, Required, TypedDict, TypeVar

# Every schema of docs/openapi.json.
from levy_client._generated import *
from levy_client._generated import (
    BatchUpsertCustomersResponse,
    CreateCalculationRequestBody,
)

T = TypeVar("T")


class Page(TypedDict, Generic[T]):
    """One page of a list (spec section 4): ``data`` and ``has_more``."""

    data: list[T]
    has_more: bool


# The error objects of spec 7.1 (the OpenAPI document's JsonApiError, with the
# fields every error carries marked required).
class ErrorSource(TypedDict, total=False):
    pointer: Required[str | None]
    parameter: str


class ErrorObject(TypedDict):
    status: str
    code: str
    title: str
    detail: str
    source: NotRequired[ErrorSource]
    meta: NotRequired[dict[str, Any] | None]


# Earlier names of generated schemas.
CalculationRequest = CreateCalculationRequestBody
BatchResponse = BatchUpsertCustomersResponse
BatchStatus = Literal["created", "updated", "stale", "deleted", "failed"]
TransactionType = Literal["sale", "credit"]
TransactionStatus = Literal["draft", "finalized", "filed", "void"]


class TransactionFilters(TypedDict, total=False):
    """Query filters of ``GET /transactions`` (the keywords of ``list_transactions``)."""

    status: TransactionStatus
    type: TransactionType
    reference_id: str
    customer_id: str
    transaction_date_from: str
    transaction_date_to: str
    source: str
