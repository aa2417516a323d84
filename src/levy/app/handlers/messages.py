"""Small conversions between protobuf messages and values, shared by the handlers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.protobuf.message import Message

from levy.domain.pagination import PageRequest, page_request


def optional(msg: Message, name: str) -> Any:
    """The value of a field with presence, or None when it is not set."""
    return getattr(msg, name) if msg.HasField(name) else None


def set_time(target: Any, value: datetime | None) -> None:
    """Fill a ``Timestamp`` field from ``value``; leave it unset for None."""
    if value is not None:
        target.FromDatetime(value)


def page_of(req: Message) -> PageRequest:
    """A list request's page: ``limit`` (default when not sent) and ``starting_after``."""
    return page_request(optional(req, "limit"), getattr(req, "starting_after") or None)
