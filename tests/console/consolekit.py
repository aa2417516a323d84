"""Helpers of the web console's tests: console users made in the database (as
``levy users create`` makes them) and an httpx client that signs in through the
forms like a browser (cookies, CSRF tokens read from the pages)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import uuid
from typing import Any

import httpx

PASSWORD = "correct horse battery staple"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def email() -> str:
    return f"u{uuid.uuid4().hex[:10]}@example.com"


async def _create_user(database_url: str, org: str, address: str, role: str, password: str | None) -> str | None:
    from levy.app import console_service as console
    from levy.store.db import create_engine, transaction

    engine = create_engine(database_url, pool_size=1)
    try:
        async with transaction(engine, write=True) as conn:
            _, one_time = await console.create_user(conn, org, address, role, password)
    finally:
        await engine.dispose()
    return one_time


def create_user(database_url: str, org: str, *, role: str = "admin", password: str | None = PASSWORD,
                address: str | None = None) -> tuple[str, str]:
    """A console user; returns its email and password (a one-time one when ``password`` is None)."""
    address = address or email()
    one_time = in_thread(_create_user(database_url, org, address, role, password))
    return address, (one_time if password is None else password)


def in_thread(coro: Any) -> Any:
    """``asyncio.run(coro)`` on its own thread: Playwright's sync API keeps an event
    loop running on the test's thread."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def csrf(page: httpx.Response) -> str:
    found = _CSRF.search(page.text)
    assert found, page.text
    return found.group(1)


class ConsoleClient:
    """A browser-like client of /console: keeps cookies and the page's CSRF token."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url + "/console", timeout=30)
        self.token = ""

    def close(self) -> None:
        self.http.close()

    def sign_in(self, address: str, password: str) -> httpx.Response:
        page = self.http.get("/sign-in")
        r = self.http.post("/sign-in", data={"csrf_token": csrf(page), "email": address, "password": password})
        if r.status_code == 303:
            self.token = csrf(self.http.get(r.headers["location"].removeprefix("/console"), follow_redirects=True))
        return r

    def get(self, path: str, **kw: object) -> httpx.Response:
        r = self.http.get(path, **kw)  # type: ignore[arg-type]
        found = _CSRF.search(r.text)
        if found:
            self.token = found.group(1)
        return r

    def post(self, path: str, data: dict[str, str] | None = None, *, token: bool = True) -> httpx.Response:
        form = dict(data or {})
        if token:
            form.setdefault("csrf_token", self.token)
        return self.http.post(path, data=form)


def post_files(client: ConsoleClient, path: str, data: dict[str, str], files: dict[str, tuple[str, bytes, str]],
               *, token: bool = True) -> httpx.Response:
    """A multipart form (an upload), with the page's CSRF token."""
    form = dict(data)
    if token:
        form.setdefault("csrf_token", client.token)
    return client.http.post(path, data=form, files=files)
