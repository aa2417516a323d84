"""The console's small HTTP layer: requests, responses, cookies and form bodies
(no framework; the gateway is plain ASGI too)."""

from __future__ import annotations

import asyncio
import hmac
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlsplit

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


# What a console form may carry: checked before any part is decoded.
MAX_FORM_PARTS = 32  # the largest form has about a dozen fields
MAX_FIELD_BYTES = 16_384  # one field's value (a file part has the upload limit instead)
MAX_PART_HEAD_BYTES = 4_096  # the headers of one multipart part
TOKEN_FIELD = "csrf_token"
STALE_FORM = "This form's security token is missing or stale. Go back, reload the page and try again."


class FormRefused(Exception):
    """A body the console does not parse: its HTTP status and a sentence for the error page."""

    status = 400
    title = "Bad form"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BodyTooLarge(FormRefused):
    status = 413
    title = "Too large"


class BodyTimeout(FormRefused):
    status = 408
    title = "Too slow"


class TokenRefused(FormRefused):
    """A form's file part came before a matching CSRF token: nothing of the file is read."""

    status = 403
    title = "Form expired"


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
    route: str = ""  # the name of the route that matched (levy.console.routing)


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    #: A streamed body (the CSV exports): sent as it is produced, without a Content-Length.
    stream: AsyncIterator[bytes] | None = None

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


_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_origin(headers: dict[str, str], *, trust_forwarded_host: bool = False) -> bool:
    """A form's ``Origin`` (when the browser sends one) names this host: its host and
    port equal the request's ``Host`` (``X-Forwarded-Host`` behind a trusted proxy).
    ``Origin: null`` (a sandboxed or privacy-redirected form) is another site."""
    origin = headers.get("origin")
    if origin is None:
        return True
    host = headers.get("host", "")
    if trust_forwarded_host and headers.get("x-forwarded-host"):
        host = headers["x-forwarded-host"].split(",", 1)[0]
    sent, served = urlsplit(origin.strip()), urlsplit("//" + host.strip())
    if sent.scheme not in _DEFAULT_PORTS or not sent.hostname or sent.path not in ("", "/"):
        return False
    try:
        return (sent.hostname, sent.port or _DEFAULT_PORTS[sent.scheme]) == \
            (served.hostname, served.port or _DEFAULT_PORTS[sent.scheme])
    except ValueError:  # a port that is not a number
        return False


async def read_body(receive: Receive, limit: int, timeout: float = 0, *, content_type: str = "",
                    max_parts: int = MAX_FORM_PARTS) -> bytes:
    """The request body: over ``limit`` bytes is BodyTooLarge (counted as it arrives), not
    complete ``timeout`` seconds after the call (0: no deadline) is BodyTimeout. The parts
    of a multipart body are counted as it arrives too: past ``max_parts`` it is refused
    without reading the rest."""
    delimiter = multipart_delimiter(content_type) if content_type.lower().startswith("multipart/") else None
    chunks: list[bytes] = []
    size = parts = 0
    tail = b""  # the end of the body so far that may begin a delimiter
    try:
        async with asyncio.timeout(timeout if timeout > 0 else None):
            while True:
                msg = await receive()
                if msg["type"] == "http.disconnect":
                    break
                chunk = msg.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise BodyTooLarge(f"A form may carry at most {limit} bytes.")
                if delimiter:
                    window = tail + chunk
                    parts += window.count(delimiter)
                    if parts - 1 > max_parts:
                        raise BodyTooLarge(f"A form has at most {max_parts} parts.")
                    tail = window[-(len(delimiter) - 1):]
                chunks.append(chunk)
                if not msg.get("more_body"):
                    break
    except TimeoutError:
        raise BodyTimeout(f"The form was not received within {timeout:g} seconds; the connection is closed.") \
            from None
    return b"".join(chunks)


