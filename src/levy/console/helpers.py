"""What the console's pages share: the signed-in user, field errors, plain answers, the CSV
download, the bar chart's geometry and the form parsing several pages use."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format, message

from levy.app import console_service as people
from levy.console.http import Request, Response
from levy.domain import console_users as rules
from levy.domain.errors import LevyError, PermissionDenied
from levy.store.console_users import SessionRecord, UserRecord


@dataclass
class Signed:
    """A request's signed-in user and session."""

    user: UserRecord
    session: SessionRecord

    @property
    def admin(self) -> bool:
        return rules.ROLES[self.user.role][0]

    @property
    def may_write(self) -> bool:
        return people.may_write(self.user)


def admin_only(signed: Signed) -> None:
    """PermissionDenied (403) unless the user is an admin."""
    if not signed.admin:
        raise PermissionDenied("admins only")


def plain(msg: message.Message) -> dict[str, Any]:
    """A response message as a dict of its fields (proto field names)."""
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def errors_of(e: LevyError) -> dict[str, str]:
    """Field errors by field name (the last segment of each JSON pointer); '' for the form."""
    out: dict[str, str] = {}
    for item in e.items:
        name = (item.pointer or "").rstrip("/").rsplit("/", 1)[-1]
        out.setdefault(name, item.detail)
    return out


def text(req: Request, name: str) -> str:
    """A form field, stripped ('' when not sent)."""
    return req.form.get(name, "").strip()


def codes(value: str) -> list[str]:
    """Tax codes of a text field: separated by commas or lines."""
    return [c.strip() for c in value.replace("\n", ",").split(",") if c.strip()]


def bars(items: list[tuple[str, Any]], *, pitch: int = 28, bar: int = 20) -> dict[str, Any]:
    """Geometry of a horizontal bar chart of (label, amount in minor units) items, an SVG
    drawn by the template: one row of ``pitch`` units per item, bar lengths out of 100
    relative to the largest amount (a negative amount draws no bar; its value is shown)."""
    amounts = [int(a or 0) for _, a in items]
    top = max((max(0, a) for a in amounts), default=0) or 1
    return {"height": pitch * len(items) + 8,
            "bars": [{"label": label, "amount": a, "length": round(max(0, a) * 100 / top, 2), "y": pitch * i + 4,
                      "height": bar, "text_y": pitch * i + 4 + bar * 3 // 4}
                     for i, ((label, _), a) in enumerate(zip(items, amounts))]}


def csv_download(filename: str, lines: AsyncIterator[bytes]) -> Response:
    """A streamed CSV file, offered as a download."""
    resp = Response(200, content_type="text/csv; charset=utf-8", stream=lines)
    resp.headers.append((b"content-disposition", f'attachment; filename="{filename}"'.encode()))
    return resp


def attachment(data: bytes, content_type: str, filename: str) -> Response:
    """A file offered as a download."""
    resp = Response(200, data, content_type)
    resp.headers.append((b"content-disposition", f'attachment; filename="{filename}"'.encode()))
    return resp
