"""What one call carries through the pipeline, whatever its transport."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from levy.domain.errors import ErrorItem

if TYPE_CHECKING:
    from levy.app.services import AppServices
    from levy.domain.versioning import ApiVersion
    from levy.store.keys import ApiKeyRecord


@dataclass(slots=True)
class CallContext:
    services: AppServices
    request_id: str
    transport: str  # "grpc" | "rest"
    # Request headers / metadata, lower-case names.
    api_key: str | None = None
    service_version_header: str | None = None
    include_unregistered: bool = False
    idempotency_key: str | None = None
    # Per-item parse errors of a `per_item_errors` field (REST only), by index.
    item_errors: dict[int, list[ErrorItem]] = field(default_factory=dict)
    # The raw request body, when the transport has one (idempotency fingerprint).
    body_fingerprint: bytes | None = None
    # Set by the pipeline.
    key: ApiKeyRecord | None = None
    version: ApiVersion | None = None
    # Extra response headers / trailing metadata (lower-case names).
    response_headers: dict[str, str] = field(default_factory=dict)

    @property
    def organization_id(self) -> str:
        assert self.key is not None, "unauthenticated call"
        return self.key.organization_id