def check_declared_size(headers: dict[str, str], limit: int) -> None:
    """BodyTooLarge when the request's Content-Length is over ``limit`` (nothing read)."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"A form may carry at most {limit} bytes; this one has {int(declared)}.")


_BOUNDARY = re.compile(r';\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^;\s]{1,70}))', re.IGNORECASE)
_DISPOSITION_PARAM = re.compile(r';\s*([A-Za-z*]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))')


def parse_form(content_type: str, body: bytes, *, max_parts: int = MAX_FORM_PARTS,
               max_field: int = MAX_FIELD_BYTES, token: str | None = None) -> tuple[dict[str, str], dict[str, Upload]]:
    """URL-encoded or multipart form fields (the last value of a repeated name wins).

    Bounded before anything is decoded: more than ``max_parts`` fields or parts, or a
    field over ``max_field`` bytes, is refused (413). With ``token``, a multipart file
    part is refused (403) unless a ``csrf_token`` field equal to it came before it, so a
    forged upload is never decoded. A multipart body is split with ``bytes.find`` (linear
    in its size); what does not follow RFC 7578's shape is 400."""
    if content_type.lower().startswith("multipart/form-data"):
        return _multipart(content_type, body, max_parts, max_field, token)
    if body.count(b"&") + 1 > max_parts:
        raise BodyTooLarge(f"A form has at most {max_parts} fields.")
    fields = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    for name, value in fields.items():
        if len(value) > max_field:
            raise BodyTooLarge(f"The field {name[:40]!r} is over {max_field} characters.")
    return fields, {}


def multipart_delimiter(content_type: str) -> bytes | None:
    """``--boundary`` of a multipart Content-Type, or None without a boundary."""
    found = _BOUNDARY.search(content_type)
    return b"--" + (found.group(1) or found.group(2)).encode("latin-1") if found else None


def _multipart(content_type: str, body: bytes, max_parts: int, max_field: int,
               token: str | None) -> tuple[dict[str, str], dict[str, Upload]]:
    delimiter = multipart_delimiter(content_type)
    if delimiter is None:
        raise FormRefused("The form's Content-Type has no boundary.")
    if body.count(delimiter) - 1 > max_parts:  # one delimiter per part, and the closing one
        raise BodyTooLarge(f"A form has at most {max_parts} parts.")
    fields: dict[str, str] = {}
    files: dict[str, Upload] = {}
    pos = body.find(delimiter)
    if pos < 0:
        raise FormRefused("The form has no parts.")
    separator = b"\r\n" + delimiter
    while True:
        pos += len(delimiter)
        if body.startswith(b"--", pos):
            return fields, files  # the closing delimiter
        if not body.startswith(b"\r\n", pos):
            raise FormRefused("The form is not a well-formed multipart body.")
        head_end = body.find(b"\r\n\r\n", pos, pos + 2 + MAX_PART_HEAD_BYTES)
        end = body.find(separator, head_end + 4) if head_end >= 0 else -1
        if end < 0:
            raise FormRefused("The form is not a well-formed multipart body.")
        name, filename, part_type = _part_head(body[pos + 2:head_end])
        size = end - head_end - 4
        if name is not None and filename is None:
            if size > max_field:
                raise BodyTooLarge(f"The field {name[:40]!r} is over {max_field} bytes.")
            fields[name] = body[head_end + 4:end].decode("utf-8", "replace")
        elif name is not None and filename is not None:
            if token is not None and not same(fields.get(TOKEN_FIELD), token):
                raise TokenRefused(STALE_FORM)
            if size:
                files[name] = Upload(filename, part_type, body[head_end + 4:end])
        pos = end + 2


def _part_head(raw: bytes) -> tuple[str | None, str | None, str]:
    """(name, filename or None, content type) of a multipart part's headers."""
    name = filename = None
    part_type = "application/octet-stream"
    for line in raw.decode("utf-8", "replace").split("\r\n"):
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "content-disposition":
            for param, quoted, bare in _DISPOSITION_PARAM.findall(value):
                text = re.sub(r"\\(.)", r"\1", quoted) if quoted else bare.strip()
                if param.lower() == "name":
                    name = text
                elif param.lower() == "filename":
                    filename = text
        elif key == "content-type":
            part_type = value.strip().split(";", 1)[0] or part_type
    return name, filename, part_type


#: A streamed body is sent in pieces of about this many bytes.
STREAM_CHUNK = 65_536


async def send_response(send: Send, resp: Response) -> None:
    length = [] if resp.stream is not None else [(b"content-length", str(len(resp.body)).encode())]
    headers = [(b"content-type", resp.content_type.encode()), *length, *SECURITY_HEADERS, *resp.headers]
    await send({"type": "http.response.start", "status": resp.status, "headers": headers})
    if resp.stream is None:
        await send({"type": "http.response.body", "body": resp.body})
        return
    # A failure mid-stream propagates: the server aborts the response, so a cut file never looks whole.
    buffered: list[bytes] = []
    size = 0
    async for piece in resp.stream:
        buffered.append(piece)
        size += len(piece)
        if size >= STREAM_CHUNK:
            await send({"type": "http.response.body", "body": b"".join(buffered), "more_body": True})
            buffered, size = [], 0
    await send({"type": "http.response.body", "body": b"".join(buffered)})
