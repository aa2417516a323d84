"""The route-table helpers of levy.console.routing: ``confirmed`` and ``editable``."""

from __future__ import annotations

from levy.console.routing import confirmed, editable


async def things() -> None: ...


async def thing_create() -> None: ...


async def thing() -> None: ...


async def thing_update() -> None: ...


async def thing_drop() -> None: ...


async def confirm() -> None: ...


def test_confirmed_is_a_writing_post_and_its_confirmation_page() -> None:
    post, get = confirmed("/things/{thing_id}/drop", thing_drop, confirm)
    assert (post.methods, post.path, post.endpoint, post.name, post.writes) == (
        ("POST",), "/things/{thing_id}/drop", thing_drop, "thing_drop", True)
    assert (get.methods, get.path, get.endpoint, get.name, get.writes) == (
        ("GET",), "/things/{thing_id}/drop", confirm, "thing_drop_confirm", False)


def test_editable_lists_creates_shows_and_updates() -> None:
    rows = [(r.methods[0], r.path, r.name, r.writes)
            for r in editable("/things", "thing_id", things, thing_create, thing, thing_update)]
    assert rows == [("GET", "/things", "things", False), ("POST", "/things", "thing_create", True),
                    ("GET", "/things/{thing_id}", "thing", False),
                    ("POST", "/things/{thing_id}", "thing_update", True)]
