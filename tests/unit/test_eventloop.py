"""levy.eventloop: which loop `levy serve` runs on."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from levy import eventloop

HAVE_UVLOOP = importlib.util.find_spec("uvloop") is not None


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_asyncio_choice_runs_the_standard_loop() -> None:
    assert eventloop.run(_loop_module(), "asyncio") == "asyncio"
    assert eventloop.name("asyncio") == "asyncio"


@pytest.mark.skipif(not HAVE_UVLOOP, reason="uvloop is not installed on this platform")
def test_auto_and_uvloop_run_uvloop_when_installed() -> None:
    assert eventloop.run(_loop_module(), "auto") == "uvloop"
    assert eventloop.run(_loop_module(), "uvloop") == "uvloop"
    assert eventloop.name() == "uvloop"


def test_unknown_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event loop 'bogus'"):
        eventloop.loop_factory("bogus")
