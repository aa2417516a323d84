"""Structured logs: one JSON object per line on stderr.

Every line has ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``
and ``pid``; request lines (logger ``levy.access``, one per request at INFO)
and errors raised while serving a request add ``request_id`` (the value of the
``X-Request-Id`` header / ``x-request-id`` gRPC trailer), ``transport``,
``method`` (RPC full name), ``status`` and ``duration_ms``. Exceptions add
``exception`` (the traceback).
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import datetime, timezone

import orjson

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": os.getpid(),
        }
        for k, v in vars(record).items():
            if k not in _STANDARD and not k.startswith("_"):
                out[k] = v
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


def configure(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    logging.getLogger("alembic").setLevel(logging.WARNING)
