"""Errors raised by the client: the JSON:API error objects of spec section 7."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:  # levy_client.models imports the generated code, which needs _core, which needs this
    from levy_client.models import ErrorObject


class LevyError(Exception):
    """Base of every error this package raises."""


class ApiError(LevyError):
    """The server answered with an error status (after any retries).

    ``errors`` holds the JSON:API error objects (``status``, ``code``, ``title``,
    ``detail``, ``source.pointer``, ``meta``) exactly as the server sent them. The
    calculation endpoint answers 422 in the spec's own shape
    (``{"detail": [{"type", "loc", "msg", "input"}]}``); its items are turned into
    error objects (``code`` = ``type``, ``detail`` = ``msg``, ``source.pointer``
    from ``loc``) and the original body stays in ``body``.
    """

    def __init__(self, status: int, errors: list[ErrorObject], body: Any, headers: dict[str, str]) -> None:
        self.status = status
        self.errors = errors
        self.body = body
        self.headers = headers
        first = errors[0] if errors else None
        summary = f"{first['code']}: {first['detail']}" if first else str(body)[:200]
        super().__init__(f"HTTP {status} {summary}")

    @property
    def code(self) -> str | None:
        """The first error's code, for example ``validation_error``."""
        return self.errors[0]["code"] if self.errors else None

    @property
    def request_id(self) -> str | None:
        """The server's ``X-Request-Id``, to quote when reporting a problem."""
        return self.headers.get("x-request-id")

    def pointers(self) -> list[str | None]:
        """The ``source.pointer`` of every error that has one."""
        return [e["source"].get("pointer") for e in self.errors if e.get("source")]


class ValidationError(ApiError):
    """422: the request was refused as it stands (``validation_error``,
    ``validation_required_field``, ``invalid_state``, the calculation's own shape);
    ``pointers()`` says where."""


class NotFoundError(ApiError):
    """404: no such resource in your organization (or no such route)."""


class ConflictError(ApiError):
    """409: a duplicate or a concurrent change (``duplicate_customer``, ``conflict``, ...);
    ``errors[0]["meta"]`` may name the record already there."""


class RateLimitError(ApiError):
    """429: the key's rate limit, still there after the client's retries (or with a
    wait over ``RetryPolicy.max_retry_after``). ``retry_after`` is the wait asked for."""

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before calling again: the ``Retry-After`` header (gRPC: the
        ``retry-after`` trailer), else the error's ``meta.retry_after``; None if neither."""
        header = self.headers.get("retry-after")
        if header and header.strip().isdigit():
            return float(header)
        meta = self.errors[0].get("meta") if self.errors else None
        value = meta.get("retry_after") if isinstance(meta, dict) else None
        return float(value) if isinstance(value, (int, float)) else None


class AuthenticationError(ApiError):
    """401: the API key is missing, malformed, unknown or revoked. Also the base of
    ``PermissionDeniedError`` (403), so one ``except`` catches both."""


class PermissionDeniedError(AuthenticationError):
    """403: a valid key without the permission, e.g. a plain key on an admin operation."""


#: The class raised for each HTTP status; any other status raises ``ApiError`` itself.
ERROR_CLASSES: dict[int, type[ApiError]] = {
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
}


def api_error(status: int, errors: list[ErrorObject], body: Any, headers: dict[str, str]) -> ApiError:
    """The ``ApiError`` subclass of ``status`` (``ERROR_CLASSES``), or ``ApiError``."""
    return ERROR_CLASSES.get(status, ApiError)(status, errors, body, headers)


def errors_from_body(status: int, body: Any) -> list[ErrorObject]:
    """The error objects of a response body, whatever shape the endpoint uses."""
    if isinstance(body, dict) and isinstance(body.get("errors"), list):
        return cast("list[ErrorObject]", body["errors"])
    if isinstance(body, dict) and isinstance(body.get("detail"), list):
        return [_from_calculation_detail(status, item) for item in body["detail"]]
    detail = body.get("detail") if isinstance(body, dict) else body
    return [{"status": str(status), "code": "http_error", "title": f"HTTP {status}", "detail": str(detail or "")}]


def _from_calculation_detail(status: int, item: dict[str, Any]) -> ErrorObject:
    loc = [str(part) for part in item.get("loc", [])]
    if loc and loc[0] == "body":
        loc = loc[1:]
    pointer = "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in loc)
    return {
        "status": str(status),
        "code": str(item.get("type", "validation_error")),
        "title": "Validation Error",
        "detail": str(item.get("msg", "")),
        "source": {"pointer": pointer},
        "meta": {"input": item.get("input")},
    }
