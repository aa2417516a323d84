"""The console's routes: :class:`Route` objects matched by a :class:`Router`, which also
builds every console URL (:meth:`Router.url_for`), so that no page, template or redirect
concatenates a path by hand.

A route's path names its parameters in braces: ``/customers/{customer_id}`` matches one
segment of letters, digits and underscores (every Levy id), ``{name:file}`` a file name
(letters, digits, ``_``, ``-`` and ``.``). A path that some route matches with another
method is :class:`MethodNotAllowed` (405, its ``allowed`` methods for the ``Allow``
header), a path that no route matches is ``None`` (404).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

#: The parameter kinds of a route's path: name -> the regular expression of its value.
CONVERTERS = {"id": r"[A-Za-z0-9_]+", "file": r"[A-Za-z0-9_.\-]+"}
_PARAM = re.compile(r"\{([a-z_]+)(?::([a-z]+))?\}")

Endpoint = Callable[..., Awaitable[Any]]


class NoMatch(LookupError):
    """``url_for`` of an unknown route name, or of parameters that do not fit its path."""


class MethodNotAllowed(Exception):
    """The path is a console page, but not for this method; ``allowed`` lists those it takes."""

    def __init__(self, allowed: list[str]) -> None:
        super().__init__(", ".join(allowed))
        self.allowed = allowed


@dataclass(frozen=True)
class Route:
    """One page or action: ``methods`` on ``path`` runs ``endpoint``, named ``name`` for
    :meth:`Router.url_for`. ``writes``: an action that changes data (members may not, and
    its form needs the CSRF token); ``uploads``: its form may carry a certificate document;
    ``public``: answered without a session (sign-in, static files)."""

    methods: tuple[str, ...]
    path: str
    endpoint: Endpoint
    name: str
    writes: bool = False
    uploads: bool = False
    public: bool = False
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    params: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        params: dict[str, str] = {}
        regex, pos = "^", 0
        for found in _PARAM.finditer(self.path):
            kind = found.group(2) or "id"
            if kind not in CONVERTERS:
                raise ValueError(f"route {self.name}: unknown parameter kind {kind!r} in {self.path}")
            params[found.group(1)] = CONVERTERS[kind]
            regex += re.escape(self.path[pos:found.start()]) + f"(?P<{found.group(1)}>{CONVERTERS[kind]})"
            pos = found.end()
        object.__setattr__(self, "pattern", re.compile(regex + re.escape(self.path[pos:]) + "$"))
        object.__setattr__(self, "params", params)

    def match(self, path: str) -> dict[str, str] | None:
        found = self.pattern.match(path)
        return found.groupdict() if found else None

    def url(self, **values: Any) -> str:
        """This route's path with ``values`` in place of its parameters (each checked against its kind)."""
        if set(values) != set(self.params):
            raise NoMatch(f"route {self.name} takes {sorted(self.params)}, not {sorted(values)}")

        def fill(found: re.Match[str]) -> str:
            value = str(values[found.group(1)])
            if not re.fullmatch(self.params[found.group(1)], value):
                raise NoMatch(f"route {self.name}: {found.group(1)}={value!r} does not fit {self.path}")
            return value

        return _PARAM.sub(fill, self.path)


def route(methods: str | Iterable[str], path: str, endpoint: Endpoint, name: str | None = None,
          **flags: bool) -> Route:
    """A :class:`Route`; ``methods`` one (``"GET"``) or several, ``name`` the endpoint's by default."""
    chosen = (methods,) if isinstance(methods, str) else tuple(methods)
    return Route(chosen, path, endpoint, name or endpoint.__name__, **flags)


def confirmed(path: str, endpoint: Endpoint, confirm: Endpoint) -> list[Route]:
    """A destructive action, asked for first: POST ``path`` runs ``endpoint`` (it writes); GET
    ``path`` is ``confirm``'s page that asks for it, the route named ``<endpoint>_confirm``."""
    return [route("POST", path, endpoint, writes=True),
            route("GET", path, confirm, f"{endpoint.__name__}_confirm")]


def editable(path: str, item: str, listing: Endpoint, create: Endpoint, show: Endpoint,
             update: Endpoint) -> list[Route]:
    """The pages of a kind of object edited in forms: GET ``path`` lists them and POST ``path``
    creates one; GET ``path/{item}`` shows one and POST ``path/{item}`` changes it."""
    return [route("GET", path, listing), route("POST", path, create, writes=True),
            route("GET", f"{path}/{{{item}}}", show), route("POST", f"{path}/{{{item}}}", update, writes=True)]


class Router:
    """The console's routes in order; the first route whose path and method match wins."""

    def __init__(self, prefix: str = "", routes: Iterable[Route] = ()) -> None:
        self.prefix = prefix
        self.routes: list[Route] = []
        self._names: dict[str, Route] = {}
        self.extend(routes)

    def extend(self, routes: Iterable[Route]) -> None:
        for r in routes:
            if r.name in self._names:
                raise ValueError(f"two console routes are named {r.name!r}")
            self._names[r.name] = r
            self.routes.append(r)

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route and its parameters for ``method`` on ``path`` (below the prefix); None
        when no route has that path; :class:`MethodNotAllowed` when routes have it for other methods."""
        allowed: list[str] = []
        for r in self.routes:
            params = r.match(path)
            if params is None:
                continue
            if method in r.methods:
                return r, params
            allowed.extend(m for m in r.methods if m not in allowed)
        if allowed:
            raise MethodNotAllowed(allowed)
        return None

    def named(self, name: str) -> Route:
        """The route called ``name``."""
        try:
            return self._names[name]
        except KeyError:
            raise NoMatch(f"no console route is named {name!r}") from None

    def url_for(self, name: str, /, **params: Any) -> str:
        """The full path (with the prefix) of the route ``name`` with ``params``."""
        return self.prefix + self.named(name).url(**params)
