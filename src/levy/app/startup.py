"""Start-up hooks: each area registers a coroutine that loads what it keeps in
memory (catalogue, rate tables, ...) before the server takes traffic."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from levy.app.services import AppServices

_HOOKS: list[Callable[[AppServices], Awaitable[None]]] = []


def on_startup(fn: Callable[[AppServices], Awaitable[None]]) -> Callable[[AppServices], Awaitable[None]]:
    _HOOKS.append(fn)
    return fn


async def run(services: AppServices) -> None:
    for hook in _HOOKS:
        await hook(services)
