"""The console's small HTTP layer: requests, responses, cookies and form bodies
(no framework; the gateway is plain ASGI too)."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]


class BodyTooLarge(Exception):
    pass


@dataclass
class Upload:
    filename: str
    content_type: str
    data: bytes


@dataclass
class Request:
    scope: Scope
    method: str
    path: str  # below the console's prefix, e.g. "/keys"
    params: dict[str, str]
    query: dict[str, str]
    headers: dict[str, str]
    cookies: dict[str, str]
    peer: str
    form: dict[str, str] = field(default_factory=dict)
    files: dict[str, Upload] = field(default_factory=dict)


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)

    def set_cookie(self, name: str, value: str, *, path: str, max_age: int | None, secure: bool) -> None:
        parts = [f"{name}={value}", f"Path={path}", "HttpOnly", "SameSite=Strict"]
        if max_age is not None:
            parts.append(f"Max-Age={max_age}")
        if secure:
            parts.append("Secure")
        self.headers.append((b"set-cookie", "; ".join(parts).encode()))


def redirect(location: str) -> Response:
    return Response(303, headers=[(b"location", location.encode())])


def parse_cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:
        return {}
    return {k: m.value for k, m in jar.items()}


def same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


async def read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            break
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge()
        chunks.append(chunk)
        if not msg.get("more_body"):
            break
    return b"".join(chunks)


def parse_form(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, Upload]]:
    """URL-encoded or multipart form fields (the last value of a repeated name wins)."""
    if content_type.startswith("multipart/form-data"):
        msg = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body)
        fields: dict[str, str] = {}
        files: dict[str, Upload] = {}
        if not msg.is_multipart():
            return fields, files
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if not name:
                continue
            data = part.get_payload(decode=True) or b""
            filename = part.get_filename()
            if filename is not None:
                if data:
                    files[str(name)] = Upload(filename, part.get_content_type(), data)
            else:
                fields[str(name)] = data.decode("utf-8", "replace")
        return fields, files
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)), {}


async def send_response(send: Send, resp: Response) -> None:
    headers = [(b"content-type", resp.content_type.encode()), (b"content-length", str(len(resp.body)).encode()),
               *SECURITY_HEADERS, *resp.headers]
    await send({"type": "http.response.start", "status": resp.status, "headers": headers})
    await send({"type": "http.response.body", "body": resp.body})
