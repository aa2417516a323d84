"""Small conversions between protobuf messages and values, shared by the handlers."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.message import Message

from levy.domain.errors import ValidationFailed
from levy.domain.pagination import PageRequest, page_request


def optional(msg: Message, name: str) -> Any:
    """The value of a field with presence, or None when it is not set."""
    return getattr(msg, name) if msg.HasField(name) else None


def present_fields(
    msg: Message, paths: Sequence[str], fields: Sequence[str], what: str, *, listed: Sequence[str] | None = None
) -> list[str]:
    """The fields an update sends, for every update RPC.

    With an ``update_mask`` (REST builds it from the JSON keys sent, even as
    null; gRPC callers may send one) its paths, once each, in their order; a
    path that is not one of ``fields`` is refused (422 / INVALID_ARGUMENT,
    pointer ``/update_mask/paths/<index>``), so a typo never passes as a change
    of nothing. Without a mask, every one of ``fields`` set on ``msg`` (a
    repeated field when not empty). ``listed``: the fields the refusal names as
    writable, when some of ``fields`` are accepted only to be refused with a
    better reason later (default: ``fields``).
    """
    if paths:
        for index, path in enumerate(paths):
            if path not in fields:
                raise ValidationFailed(
                    f"update_mask path '{path}' is not a writable {what} field; writable fields: "
                    + ", ".join(fields if listed is None else listed),
                    pointer=f"/update_mask/paths/{index}",
                )
        return list(dict.fromkeys(paths))
    by_name = msg.DESCRIPTOR.fields_by_name
    return [n for n in fields if (msg.HasField(n) if by_name[n].has_presence else bool(getattr(msg, n)))]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp_utc(ts: Any) -> datetime:
    """``Timestamp.ToDatetime(tzinfo=UTC)`` without its Python-level detours (same
    value: nanos are non-negative, checked with the field limits, and truncated to
    microseconds as protobuf does)."""
    return _EPOCH + timedelta(seconds=ts.seconds, microseconds=ts.nanos // 1000)


def set_time(target: Any, value: datetime | None) -> None:
    """Fill a ``Timestamp`` field from ``value``; leave it unset for None."""
    if value is not None:
        target.FromDatetime(value)


def page_of(req: Message) -> PageRequest:
    """A list request's page: ``limit`` (default when not sent) and ``starting_after``."""
    return page_request(optional(req, "limit"), getattr(req, "starting_after") or None)
