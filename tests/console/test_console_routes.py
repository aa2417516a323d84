"""The console's routes against a real ``levy serve`` on SQLite and PostgreSQL: a console path
asked with a method it does not take answers 405 with an ``Allow`` header naming the methods
it takes (signed in or not, nothing changed), a path that is no page still answers 404, and
the links of the pages are the routes' own (levy.console.routing's url_for)."""

from __future__ import annotations

import re

import httpx
from consolekit import ConsoleClient
from levyserver import LevyServer
from test_console import admin  # noqa: F401  (fixture)


def refused(r: httpx.Response, allow: str) -> None:
    assert r.status_code == 405, (r.status_code, r.text[:300])
    assert r.headers["allow"] == allow
    assert r.headers["content-type"].startswith("text/html") and "Method not allowed" in r.text
    assert r.headers["x-frame-options"] == "DENY"  # the console's headers, as on every page


def test_a_wrong_method_is_405_with_the_methods_of_the_path(admin: ConsoleClient) -> None:  # noqa: F811
    refused(admin.http.request("DELETE", "/keys"), "GET, POST")
    refused(admin.http.put("/products/prod_01HZZZZZZZZZZZZZZZZZZZZZZZ", data={"csrf_token": admin.token}),
            "GET, POST")
    refused(admin.http.get("/sign-out"), "POST")
    refused(admin.http.post("/customers/export.csv", data={"csrf_token": admin.token}), "GET")
    refused(admin.http.post("/transactions/txn_01HZZZZZZZZZZZZZZZZZZZZZZZ", data={"csrf_token": admin.token}),
            "GET")
    refused(admin.http.request("PATCH", "/users/user_01HZZZZZZZZZZZZZZZZZZZZZZZ/remove"), "POST, GET")
    refused(admin.http.post("/static/console.css"), "GET, HEAD")
    # The session is untouched: the next page still opens.
    assert admin.get("/keys").status_code == 200


def test_a_wrong_method_is_405_without_a_session_too(server: LevyServer) -> None:
    with httpx.Client(base_url=server.http_url + "/console") as c:
        refused(c.request("PATCH", "/sign-in"), "GET, POST")
        refused(c.request("DELETE", "/customers"), "GET")
        refused(c.put("/calculator"), "GET, POST")
        # A path that is no page is 404 whatever the method; a page's right method still asks to sign in.
        assert c.request("DELETE", "/nothing-here").status_code == 404
        assert c.get("/customers").headers["location"] == "/console/sign-in"


def test_the_pages_link_to_their_routes(admin: ConsoleClient) -> None:  # noqa: F811
    page = admin.get("/customers")
    assert page.status_code == 200
    links = set(re.findall(r'(?:href|action)="(/console[^"?#]*)', page.text))
    assert {"/console/static/console.css", "/console/customers", "/console/transactions", "/console/keys",
            "/console/password", "/console/sign-out", "/console/customers/export.csv"} <= links, links
    for link in links:  # every one of them is a page (or a file) of the console
        r = admin.http.get(link.removeprefix("/console"))
        assert r.status_code in (200, 405), (link, r.status_code)
