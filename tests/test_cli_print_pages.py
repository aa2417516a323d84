"""levy.cli.common.print_pages: every item of a paged listing, one line each."""

from __future__ import annotations

import asyncio

from levy.cli.common import print_pages


class _Item:
    def __init__(self, id: str) -> None:
        self.id = id


def test_print_pages_follows_the_pages(capsys) -> None:  # type: ignore[no-untyped-def]
    pages = {None: ([_Item("a"), _Item("b")], True), "b": ([_Item("c")], False)}
    asked: list[str | None] = []

    async def fetch(after: str | None) -> tuple[list[_Item], bool]:
        asked.append(after)
        return pages[after]

    asyncio.run(print_pages(fetch, lambda i: f"item {i.id}"))
    assert asked == [None, "b"]
    assert capsys.readouterr().out == "item a\nitem b\nitem c\n"
