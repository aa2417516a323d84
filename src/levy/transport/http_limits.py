"""Limits on what an HTTP client may send before the gateway sees a request.

uvicorn's httptools protocol reads a request's line and headers without bound
(httptools buffers a header value until it ends) and keeps a connection open
for as long as a partial request line or header keeps it waiting. This
subclass refuses, before the application runs:

- a request line and headers over ``max_header_bytes`` together, or more than
  ``max_header_count`` header fields: 431 and the connection closed. The bytes
  of a head not yet complete are counted as they arrive, so an endless header
  is cut off at the limit rather than buffered;
- a head not complete ``header_read_timeout_seconds`` after its first byte
  (or after connecting): 408 and the connection closed.

The responses carry the spec's error body (section 7.1). The request body has
its own deadline in the gateway (``body_read_timeout_seconds``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from levy.config import Config
from levy.domain.errors import HeadersTooLarge, LevyError, RequestTimeout
from levy.transport.errors import http_body


class _Refused(Exception):
    """Raised in a parser callback to stop parsing; ``send_400_response`` answers ``error``."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    max_header_bytes = 32_768
    max_header_count = 100
    header_read_timeout = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._in_head = True  # reading a request line and headers (or waiting for the first byte)
        self._heads = 0  # heads completed on this connection
        self._head_raw = 0  # bytes received of the head not yet complete
        self._head_bytes = 0  # the line and headers httptools handed over
        self._head_count = 0
        self._head_timer: asyncio.TimerHandle | None = None
        self._refusal: LevyError | None = None

    # ------------------------------------------------------------ connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._arm_head_timer()
        in_head, heads = self._in_head, self._heads
        super().data_received(data)
        if in_head and self._in_head and heads == self._heads and not self.transport.is_closing():
            # The whole chunk belongs to a head still incomplete (httptools holds it).
            self._head_raw += len(data)
            if self._head_raw > self.max_header_bytes:
                self._refuse(self._too_large())

    # ------------------------------------------------------------ parser callbacks

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True

    def on_url(self, url: bytes) -> None:
        self._count(len(url), 0)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4, 1)  # "name: value\r\n"
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._heads += 1
        self._head_raw = self._head_bytes = self._head_count = 0
        self._cancel_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # the next request's head; its timer starts with its first byte

    def _count(self, size: int, fields: int) -> None:
        """Exact accounting of a head whose parts httptools hands over."""
        self._head_bytes += size
        self._head_count += fields
        if self._head_bytes > self.max_header_bytes or self._head_count > self.max_header_count:
            self._refusal = self._too_large()
            raise _Refused()

    def _too_large(self) -> HeadersTooLarge:
        return HeadersTooLarge(
            f"The request line and headers are over the limit of {self.max_header_bytes} bytes or "
            f"{self.max_header_count} header fields; the connection is closed.",
            meta={"max_header_bytes": self.max_header_bytes, "max_header_count": self.max_header_count},
        )

    # ------------------------------------------------------------ refusing

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a parser error, which a refusal raised in a callback is."""
        if self._refusal is not None:
            self._refuse(self._refusal)
        else:
            super().send_400_response(msg)

    def _refuse(self, err: LevyError) -> None:
        self._cancel_head_timer()
        if self.transport.is_closing():
            return
        status, body, ctype = http_body(err, 0)
        head = [
            f"HTTP/1.1 {status} {err.first.title}\r\n".encode(),
            *(name + b": " + value + b"\r\n" for name, value in self.server_state.default_headers),
            f"content-type: {ctype}\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode(),
        ]
        self.transport.write(b"".join(head) + body)
        self.transport.close()

    def _arm_head_timer(self) -> None:
        if self._head_timer is None and self.header_read_timeout > 0:
            self._head_timer = self.loop.call_later(self.header_read_timeout, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self._in_head:
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self._arm_head_timer()  # a pipelined head waits for the response in progress
            return
        self._refuse(RequestTimeout(
            f"The request line and headers were not complete within {self.header_read_timeout:g} seconds; "
            "the connection is closed."
        ))


def limited_protocol(config: Config) -> type[LimitedHttpToolsProtocol]:
    """The protocol class for uvicorn with ``config``'s limits."""
    return type("LevyHttpProtocol", (LimitedHttpToolsProtocol,), {
        "max_header_bytes": config.max_header_bytes,
        "max_header_count": config.max_header_count,
        "header_read_timeout": config.header_read_timeout_seconds,
    })
