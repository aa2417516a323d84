"""The REST gateway: the spec's JSON interface over the same application core.

Routes come from the ``google.api.http`` annotations of the services'
descriptors (path templates, body mapping, query parameters); the success
status and error body style come from ``levy.v1.method_policy``. The gateway
translates JSON to the request message, calls the pipeline the gRPC servicers
call, and translates the response or error. No business logic lives here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

import orjson
from google.protobuf import descriptor, message

from levy.app import metrics
from levy.app.auth import read_request_fields
from levy.app.pipeline import Pipeline
from levy.app.registry import MethodInfo, methods
from levy.config import Config
from levy.domain.errors import (
    InternalError,
    LevyError,
    MethodNotAllowed,
    NotFound,
    RequestTimeout,
    RequestTooLarge,
    Unavailable,
    ValidationFailed,
)
from levy.domain.ids import new_ulid
from levy.domain.versioning import CURRENT
from levy.transport import codec
from levy.transport.errors import from_unexpected, http_body
from levy.transport.peer import client_address

log = logging.getLogger("levy.gateway")
access_log = logging.getLogger("levy.access")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
FD = descriptor.FieldDescriptor

_VAR = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True)
class Route:
    method: MethodInfo
    http_method: str
    template: str
    regex: re.Pattern[str] | None  # None for a literal path
    path_fields: frozenset[str]
    body: str  # "" (no body), "*" or a field name
    query_fields: dict[str, FD]
    literal_segments: int


def unsupported_binding(m: MethodInfo) -> str | None:
    """Why the router cannot serve ``m``'s ``google.api.http`` rule as written, or None.

    The router supports literal segments and single-segment variables (``{id}``),
    a body of ``""``, ``"*"`` or one field. Anything else (``{name=x/*}``,
    wildcards, a custom verb, ``additional_bindings``, ``response_body``) would
    otherwise be matched as a literal path and never reached."""
    rule = m.http
    if rule.WhichOneof("pattern") not in ("get", "put", "post", "delete", "patch"):
        return f"pattern {rule.WhichOneof('pattern')!r} (only get, put, post, delete and patch are routed)"
    if rule.additional_bindings:
        return "additional_bindings"
    if rule.response_body:
        return f"response_body {rule.response_body!r}"
    template = m.http_path
    if not template.startswith("/"):
        return f"path {template!r} does not start with '/'"
    for variable in re.findall(r"\{[^}]*\}", template):
        if not _VAR.fullmatch(variable):
            return f"variable {variable!r} of {template!r} (only single-segment variables like '{{id}}' are routed)"
    for segment in template.split("/")[1:]:
        if _VAR.fullmatch(segment):
            continue
        if "{" in segment or "}" in segment:
            return f"path segment {segment!r} of {template!r} (a variable must be a whole segment)"
        if "*" in segment or ":" in segment:
            return f"path segment {segment!r} of {template!r} (wildcards and custom verbs are not routed)"
    return None


def build_routes() -> list[Route]:
    routes = []
    for m in methods():
        why = unsupported_binding(m)
        if why is not None:
            raise ValueError(f"{m.full_name}: the REST gateway does not support the google.api.http {why}.")
        template = m.http_path
        path_fields = frozenset(_VAR.findall(template))
        regex = None
        if path_fields:
            pattern = "^" + _VAR.sub(lambda mo: f"(?P<{mo.group(1)}>[^/]+)", re.escape(template).replace(r"\{", "{").replace(r"\}", "}")) + "$"
            regex = re.compile(pattern)
        body = m.http.body
        query_fields: dict[str, FD] = {}
        if not body:
            for f in m.request_cls.DESCRIPTOR.fields:
                if f.name not in path_fields and f.type != FD.TYPE_MESSAGE and not f.is_repeated:
                    query_fields[f.name] = f
        routes.append(
            Route(
                method=m,
                http_method=m.http_method,
                template=template,
                regex=regex,
                path_fields=path_fields,
                body=body,
                query_fields=query_fields,
                literal_segments=sum(1 for s in template.split("/") if s and not s.startswith("{")),
            )
        )
    return routes


class Router:
    def __init__(self, routes: list[Route]) -> None:
        self.literal: dict[str, dict[str, Route]] = {}
        self.templated: list[Route] = []
        for r in routes:
            if r.regex is None:
                self.literal.setdefault(r.template, {})[r.http_method] = r
            else:
                self.templated.append(r)
        # Most literal segments first: /customers/batch before /customers/{customer_id}.
        self.templated.sort(key=lambda r: -r.literal_segments)

    def match(self, http_method: str, path: str) -> tuple[Route, dict[str, str]]:
        allowed: set[str] = set()
        by_method = self.literal.get(path)
        if by_method:
            r = by_method.get(http_method)
            if r is not None:
                return r, {}
            allowed.update(by_method)
        # A literal path shadows the templates: GET /customers/batch is 405 with
        # `Allow: POST`, not GetCustomer "batch". Among templates, any route
        # with the method matches (GET and POST /transactions/{id}).
        for r in () if allowed else self.templated:
            mo = r.regex.match(path)  # type: ignore[union-attr]
            if mo is None:
                continue
            if r.http_method == http_method:
                return r, {k: unquote(v) for k, v in mo.groupdict().items()}
            allowed.add(r.http_method)
        if allowed:
            raise MethodNotAllowed(
                f"{http_method} is not allowed on {path}; allowed: {', '.join(sorted(allowed))}.",
                meta={"allow": sorted(allowed)},
            )
        raise NotFound(f"No route for {path}.")


class Gateway:
    """The ASGI application."""

    def __init__(self, pipeline: Pipeline, config: Config) -> None:
        self.pipeline = pipeline
        self.config = config
        self.router = Router(build_routes())
        self.shutting_down = False
        self.extra_routes: dict[str, Callable[[Scope], Awaitable[tuple[int, bytes, str]]]] = {
            "/openapi.json": _openapi,
        }
        # ASGI sub-applications by path prefix (the web console under /console).
        self.mounts: dict[str, Callable[[Scope, Receive, Send], Awaitable[None]]] = {}

    def mount(self, prefix: str, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        """Serve every path equal to ``prefix`` or below it with ``app``."""
        self.mounts[prefix] = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":  # pragma: no cover - uvicorn runs with lifespan off
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        http_method: str = scope["method"]
        request_id = "req_" + new_ulid()
        if path == "/healthz" and http_method in ("GET", "HEAD"):
            status = 503 if self.shutting_down else 200
            body = orjson.dumps({"status": "shutting_down" if self.shutting_down else "serving"})
            hdrs = [(b"x-request-id", request_id.encode()), (b"x-levy-worker", str(os.getpid()).encode())]
            if self.shutting_down:
                hdrs.append((b"connection", b"close"))
            await _respond(send, status, body, "application/json", hdrs)
            return
        for prefix, app in self.mounts.items():
            if path == prefix or path.startswith(prefix + "/"):
                if self.shutting_down:
                    await _respond(send, 503, b"shutting down", "text/plain", [(b"connection", b"close")])
                    return
                await app(scope, receive, send)
                return
        extra = self.extra_routes.get(path)
        if extra is not None and http_method == "GET":
            status, body, ctype = await extra(scope)
            await _respond(send, status, body, ctype, [(b"x-request-id", request_id.encode())])
            return

        started = time.perf_counter()
        ctx = self.pipeline.context(request_id=request_id, transport="rest")
        style = 0
        rpc = "unmatched"
        extra_headers: list[tuple[bytes, bytes]] = []
        try:
            # The slot is held to admit the request and to run it, not while the client
            # sends its body (under its own deadline), so slow senders cannot hold slots.
            with self.pipeline.slot(ctx):
                route, path_params = self.router.match(http_method, path)
                m = route.method
                rpc = m.full_name
                style = m.policy.error_style
                headers = await self._admit(route, scope, ctx)
            raw = await self._body(route, headers, receive) if route.body else b""
            with self.pipeline.slot(ctx):
                status, body, ctype = await self._call(route, path_params, scope, raw, ctx)
        except LevyError as e:
            if isinstance(e, RequestTimeout):
                extra_headers.append((b"connection", b"close"))
            if isinstance(e, MethodNotAllowed) and e.first.meta:
                extra_headers.append((b"allow", ", ".join(e.first.meta["allow"]).encode()))
            try:
                status, body, ctype = http_body(e, style)
            except Exception:  # rendering must never escape: fall back to a plain 500
                log.exception("could not render an error (request id %s)", request_id,
                              extra={"request_id": request_id, "method": rpc})
                status, body, ctype = http_body(
                    InternalError(f"An unexpected error occurred. Request id: {request_id}."), style)
        except Exception as e:
            status, body, ctype = http_body(from_unexpected(e, ctx, f"{http_method} {path}"), style)
        extra_headers.append((b"x-request-id", request_id.encode()))
        extra_headers.append((b"service-version", (str(ctx.version) if ctx.version else CURRENT).encode()))
        for k, v in ctx.response_headers.items():
            extra_headers.append((k.encode(), v.encode()))
        if self.shutting_down:
            extra_headers.append((b"connection", b"close"))
        await _respond(send, status, body, ctype, extra_headers)
        elapsed = time.perf_counter() - started
        metrics.observe("rest", rpc, str(status), elapsed)
        if access_log.isEnabledFor(logging.INFO):
            access_log.info("%s %s %d", http_method, path, status, extra={
                "request_id": request_id, "transport": "rest", "method": rpc, "http_method": http_method, "path": path,
                "status": status, "duration_ms": round(elapsed * 1000, 3)})

    async def _admit(self, route: Route, scope: Scope, ctx: Any) -> dict[str, str]:
        """Read the request's headers into ``ctx`` and admit it (authentication, rate
        limit, authorization); returns the headers."""
        m = route.method
        headers = _headers(scope)
        forwarded = read_request_fields(
            ctx, ((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"])
        )
        if self.shutting_down:
            raise Unavailable("The server is shutting down; retry on another replica.")
        declared = headers.get("content-length")
        if route.body and declared and declared.isdigit():
            _check_size(int(declared), m.policy.max_body_bytes or self.config.max_body_bytes)
        client = scope.get("client")
        peer = client_address(client[0] if client else None, forwarded,
                              trust_forwarded_for=self.config.trust_forwarded_for)
        await self.pipeline.admit(m, ctx, peer=peer)
        return headers

    async def _body(self, route: Route, headers: dict[str, str], receive: Receive) -> bytes:
        """The request body, within LEVY_BODY_READ_TIMEOUT_SECONDS (408 after it)."""
        limit = route.method.policy.max_body_bytes or self.config.max_body_bytes
        timeout = self.config.body_read_timeout_seconds
        try:
            async with asyncio.timeout(timeout if timeout > 0 else None):
                return await _read_body(receive, limit, headers.get("content-length"))
        except TimeoutError:
            metrics.OVERLOADED.labels("body_timeout").inc()
            raise RequestTimeout(
                f"The request body was not received within {timeout:g} seconds; the connection is closed."
            ) from None

    async def _call(self, route: Route, path_params: dict[str, str], scope: Scope, raw: bytes,
                    ctx: Any) -> tuple[int, bytes, str]:
        m = route.method
        request = m.request_cls()
        if route.body:
            _parse_body(route, request, raw, ctx)
        _bind_query(route, request, scope.get("query_string", b""))
        for name, value in path_params.items():
            setattr(request, name, value)
        response = await self.pipeline.run(m, request, ctx)
        return _render(m, response)


async def _openapi(scope: Scope) -> tuple[int, bytes, str]:
    """``GET /openapi.json``: the contract generated from the protos (no auth)."""
    from levy.transport.openapi import served_document

    return 200, served_document(), "application/json"


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _check_size(declared: int, limit: int) -> None:
    if declared > limit:
        raise RequestTooLarge(
            f"The request body is {declared} bytes; the maximum is {limit} bytes. "
            "Split the request into smaller requests.",
            meta={"size": declared, "max_size": limit},
        )


async def _read_body(receive: Receive, limit: int, content_length: str | None) -> bytes:
    """The request body, refusing (413) before parsing anything over ``limit``
    (by Content-Length when sent, and by counting while reading)."""
    if content_length is not None and content_length.isdigit():
        _check_size(int(content_length), limit)
    chunks = []
    size = 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise ValidationFailed("The client closed the connection before the body was complete.")
        chunk = msg.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise RequestTooLarge(
                f"The request body is over {limit} bytes (at least {size} bytes were sent); the maximum is "
                f"{limit} bytes. Split the request into smaller requests.",
                meta={"size": size, "max_size": limit},
            )
        chunks.append(chunk)
        if not msg.get("more_body"):
            break
    return b"".join(chunks)


def _parse_body(route: Route, request: message.Message, raw: bytes, ctx: Any) -> None:
    if raw.strip():
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise ValidationFailed(f"The request body is not valid JSON: {e}.", pointer="", type="json_invalid") from None
    else:
        data = {}
    result = codec.ParseResult()
    if route.body == "*":
        codec.parse_into(request, data, "", result, top=True, exclude=route.path_fields)
    else:
        target = getattr(request, route.body)
        codec.parse_into(target, data, "", result, top=True)
        target.SetInParent()
        if "update_mask" in request.DESCRIPTOR.fields_by_name:
            request.update_mask.paths.extend(result.present)  # type: ignore[attr-defined]
    if result.errors:
        raise ValidationFailed.many(result.errors)
    ctx.item_errors = result.item_errors


def _bind_query(route: Route, request: message.Message, query_string: bytes) -> None:
    if not query_string:
        return
    errors = []
    for name, raw in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True):
        f = route.query_fields.get(name)
        if f is None:
            errors.append(ValidationFailed(f"Unknown query parameter '{name}'.", parameter=name, type="extra_forbidden"))
            continue
        try:
            setattr(request, name, codec.parse_query_value(f, raw, name))
        except ValidationFailed as e:
            errors.append(e)
    if errors:
        raise ValidationFailed.many(errors)


def _render(m: MethodInfo, response: message.Message) -> tuple[int, bytes, str]:
    status = m.success_status
    if status == 204:
        return 204, b"", ""
    if response.DESCRIPTOR.full_name == "google.api.HttpBody":
        return status, response.data, response.content_type  # type: ignore[attr-defined]
    return status, orjson.dumps(codec.to_json(response)), "application/json"


async def _respond(send: Send, status: int, body: bytes, ctype: str, headers: list[tuple[bytes, bytes]]) -> None:
    hdrs = list(headers)
    if ctype:
        hdrs.append((b"content-type", ctype.encode()))
    hdrs.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": body})
