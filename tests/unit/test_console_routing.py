"""The console's routes (levy.console.routing) without a server: a path served for other
methods is MethodNotAllowed with those methods, url_for builds every named route of the
real route table and the router matches it back to that route with the same parameters;
and the layering the console keeps: its modules open no unit of work (they call
``levy.app.console_service.ConsoleService`` or an RPC), and the product handlers reach the store
only through ``levy.app.products``."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from levy.config import Config
from levy.console.app import Console
from levy.console.routing import MethodNotAllowed, NoMatch, Router, route

SRC = Path(__file__).resolve().parents[2] / "src" / "levy"


async def endpoint() -> None:
    return None


def console() -> Console:
    """The console's real route table (nothing is served: no database is opened)."""
    pipeline = SimpleNamespace(services=None, limiter=None)
    return Console(pipeline, None, Config(), prefix="/console")  # type: ignore[arg-type]


def test_a_path_served_for_other_methods_is_method_not_allowed_with_them() -> None:
    router = Router("/c", [route("GET", "/things", endpoint, "things"),
                           route("POST", "/things", endpoint, "thing_create"),
                           route(("GET", "HEAD"), "/things/{thing_id}", endpoint, "thing")])
    assert router.match("GET", "/things")[0].name == "things"  # type: ignore[index]
    assert router.match("POST", "/things")[0].name == "thing_create"  # type: ignore[index]
    with pytest.raises(MethodNotAllowed) as refused:
        router.match("DELETE", "/things")
    assert refused.value.allowed == ["GET", "POST"]
    with pytest.raises(MethodNotAllowed) as refused:
        router.match("POST", "/things/t_1")
    assert refused.value.allowed == ["GET", "HEAD"]
    assert router.match("GET", "/nothing") is None
    assert router.match("GET", "/things/a/b") is None  # a parameter is one segment
    assert router.match("GET", "/things/a.b") is None  # of letters, digits and underscores


def test_url_for_fills_and_checks_parameters() -> None:
    router = Router("/c", [route("GET", "/things/{thing_id}/parts/{part_id}", endpoint, "part"),
                           route("GET", "/static/{name:file}", endpoint, "static")])
    assert router.url_for("part", thing_id="t_1", part_id="p_2") == "/c/things/t_1/parts/p_2"
    assert router.url_for("static", name="console.css") == "/c/static/console.css"
    with pytest.raises(NoMatch):
        router.url_for("nothing")
    with pytest.raises(NoMatch):
        router.url_for("part", thing_id="t_1")  # a parameter missing
    with pytest.raises(NoMatch):
        router.url_for("part", thing_id="../keys", part_id="p_2")  # not an id: never a link elsewhere
    with pytest.raises(NoMatch):
        router.url_for("static", name="a/b.css")


def test_two_routes_may_not_share_a_name() -> None:
    with pytest.raises(ValueError, match="named 'things'"):
        Router("", [route("GET", "/things", endpoint, "things"), route("POST", "/things", endpoint, "things")])


def test_url_for_round_trips_every_named_route_of_the_console() -> None:
    c = console()
    names = [r.name for r in c.router.routes]
    assert len(names) == len(set(names)) and len(names) >= 60, names
    for r in c.router.routes:
        params = {name: f"{name[:4]}_01HZZ{i}" for i, name in enumerate(r.params)}
        if "name" in params:
            params["name"] = "console.css"
        url = c.url_for(r.name, **params)
        assert url.startswith("/console/") and "{" not in url, url
        for method in r.methods:
            found = c.router.match(method, url.removeprefix("/console"))
            assert found is not None and (found[0].name, found[1]) == (r.name, params), (r.name, url)


def test_the_routes_keep_the_paths_and_guards_they_had() -> None:
    c = console()
    by_name = {r.name: r for r in c.router.routes}
    assert c.url_for("customer", customer_id="cust_1") == "/console/customers/cust_1"
    assert c.url_for("customers_export") == "/console/customers/export.csv"  # not taken for a customer id
    assert c.router.match("GET", "/customers/export.csv")[0].name == "customers_export"  # type: ignore[index]
    assert c.url_for("key_revoke_confirm", key_id="key_1") == c.url_for("key_revoke", key_id="key_1")
    assert by_name["key_revoke"].methods == ("POST",) and by_name["key_revoke_confirm"].methods == ("GET",)
    # Uploads only where a certificate document is sent; every POST but sign-in, sign-out,
    # password and calculator changes data (members may not).
    assert {n for n, r in by_name.items() if r.uploads} == {"certificate_create", "certificate_upload"}
    posts = {n for n, r in by_name.items() if "POST" in r.methods}
    assert {n for n in posts if not by_name[n].writes} == {"sign_in", "sign_out", "password_change", "calculate"}
    assert {n for n, r in by_name.items() if r.public} == {"static", "sign_in_page", "sign_in"}
    # Every confirmation page names an action that has its question.
    confirms = {n.removesuffix("_confirm") for n in by_name if n.endswith("_confirm")}
    assert confirms == set(Console.CONFIRMATIONS)
    for action, (*_, back, _fragment) in Console.CONFIRMATIONS.items():
        assert back in by_name and action in by_name


# ------------------------------------------------------------------ layering


UNIT_OF_WORK_CALLS = {"uow", "request_transaction", "transaction", "begin", "connect", "unit_of_work"}


def _opens_units_of_work(path: Path) -> list[str]:
    """Each place in ``path`` that opens a unit of work or reaches the engine: a call of
    ``uow``/``transaction``/``begin``/..., or any use of ``.uow`` and ``.engine``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in ("uow", "engine"):
            found.append(f"{path.name}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in UNIT_OF_WORK_CALLS:
                found.append(f"{path.name}:{node.lineno} {name}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            module = node.module if isinstance(node, ast.ImportFrom) else None
            names = [module or ""] + [a.name for a in node.names]
            if any(n.startswith("levy.store.db") or n == "sqlalchemy" or n.startswith("sqlalchemy.") for n in names):
                found.append(f"{path.name}:{node.lineno} import {module or names[1]}")
    return found


def test_console_modules_open_no_unit_of_work() -> None:
    modules = sorted((SRC / "console").rglob("*.py"))
    assert len(modules) >= 15
    offending = [place for path in modules for place in _opens_units_of_work(path)]
    assert offending == [], ("the console opens units of work through levy.app.console_service.ConsoleService "
                             f"(or runs an RPC), never itself: {offending}")


def test_the_check_sees_a_unit_of_work(tmp_path: Path) -> None:
    sample = tmp_path / "page.py"
    sample.write_text("async def view(self):\n    async with self.services.uow(write=True) as conn:\n"
                      "        pass\n    async with ctx.request_transaction() as conn:\n        pass\n")
    assert [re.sub(r"^page.py:\d+ ", "", p) for p in _opens_units_of_work(sample)] == \
        ["uow()", "request_transaction()", ".uow"]


def test_product_handlers_reach_the_store_only_through_the_products_service() -> None:
    tree = ast.parse((SRC / "app" / "handlers" / "products.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m and m.startswith(("levy.store", "sqlalchemy"))}, imported
    assert "levy.app" in imported  # from levy.app import products
