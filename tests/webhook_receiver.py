"""A real HTTP receiver of webhook deliveries on loopback for the tests of issue 35: it keeps
every request (path, headers, body) and answers 200, or 500 to the first N requests of a path
(:meth:`Receiver.fail_first`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Settings of a server that delivers to this receiver: http and loopback allowed
#: (LEVY_WEBHOOK_ALLOW_HTTP/_PRIVATE), a poll every 0.05 s and retries after 0.2 s.
FAST = {"LEVY_WEBHOOK_ALLOW_HTTP": "true", "LEVY_WEBHOOK_ALLOW_PRIVATE": "true", "LEVY_WEBHOOK_POLL_SECONDS": "0.05",
        "LEVY_WEBHOOK_RETRY_SCHEDULE": "0.2s,0.2s,0.2s", "LEVY_WEBHOOK_TIMEOUT_SECONDS": "3"}


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    answered: int

    @property
    def event(self) -> dict[str, Any]:
        return dict(json.loads(self.body))


class Receiver:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[Received] = []
        self._failures: dict[str, int] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    left = receiver._failures.get(self.path, 0)
                    if left:
                        receiver._failures[self.path] = left - 1
                    status = 500 if left else 200
                    receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                                                      body, status))
                self.send_response(status)
                self.send_header("content-type", "text/plain")
                self.end_headers()
                self.wfile.write(b"nope" if status == 500 else b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        self.server.request_queue_size = 128  # deliveries arrive in parallel
        self.server.server_bind()
        self.server.server_activate()
        self.port = self.server.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def fail_first(self, path: str, n: int) -> None:
        with self.lock:
            self._failures[path] = n

    def at(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def wait(self, path: str, until: Callable[[list[Received]], bool], timeout: float = 30) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.at(path)
            if until(got):
                return got
            time.sleep(0.05)
        raise AssertionError(f"receiver {path}: condition not met in {timeout}s; got {self.at(path)}")


@contextmanager
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    thread = threading.Thread(target=r.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield r
    finally:
        r.server.shutdown()
        r.server.server_close()
