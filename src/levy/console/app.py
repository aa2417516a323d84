"""The console's ASGI application: the route table (``levy.console.pages``, matched by
``levy.console.routing``), sign-in and CSRF checks, running RPCs as the signed-in user,
and the templates (see ``levy.console``)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from decimal import Decimal
from importlib import resources
from typing import Any

import jinja2
from google.protobuf import message

from levy.app import console_service as people
from levy.app.context import CallContext
from levy.app.limits import Overloaded
from levy.app.pipeline import Pipeline
from levy.app.registry import MethodInfo, method_by_name
from levy.config import Config
from levy.console.helpers import Signed, errors_of
from levy.console.http import (
    STALE_FORM,
    BodyTimeout,
    BodyTooLarge,
    FormRefused,
    Receive,
    Request,
    Response,
    Scope,
    Send,
    check_declared_size,
    parse_cookies,
    parse_form,
    read_body,
    redirect,
    same,
    same_origin,
    send_response,
)
from levy.console.pages import PAGES
from levy.console.pages.account import SESSION_COOKIE, AccountPages
from levy.console.pages.calculator import CalculatorPages
from levy.console.pages.customers import CustomerPages
from levy.console.pages.filings import FilingPages
from levy.console.pages.keys import KeyPages
from levy.console.pages.locations import LocationPages
from levy.console.pages.nexus import NexusPages
from levy.console.pages.people import PeoplePages
from levy.console.pages.products import ProductPages
from levy.console.pages.settings import SettingsPages
from levy.console.pages.transactions import TransactionPages
from levy.console.pages.webhooks import WebhookPages
from levy.console.routing import MethodNotAllowed, Route, Router, route
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.domain.ids import new_ulid
from levy.domain.money import currency_exponent
from levy.transport.peer import client_address

_section: ContextVar[str] = ContextVar("console_section", default="")

log = logging.getLogger("levy.console")
access_log = logging.getLogger("levy.access")

PARSE_ON_LOOP_BYTES = 262_144  # larger bodies are parsed on a worker thread
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".svg": "image/svg+xml"}
#: The pages a user who must change their password may still open.
BEFORE_PASSWORD_CHANGE = ("password_form", "password_change", "sign_out")


class Console(AccountPages, KeyPages, CustomerPages, SettingsPages, CalculatorPages, NexusPages, FilingPages,
              TransactionPages, PeoplePages, ProductPages, LocationPages, WebhookPages):
    """Mounted by the gateway under ``prefix``; answers every path below it."""

    #: A form's body; forms with a file may carry LEVY_CONSOLE_MAX_UPLOAD_BYTES more.
    FORM_LIMIT = 65_536

    def __init__(self, pipeline: Pipeline, service: people.ConsoleService, config: Config,
                 prefix: str = "/console") -> None:
        self.pipeline = pipeline
        self.services = pipeline.services
        self.service = service
        self.config = config
        self.prefix = prefix
        self.throttle = people.SignInThrottle(pipeline.limiter,
                                              config.console_sign_in_per_account_per_minute,
                                              config.console_sign_in_per_address_per_minute)
        self.router = Router(prefix, [route(("GET", "HEAD"), "/static/{name:file}", self.static, public=True)])
        for page in PAGES:
            self.router.extend(page.routes(self))
        self.url_for = self.router.url_for
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("levy.console", "templates"),
            autoescape=True,
        )
        self.templates.globals["url_for"] = self.router.url_for
        self.templates.filters["when"] = _when
        self.templates.filters["money"] = _money  # amount|money(currency), USD when none is given
        self.templates.filters["percent"] = _percent  # "0.0625" -> "6.25 %"

    # ------------------------------------------------------------------ ASGI

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        try:
            resp = await self._dispatch(scope, receive)
        except Overloaded as e:
            resp = self._page(503, "error.html", None, title="Busy", detail=e.detail)
            resp.headers.append((b"retry-after", b"1"))
        except Exception:
            log.exception("console error on %s %s", scope.get("method"), scope.get("path"))
            resp = self._page(500, "error.html", None, title="Something went wrong",
                              detail="The console could not complete this request; nothing more was changed.")
        await send_response(send, resp)
        if access_log.isEnabledFor(logging.INFO):
            access_log.info("%s %s %d", scope["method"], scope["path"], resp.status, extra={
                "transport": "console", "http_method": scope["method"], "path": scope["path"],
                "status": resp.status, "duration_ms": round((time.perf_counter() - started) * 1000, 3)})

    async def _dispatch(self, scope: Scope, receive: Receive) -> Response:
        path = scope["path"][len(self.prefix):] or "/"
        method = scope["method"]
        _section.set(path.split("/")[1])  # the navigation's current item (aria-current)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        peer = client_address(client[0] if client else None, headers.get("x-forwarded-for"),
                              trust_forwarded_for=self.config.trust_forwarded_for)
        query = {k: v for k, v in _query(scope.get("query_string", b""))}
        req = Request(scope, method, path, {}, query, headers, parse_cookies(headers.get("cookie", "")), peer)
        # A POST's body is read only once everything that can refuse it without its
        # content has been checked: the Origin, the route, the session, the role, the
        # declared size. Answers given before the body is read close the connection.
        if method == "POST" and not same_origin(headers, trust_forwarded_host=self.config.trust_forwarded_for):
            return _unread(self._page(403, "error.html", None, title="Not allowed",
                                      detail="This form was sent from another site."))
        try:
            found = self.router.match(method, path)
        except MethodNotAllowed as e:
            resp = self._page(405, "error.html", await self._session(req), title="Method not allowed",
                              detail=f"This page answers {' and '.join(e.allowed)} only.")
            resp.headers.append((b"allow", ", ".join(e.allowed).encode()))
            return _unread(resp) if method == "POST" else resp
        if found is not None and found[0].public:
            req.route, req.params = found[0].name, found[1]
            return await found[0].endpoint(req, receive)
        signed = await self._session(req)
        if found is None:
            resp = self._page(404, "error.html", signed, title="Not found", detail="There is no such page.")
            return _unread(resp) if method == "POST" else resp
        r, req.params = found
        req.route = r.name
        if signed is None:
            resp = redirect(self.url_for("sign_in_page"))
            return _unread(resp) if method == "POST" else resp
        if method == "POST":
            refused = await self._check_post(r, req, receive, signed)
            if refused is not None:
                return refused
        if signed.user.must_change_password and r.name not in BEFORE_PASSWORD_CHANGE:
            return redirect(self.url_for("password_form"))
        try:
            return await r.endpoint(req, signed)
        except NotFound as e:
            return self._page(404, "error.html", signed, title="Not found", detail=e.detail)
        except PermissionDenied:
            return self._page(403, "error.html", signed, title="Not allowed",
                              detail=f"Your role ({signed.user.role}) cannot do this.")

    async def _check_post(self, r: Route, req: Request, receive: Receive, signed: Signed) -> Response | None:
        """The refusal of a signed-in user's POST to ``r``, if any: a role that may not write, a
        body over the route's limit, a stale CSRF token; otherwise its form is read into ``req``."""
        if r.writes and not signed.may_write:
            return _unread(self._page(403, "error.html", signed, title="Not allowed",
                                      detail=f"Your role ({signed.user.role}) can look but not change anything."))
        limit = self.config.console_max_upload_bytes + self.FORM_LIMIT if r.uploads else self.FORM_LIMIT
        refused = await self._read_form(req, receive, limit, signed)
        if refused is not None:
            return refused
        if not same(req.form.get("csrf_token"), signed.session.csrf_token):
            return self._page(403, "error.html", signed, title="Form expired", detail=STALE_FORM)
        return None

    async def _read_form(self, req: Request, receive: Receive, limit: int,
                         signed: Signed | None = None) -> Response | None:
        """Read and parse the POST body into ``req.form`` and ``req.files``, or the answer
        refusing it: over ``limit`` bytes (declared or counted) 413, not received within
        LEVY_BODY_READ_TIMEOUT_SECONDS 408, too many parts or too large a field 413, a
        file before the session's CSRF token 403, malformed 400. A large body is parsed
        on a worker thread, not the event loop."""
        try:
            check_declared_size(req.headers, limit)
            content_type = req.headers.get("content-type", "")
            body = await read_body(receive, limit, self.config.body_read_timeout_seconds, content_type=content_type)
            token = signed.session.csrf_token if signed else None
            if len(body) > PARSE_ON_LOOP_BYTES:
                req.form, req.files = await asyncio.to_thread(parse_form, content_type, body, token=token)
            else:
                req.form, req.files = parse_form(content_type, body, token=token)
        except FormRefused as e:
            resp = self._page(e.status, "error.html", signed, title=e.title, detail=e.detail)
            return _unread(resp) if isinstance(e, (BodyTooLarge, BodyTimeout)) else resp
        return None

    @staticmethod
    def unread(resp: Response) -> Response:
        """``resp`` closing the connection: answered before the request's body was read."""
        return _unread(resp)

    async def static(self, req: Request, receive: Receive) -> Response:
        return _static(req.params["name"])

    # ------------------------------------------------------------------ helpers

    def _page(self, status: int, template: str, signed: Signed | None, **context: Any) -> Response:
        body = self.templates.get_template(template).render(
            user=signed.user if signed else None,
            csrf=signed.session.csrf_token if signed else "",
            is_admin=signed.admin if signed else False,
            may_write=signed.may_write if signed else False,
            section=_section.get(""),
            **context,
        )
        return Response(status, body.encode())

    async def _session(self, req: Request) -> Signed | None:
        token = req.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        found = await self.service.session_of(token)
        return Signed(found[1], found[0]) if found else None

    def _context(self, signed: Signed, method: MethodInfo) -> CallContext:
        """The call context of the signed-in user (admitted like an API key would be)."""
        ctx = self.pipeline.context(request_id="req_" + new_ulid(), transport="console")
        self.pipeline.admit_principal(method, ctx, people.principal(signed.user))
        return ctx

    async def call(self, signed: Signed, name: str, request: message.Message) -> Any:
        """Run an RPC as the signed-in user: the API's pipeline, authorization and handler."""
        method = method_by_name()[name]
        return await self._run(method, request, self._context(signed, method))

    async def _run(self, method: MethodInfo, request: message.Message, ctx: CallContext) -> Any:
        with self.pipeline.slot(ctx):
            return await self.pipeline.run(method, request, ctx)

    async def audited(self, signed: Signed, name: str, request: message.Message, action: str, target: str,
                      detail: str = "", after: Callable[[Any, Any], Awaitable[None]] | None = None) -> Any:
        """An RPC that changes something, ``after(conn, response)`` if given, and the audit
        entry, in one transaction (``ConsoleService.audited``)."""
        method = method_by_name()[name]
        ctx = self._context(signed, method)
        return await self.service.audited(ctx, lambda: self._run(method, request, ctx), signed.user, action,
                                          target, detail, after)

    async def form_or_error(self, req: Request, signed: Signed, write: Callable[[], Awaitable[None]],
                            page: Callable[..., Awaitable[Response]], success: str) -> Response:
        """Run ``write()`` and redirect to ``success``; on a validation error show ``page`` with
        the field errors (422)."""
        try:
            await write()
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await page(req, signed, errors=errors_of(e), status=422)
        return redirect(success)

    # ------------------------------------------------------------------ confirmations

    #: Destructive actions are asked for first: their buttons GET a page (the route
    #: ``<action>_confirm``) that names the action and its consequence and POSTs it (no
    #: JavaScript needed). By the action's route name: the question, its consequence, the
    #: button, and where Cancel leads (a route name, and a fragment).
    CONFIRMATIONS: dict[str, tuple[str, str, str, str, str]] = {
        "key_revoke": ("Revoke the API key {label}?",
                       "Calls with it are refused from then on; a revoked key cannot be restored.", "Revoke", "keys",
                       ""),
        "registration_remove": ("Remove the registration {label}?",
                                "Calculations stop charging tax for it.", "Remove registration", "organization",
                                "registrations"),
        "return_file": ("Mark the return {label} as filed?",
                        "Its transactions become filed; the console cannot undo this.", "Mark as filed",
                        "return_detail", ""),
        "user_remove": ("Remove {label}?", "Their sessions end at once; they can be invited again.", "Remove",
                        "users", ""),
        "product_archive": ("Archive the product {label}?",
                            "Calculations and transactions that name it as a preset are refused from then on, and "
                            "it cannot be edited; there is no unarchive. Transactions already recorded keep their "
                            "tax.", "Archive product", "product", ""),
        "location_archive": ("Archive the location {label}?",
                             "It stops being a ship-from location (and the default, if it was one) until it is "
                             "unarchived.", "Archive location", "location", ""),
        "webhook_delete": ("Delete the webhook endpoint {label}?",
                           "No more events are sent to it and its delivery log is deleted with it; this cannot "
                           "be undone.", "Delete endpoint", "webhook", ""),
        "webhook_rotate": ("Rotate the signing secret of {label}?",
                           "The old secret stops signing at once: deliveries from now on are signed with the new "
                           "one, shown once on the next page.", "Rotate secret", "webhook", ""),
    }

    async def confirm(self, req: Request, signed: Signed) -> Response:
        if not signed.may_write:
            raise PermissionDenied("this role cannot change anything")
        action = req.route.removesuffix("_confirm")
        question, consequence, button, back, fragment = self.CONFIRMATIONS[action]
        (object_id,) = req.params.values()
        label = req.query.get("label", "").strip()[:200]
        back_params = {k: v for k, v in req.params.items() if k in self.router.named(back).params}
        return self._page(200, "confirm.html", signed, question=question.format(
            label=f"“{label}” ({object_id})" if label else object_id), consequence=consequence,
            button=button, action=self.url_for(action, **req.params),
            back=self.url_for(back, **back_params) + (f"#{fragment}" if fragment else ""))


