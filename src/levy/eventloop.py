"""The event loop ``levy serve`` runs on: uvloop when it is installed (the
default, ``LEVY_EVENT_LOOP=auto``), or the standard library's asyncio loop.

uvloop (libuv) runs the same asyncio programs with less work per wake-up,
callback and socket read; both the gRPC server (``grpc.aio`` works on any
asyncio loop) and the REST gateway (uvicorn) gain. ``asyncio`` is the fallback
on platforms without uvloop and a way to rule the loop out when debugging.
The benchmark's baselines run on the same loop (docs/performance.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

CHOICES = ("auto", "uvloop", "asyncio")
_T = TypeVar("_T")


def loop_factory(choice: str = "auto") -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The loop factory for ``choice`` (None: the standard asyncio loop)."""
    if choice not in CHOICES:
        raise ValueError(f"unknown event loop {choice!r}: choose one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise ValueError("LEVY_EVENT_LOOP=uvloop but uvloop is not installed") from None
        return None
    return uvloop.new_event_loop  # type: ignore[no-any-return]


def name(choice: str = "auto") -> str:
    """``uvloop`` or ``asyncio``: what ``choice`` runs on here."""
    return "asyncio" if loop_factory(choice) is None else "uvloop"


def run(main: Coroutine[Any, Any, _T], choice: str = "auto") -> _T:
    """``asyncio.run(main)`` on the chosen loop."""
    with asyncio.Runner(loop_factory=loop_factory(choice)) as runner:
        return runner.run(main)
