"""The gateway refuses, at start-up, google.api.http rules its router cannot serve
(issue 23): before, ``{name=x/*}`` or ``additional_bindings`` were silently treated
as literal paths and never matched."""

from __future__ import annotations

import dataclasses

import pytest
from google.api import http_pb2

from levy.app.registry import methods
from levy.transport.gateway import build_routes, unsupported_binding


def _with_rule(**rule: object) -> object:
    m = next(iter(methods()))
    return dataclasses.replace(m, http=http_pb2.HttpRule(**rule))


def test_every_rule_of_the_protos_is_supported() -> None:
    assert [m.full_name for m in methods() if unsupported_binding(m)] == []
    assert len(build_routes()) == len(list(methods()))


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ({"get": "/v1/{name=customers/*}"}, "variable '{name=customers/*}'"),
        ({"get": "/files/**"}, "path segment '**'"),
        ({"post": "/customers:merge"}, "path segment 'customers:merge'"),
        ({"get": "/x/{id}suffix"}, "path segment '{id}suffix'"),
        ({"get": "customers"}, "does not start with '/'"),
        ({"get": "/a", "response_body": "items"}, "response_body 'items'"),
        ({"get": "/a", "additional_bindings": [http_pb2.HttpRule(get="/b")]}, "additional_bindings"),
        ({"custom": http_pb2.CustomHttpPattern(kind="HEAD", path="/a")}, "pattern 'custom'"),
    ],
)
def test_unsupported_rules_are_named(rule: dict[str, object], reason: str) -> None:
    why = unsupported_binding(_with_rule(**rule))  # type: ignore[arg-type]
    assert why is not None and reason in why


@pytest.mark.parametrize("path", ["/customers", "/customers/{customer_id}", "/customers/{customer_id}/restore"])
def test_supported_rules(path: str) -> None:
    assert unsupported_binding(_with_rule(get=path)) is None  # type: ignore[arg-type]


def test_build_routes_refuses_an_unsupported_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    import levy.transport.gateway as gateway

    bad = _with_rule(get="/v1/{name=customers/*}")
    monkeypatch.setattr(gateway, "methods", lambda: [*methods(), bad])
    with pytest.raises(ValueError, match=r"does not support the google.api.http variable '\{name=customers/\*\}'"):
        gateway.build_routes()