def _query(raw: bytes) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(raw.decode("latin-1"), keep_blank_values=True)


def _when(value: Any) -> str:
    """A timestamp as 'YYYY-MM-DD HH:MM UTC' (RFC 3339 strings and datetimes)."""
    if not value:
        return "—"
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text[:16].replace("T", " ") + " UTC" if len(text) >= 16 else text


#: Symbols shown before an amount; other currencies show their ISO 4217 code ("CAD 12.50").
CURRENCY_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def _percent(rate: Any) -> str:
    """A rate as a percentage, exact (``0.0625`` -> ``6.25 %``, ``0.08875`` -> ``8.875 %``)."""
    try:
        value = Decimal(str(rate)) * 100
    except ArithmeticError:
        return str(rate)
    return f"{value.normalize():f} %"


def _money(minor: Any, currency: Any = "USD") -> str:
    """Integer minor units (as a string or int) in ``currency``, with its ISO 4217 exponent:
    ('123456', 'USD') -> '$1,234.56', ('10000', 'JPY') -> '¥10,000', ('1500', 'BHD') -> 'BHD 1.500'.
    A currency without a known exponent shows the minor units as they are, with its code."""
    if minor in (None, ""):
        return "—"
    amount = int(minor)
    code = str(currency or "USD").upper()
    try:
        exponent = currency_exponent(code)
    except LevyError:
        return f"{code} {amount:,}".strip()
    sign = "-" if amount < 0 else ""
    whole, fraction = divmod(abs(amount), 10**exponent)
    text = f"{whole:,}" + (f".{fraction:0{exponent}d}" if exponent else "")
    symbol = CURRENCY_SYMBOLS.get(code)
    return f"{sign}{symbol}{text}" if symbol else f"{sign}{code} {text}"


def _unread(resp: Response) -> Response:
    """``resp`` closing the connection: answered before the request's body was read."""
    resp.headers.append((b"connection", b"close"))
    return resp


def _static(name: str) -> Response:
    suffix = name[name.rfind("."):] if "." in name else ""
    if "/" in name or suffix not in STATIC_TYPES:
        return Response(404, b"not found", "text/plain")
    try:
        data = resources.files("levy.console").joinpath("static", name).read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return Response(404, b"not found", "text/plain")
    resp = Response(200, data, STATIC_TYPES[suffix])
    return resp


