"""The one error hierarchy of Levy.

Every failure that a caller can see is a :class:`LevyError`. It carries one or
more :class:`ErrorItem` in the spec's JSON:API shape (section 7.1). Transports
map it exactly once: the gRPC adapter to a ``google.rpc.Status`` with rich
details, the REST gateway to ``{"errors": [...]}`` (or the calculation
endpoint's own shape) with the item's HTTP status.

The domain never imports gRPC: ``grpc_code`` is the *name* of a
``grpc.StatusCode`` member.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any, ClassVar

_MISSING = object()


@dataclass(frozen=True, slots=True)
class ErrorItem:
    """One error object of section 7.1, plus what the calculation shape needs."""

    status: int
    code: str
    title: str
    detail: str
    pointer: str | None = None
    meta: dict[str, Any] | None = None
    # For the calculation endpoint's 422 shape ({type, loc, msg, input}):
    type: str | None = None
    input: Any = field(default=None)
    # Query parameter name, when the error is about one (JSON:API source.parameter).
    parameter: str | None = None


class LevyError(Exception):
    """Base of every caller-visible error. Subclasses set the class defaults."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "system_internal_error"
    title: ClassVar[str] = "Internal Error"
    grpc_code: ClassVar[str] = "INTERNAL"
    type: ClassVar[str] = "internal_error"

    def __init__(
        self,
        detail: str,
        *,
        pointer: str | None = None,
        meta: dict[str, Any] | None = None,
        type: str | None = None,
        input: Any = None,
        title: str | None = None,
        code: str | None = None,
        parameter: str | None = None,
        items: list[ErrorItem] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if items is not None:
            self._items = list(items)
        else:
            self._items = [
                ErrorItem(
                    status=self.status,
                    code=code or self.code,
                    title=title or self.title,
                    detail=detail,
                    pointer=pointer,
                    meta=meta,
                    type=type or self.type,
                    input=input,
                    parameter=parameter,
                )
            ]

    @property
    def items(self) -> list[ErrorItem]:
        return self._items

    @property
    def first(self) -> ErrorItem:
        return self._items[0]

    @classmethod
    def many(cls, errors: list[LevyError], detail: str | None = None) -> LevyError:
        """Combine several errors of this class into one (all their items)."""
        if len(errors) == 1:
            return errors[0]
        items = [item for e in errors for item in e.items]
        return cls(detail or f"{len(items)} errors", items=items)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"{type(self).__name__}({self.items!r})"


class InvalidArgument(LevyError):
    """400: a request that is wrong before any resource is looked at (bad header)."""

    status = 400
    code = "invalid_request"
    title = "Bad Request"
    grpc_code = "INVALID_ARGUMENT"
    type = "invalid_request"


class InvalidServiceVersion(InvalidArgument):
    code = "invalid_service_version"
    title = "Invalid Service-Version"
    type = "invalid_service_version"


class Unauthenticated(LevyError):
    status = 401
    code = "authentication_error"
    title = "Unauthorized"
    grpc_code = "UNAUTHENTICATED"
    type = "authentication_error"


class PermissionDenied(LevyError):
    status = 403
    code = "permission_error"
    title = "Forbidden"
    grpc_code = "PERMISSION_DENIED"
    type = "permission_error"


class NotFound(LevyError):
    status = 404
    code = "not_found"
    title = "Not Found"
    grpc_code = "NOT_FOUND"
    type = "not_found"


class MethodNotAllowed(LevyError):
    status = 405
    code = "method_not_allowed"
    title = "Method Not Allowed"
    grpc_code = "UNIMPLEMENTED"
    type = "method_not_allowed"


class Conflict(LevyError):
    """409: the request collides with stored state (duplicate key, concurrent move)."""

    status = 409
    code = "conflict"
    title = "Conflict"
    grpc_code = "ALREADY_EXISTS"
    type = "conflict"


class RequestTooLarge(LevyError):
    status = 413
    code = "request_too_large"
    title = "Request Too Large"
    grpc_code = "RESOURCE_EXHAUSTED"
    type = "request_too_large"


class HeadersTooLarge(LevyError):
    """431: an HTTP request's line and headers are over their size or count limit."""

    status = 431
    code = "request_header_fields_too_large"
    title = "Request Header Fields Too Large"
    grpc_code = "RESOURCE_EXHAUSTED"
    type = "request_header_fields_too_large"


class RequestTimeout(LevyError):
    """408: the client did not send its request (headers or body) in time."""

    status = 408
    code = "request_timeout"
    title = "Request Timeout"
    grpc_code = "DEADLINE_EXCEEDED"
    type = "request_timeout"


class ValidationFailed(LevyError):
    """422 ``validation_error``: malformed input, with a JSON pointer where it applies."""

    status = 422
    code = "validation_error"
    title = "Validation Error"
    grpc_code = "INVALID_ARGUMENT"
    type = "value_error"


class RequiredField(ValidationFailed):
    """422 ``validation_required_field``: a required field is missing."""

    code = "validation_required_field"
    type = "missing"

    def __init__(self, field_name: str, *, pointer: str | None = None, detail: str | None = None,
                 items: list[ErrorItem] | None = None) -> None:
        # ``items``: rebuilt from stored items (``many``, idempotent replays), like every LevyError.
        super().__init__(
            detail or f"The field '{field_name}' is required.",
            pointer=pointer,
            title=f"Missing {field_name}",
            items=items,
        )


class FailedPrecondition(ValidationFailed):
    """422 for a well-formed request that the resource's state does not allow."""

    code = "invalid_state"
    title = "Invalid State"
    grpc_code = "FAILED_PRECONDITION"
    type = "invalid_state"


class RateLimited(LevyError):
    status = 429
    code = "rate_limit_error"
    title = "Too Many Requests"
    grpc_code = "RESOURCE_EXHAUSTED"
    type = "rate_limit_error"

    def __init__(self, detail: str, *, retry_after: int, limit: int, remaining: int = 0) -> None:
        super().__init__(detail, meta={"retry_after": retry_after})
        self.retry_after = retry_after
        self.limit = limit
        self.remaining = remaining


class InternalError(LevyError):
    """500: never carries internals; the log has them under the request id."""


class NotImplementedYet(LevyError):
    status = 501
    code = "not_implemented"
    title = "Not Implemented"
    grpc_code = "UNIMPLEMENTED"
    type = "not_implemented"


class Unavailable(LevyError):
    status = 503
    code = "service_unavailable"
    title = "Service Unavailable"
    grpc_code = "UNAVAILABLE"
    type = "service_unavailable"


class ErrorCollector:
    """Collects every problem of a request instead of stopping at the first."""

    __slots__ = ("errors",)

    def __init__(self) -> None:
        self.errors: list[LevyError] = []

    def attempt(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """``fn(*args, **kw)``, or None when it raised a LevyError (kept)."""
        try:
            return fn(*args, **kw)
        except LevyError as e:
            self.errors.append(e)
            return None

    def raise_any(self) -> None:
        """Raise the collected problems together (422), if any."""
        if self.errors:
            raise ValidationFailed.many(self.errors)
