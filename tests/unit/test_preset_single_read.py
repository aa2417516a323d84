"""Concurrent calculations that find a preset-cache entry empty read it once
(levy.app.calculate._presets), with fakes for the store."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from levy.app import calculate
from levy.app.preset_cache import PresetCache
from levy.domain.settings import OrganizationSettings


class _Reads:
    def __init__(self) -> None:
        self.settings = self.products = self.customers = self.uows = 0

    async def settings_and_registrations(self, conn: Any, org: str) -> tuple[OrganizationSettings, list[Any]]:
        self.settings += 1
        await asyncio.sleep(0.01)  # a real read suspends: the others arrive meanwhile
        return OrganizationSettings(), []

    async def products_by_id(self, conn: Any, org: str, ids: list[str]) -> dict[str, Any]:
        self.products += 1
        await asyncio.sleep(0.01)
        return {}

    async def customers_by_source_id(self, conn: Any, org: str, ids: list[str]) -> list[Any]:
        self.customers += 1
        await asyncio.sleep(0.01)
        return []

    async def all_locations(self, conn: Any, org: str) -> tuple[Any, ...]:
        await asyncio.sleep(0.01)
        return ()


def _ctx(reads: _Reads, cache: PresetCache) -> Any:
    @contextlib.asynccontextmanager
    async def uow() -> Any:
        reads.uows += 1
        yield object()

    services = SimpleNamespace(presets=cache, uow=uow)
    return SimpleNamespace(organization_id="org_1", services=services, uow=uow)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> _Reads:
    r = _Reads()
    for name in ("settings_and_registrations", "products_by_id", "customers_by_source_id"):
        monkeypatch.setattr(calculate.calc_reads, name, getattr(r, name))
    # The organization's business locations are read with its settings (issue 19).
    monkeypatch.setattr(calculate, "all_locations", r.all_locations)
    return r


def test_concurrent_misses_read_once(reads: _Reads) -> None:
    cache = PresetCache(60)

    async def go() -> None:
        ctx = _ctx(reads, cache)
        await asyncio.gather(*(calculate._presets(ctx, None, ["prd_1"], ["buyer"]) for _ in range(8)))

    asyncio.run(go())
    assert (reads.uows, reads.settings, reads.products, reads.customers) == (1, 1, 1, 1)


def test_a_request_with_other_presets_still_reads_what_it_lacks(reads: _Reads) -> None:
    cache = PresetCache(60)

    async def go() -> None:
        ctx = _ctx(reads, cache)
        await asyncio.gather(calculate._presets(ctx, None, ["prd_1"], []),
                             calculate._presets(ctx, None, ["prd_2"], []))

    asyncio.run(go())
    # Settings once; each product list once (the second waits, then reads only prd_2).
    assert reads.settings == 1 and reads.products == 2 and reads.uows == 2


def test_callers_with_their_own_connection_do_not_wait(reads: _Reads) -> None:
    cache = PresetCache(60)

    async def go() -> None:
        ctx = _ctx(reads, cache)
        await asyncio.gather(*(calculate._presets(ctx, object(), ["prd_1"], []) for _ in range(3)))

    asyncio.run(go())
    assert reads.uows == 0 and reads.settings == 3  # each reads on its own transaction
