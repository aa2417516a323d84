"""The console's ASGI application: routes, views and templates (see ``levy.console``)."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from datetime import UTC, date, datetime
from decimal import Decimal
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlencode

import jinja2
from google.protobuf import json_format, message

from levy.app import console as people
from levy.app import customers as customers_app
from levy.app import exports
from levy.app import transactions as transactions_app
from levy.app.handlers.transactions import to_message as transaction_message
from levy.app.limits import Overloaded
from levy.app.pipeline import Pipeline
from levy.app.context import CallContext
from levy.app.registry import MethodInfo, method_by_name
from levy.config import Config
from levy.domain import console as rules
from levy.domain import nexus as nexus_rules
from levy.domain.errors import (
    LevyError,
    NotFound,
    PermissionDenied,
    RateLimited,
    ValidationFailed,
    Unauthenticated,
)
from levy.domain.exemptions import CERTIFICATE_STATUSES, EXEMPTION_TYPES
from levy.domain.ids import new_ulid
from levy.domain.money import currency_exponent
from levy.domain.settings import CERTIFICATE_TREATMENTS
from levy.domain.transactions.rules import STATUSES, TYPES, parse_search
from levy.domain.pagination import page_request
from levy.domain.periods import calendar_months, trailing_months
from levy.store.console import SessionRecord, UserRecord
from levy.transport.peer import client_address
from levy.v1 import calculations_pb2, customers_pb2, filings_pb2, organization_pb2

from levy.console.catalog import CatalogPages
from levy.console.webhooks import WebhookPages
from levy.console.http import (
    BodyTimeout,
    STALE_FORM,
    BodyTooLarge,
    FormRefused,
    Receive,
    Request,
    Response,
    Scope,
    Send,
    parse_cookies,
    check_declared_size,
    parse_form,
    read_body,
    redirect,
    same,
    same_origin,
    send_response,
)

_section: ContextVar[str] = ContextVar("console_section", default="")

log = logging.getLogger("levy.console")
access_log = logging.getLogger("levy.access")

SESSION_COOKIE = "levy_session"
SIGN_IN_CSRF_COOKIE = "levy_signin_csrf"
FORM_LIMIT = 65_536  # a form's body; forms with a file may carry LEVY_CONSOLE_MAX_UPLOAD_BYTES more
PARSE_ON_LOOP_BYTES = 262_144  # larger bodies are parsed on a worker thread
STALE_SIGN_IN = "This form's security token is missing or stale; try again."
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".svg": "image/svg+xml"}


@dataclass
class Signed:
    """A request's signed-in user and session."""

    user: UserRecord
    session: SessionRecord

    @property
    def admin(self) -> bool:
        return rules.ROLES[self.user.role][0]

    @property
    def may_write(self) -> bool:
        return people.may_write(self.user)


View = Callable[[Request, Signed], Awaitable[Response]]


def _plain(msg: message.Message) -> dict[str, Any]:
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


class Console(CatalogPages, WebhookPages):
    """Mounted by the gateway under ``prefix``; answers every path below it."""

    def __init__(self, pipeline: Pipeline, config: Config, prefix: str = "/console") -> None:
        self.pipeline = pipeline
        self.services = pipeline.services
        self.config = config
        self.prefix = prefix
        self.throttle = people.SignInThrottle(pipeline.limiter,
                                              config.console_sign_in_per_account_per_minute,
                                              config.console_sign_in_per_address_per_minute)
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("levy.console", "templates"),
            autoescape=True,
        )
        self.templates.globals["prefix"] = prefix
        self.templates.filters["when"] = _when
        self.templates.filters["money"] = _money  # amount|money(currency), USD when none is given
        self.templates.filters["percent"] = _percent  # "0.0625" -> "6.25 %"
        self.routes: list[tuple[str, re.Pattern[str], View, bool, bool]] = []  # method, path, view, writes, uploads
        r = self._route
        r("GET", "/", self.home)
        r("POST", "/sign-out", self.sign_out)
        r("GET", "/password", self.password_form)
        r("POST", "/password", self.password_change)
        r("GET", "/keys", self.keys)
        r("POST", "/keys", self.key_create, writes=True)
        r("POST", "/keys/{key_id}/revoke", self.key_revoke, writes=True)
        r("GET", "/keys/{key_id}/revoke", self.confirm)
        r("GET", "/customers", self.customers)
        r("GET", "/customers/export.csv", self.customers_export)
        r("GET", "/customers/{customer_id}", self.customer)
        r("POST", "/customers/{customer_id}/restore", self.customer_restore, writes=True)
        r("POST", "/customers/{customer_id}/certificates", self.certificate_create, writes=True, uploads=True)
        r("POST", "/customers/{customer_id}/certificates/{certificate_id}/review", self.certificate_review,
          writes=True)
        r("GET", "/customers/{customer_id}/certificates/{certificate_id}/document", self.certificate_document)
        r("POST", "/customers/{customer_id}/certificates/{certificate_id}/document", self.certificate_upload,
          writes=True, uploads=True)
        r("GET", "/organization", self.organization)
        r("POST", "/organization/settings", self.settings_update, writes=True)
        r("POST", "/organization/registrations", self.registration_create, writes=True)
        r("POST", "/organization/registrations/{registration_id}/remove", self.registration_remove, writes=True)
        r("GET", "/organization/registrations/{registration_id}/remove", self.confirm)
        r("GET", "/calculator", self.calculator)
        r("POST", "/calculator", self.calculate)  # a calculation stores nothing: members may use it
        r("GET", "/nexus", self.nexus)
        r("GET", "/returns", self.returns)
        r("POST", "/returns", self.return_prepare, writes=True)
        r("GET", "/returns/liability", self.liability)
        r("GET", "/returns/liability/export.csv", self.liability_export)
        r("GET", "/returns/{filing_id}", self.return_detail)
        r("POST", "/returns/{filing_id}/file", self.return_file, writes=True)
        r("GET", "/returns/{filing_id}/file", self.confirm)
        r("GET", "/returns/{filing_id}/export", self.return_export)
        r("GET", "/transactions", self.transactions)
        r("GET", "/transactions/export.csv", self.transactions_export)
        r("GET", "/transactions/{transaction_id}", self.transaction)
        r("GET", "/audit", self.audit)
        r("GET", "/users", self.users)
        r("POST", "/users", self.user_invite, writes=True)
        r("POST", "/users/{user_id}/remove", self.user_remove, writes=True)
        r("GET", "/users/{user_id}/remove", self.confirm)
        self.add_catalog_routes()
        self.add_webhook_routes()

    def _route(self, method: str, template: str, view: View, *, writes: bool = False,
               uploads: bool = False) -> None:
        """``writes``: refused for roles that may not write; ``uploads``: the form may carry
        a certificate document (its body may be LEVY_CONSOLE_MAX_UPLOAD_BYTES more)."""
        pattern = re.compile("^" + re.sub(r"\{([a-z_]+)\}", r"(?P<\1>[A-Za-z0-9_]+)",
                                          template.replace(".", r"\.")) + "$")
        self.routes.append((method, pattern, view, writes, uploads))

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
        if path.startswith("/static/") and method in ("GET", "HEAD"):
            return _static(path[len("/static/"):])
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client")
        peer = client_address(client[0] if client else None, headers.get("x-forwarded-for"),
                              trust_forwarded_for=self.config.trust_forwarded_for)
        query = {k: v for k, v in _query(scope.get("query_string", b""))}
        req = Request(scope, method, path, {}, query, headers, parse_cookies(headers.get("cookie", "")), peer)
        # A POST's body is read only once everything that can refuse it without its
        # content has been checked: the Origin, the session, the role, the declared size.
        # Answers given before the body is read close the connection (the body is left unread).
        if method == "POST" and not same_origin(headers, trust_forwarded_host=self.config.trust_forwarded_for):
            return _unread(self._page(403, "error.html", None, title="Not allowed",
                                      detail="This form was sent from another site."))
        if path == "/sign-in":
            if method == "GET":
                return self._sign_in_form(req)
            if method == "POST":
                if not req.cookies.get(SIGN_IN_CSRF_COOKIE):  # the double-submit cookie, before the body
                    return _unread(self._sign_in_form(req, status=403, error=STALE_SIGN_IN))
                refused = await self._read_form(req, receive, FORM_LIMIT)
                return refused or await self._sign_in(req)
        signed = await self._session(req)
        for m, pattern, view, writes, uploads in self.routes:
            match = pattern.match(path)
            if match is None:
                continue
            if m != method:
                continue
            if signed is None:
                resp = redirect(f"{self.prefix}/sign-in")
                return _unread(resp) if method == "POST" else resp
            req.params = match.groupdict()
            if method == "POST":
                if writes and not signed.may_write:
                    return _unread(self._page(403, "error.html", signed, title="Not allowed",
                                              detail=f"Your role ({signed.user.role}) can look but not change "
                                              "anything."))
                limit = self.config.console_max_upload_bytes + FORM_LIMIT if uploads else FORM_LIMIT
                refused = await self._read_form(req, receive, limit, signed)
                if refused is not None:
                    return refused
                if not same(req.form.get("csrf_token"), signed.session.csrf_token):
                    return self._page(403, "error.html", signed, title="Form expired", detail=STALE_FORM)
            if signed.user.must_change_password and view not in (self.password_form, self.password_change,
                                                                  self.sign_out):
                return redirect(f"{self.prefix}/password")
            try:
                return await view(req, signed)
            except NotFound as e:
                return self._page(404, "error.html", signed, title="Not found", detail=e.detail)
            except PermissionDenied:
                return self._page(403, "error.html", signed, title="Not allowed",
                                  detail=f"Your role ({signed.user.role}) cannot do this.")
        resp = self._page(404, "error.html", signed, title="Not found", detail="There is no such page.")
        return _unread(resp) if method == "POST" else resp

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
        async with self.services.uow() as conn:
            found = await people.session_of(conn, token)
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
        entry, in one transaction."""
        method = method_by_name()[name]
        ctx = self._context(signed, method)
        async with ctx.request_transaction() as conn:
            response = await self._run(method, request, ctx)
            if after is not None:
                await after(conn, response)
            await people.record(conn, signed.user, action, target or getattr(response, "id", ""), detail)
        return response

    # ------------------------------------------------------------------ sign-in, sign-out, password

    def _sign_in_form(self, req: Request, *, error: str = "", status: int = 200, email: str = "") -> Response:
        token = req.cookies.get(SIGN_IN_CSRF_COOKIE) or secrets.token_urlsafe(32)
        resp = self._page(status, "sign_in.html", None, error=error, email=email, signin_csrf=token)
        resp.set_cookie(SIGN_IN_CSRF_COOKIE, token, path=self.prefix, max_age=3600,
                        secure=self.config.console_secure_cookies)
        return resp

    async def _sign_in(self, req: Request) -> Response:
        email = rules.normalize_email(req.form.get("email", ""))
        if not same(req.form.get("csrf_token"), req.cookies.get(SIGN_IN_CSRF_COOKIE)):
            return self._sign_in_form(req, status=403, email=email, error=STALE_SIGN_IN)
        try:
            await self.throttle.check(email, req.peer)
            async with self.services.uow(write=True) as conn:
                result = await people.sign_in(conn, email, req.form.get("password", ""),
                                              session_hours=self.config.console_session_hours)
        except RateLimited as e:
            resp = self._sign_in_form(req, status=429, email=email, error=e.detail)
            resp.headers.append((b"retry-after", str(e.retry_after).encode()))
            return resp
        except Unauthenticated as e:
            return self._sign_in_form(req, status=401, email=email, error=e.detail)
        resp = redirect(f"{self.prefix}/password" if result.user.must_change_password else f"{self.prefix}/")
        resp.set_cookie(SESSION_COOKIE, result.token, path=self.prefix,
                        max_age=int(self.config.console_session_hours * 3600),
                        secure=self.config.console_secure_cookies)
        return resp

    async def sign_out(self, req: Request, signed: Signed) -> Response:
        async with self.services.uow(write=True) as conn:
            await people.sign_out(conn, signed.session.id)
        resp = redirect(f"{self.prefix}/sign-in")
        resp.set_cookie(SESSION_COOKIE, "", path=self.prefix, max_age=0, secure=self.config.console_secure_cookies)
        return resp

    async def home(self, req: Request, signed: Signed) -> Response:
        return redirect(f"{self.prefix}/customers")

    async def password_form(self, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                            status: int = 200, done: bool = False) -> Response:
        return self._page(status, "password.html", signed, errors=errors or {}, done=done,
                          minimum=rules.PASSWORD_MIN)

    async def password_change(self, req: Request, signed: Signed) -> Response:
        f = req.form
        try:
            await self.throttle.check_password_change(signed.user.id)
            async with self.services.uow(write=True) as conn:
                await people.change_password(conn, signed.user, signed.session.id, f.get("current_password", ""),
                                             f.get("new_password", ""), f.get("confirm_password", ""))
                await people.record(conn, signed.user, "password.changed", signed.user.id)
        except RateLimited as e:
            resp = await self.password_form(req, signed, errors={"current_password": e.detail}, status=429)
            resp.headers.append((b"retry-after", str(e.retry_after).encode()))
            return resp
        except LevyError as e:
            return await self.password_form(req, signed, errors=_errors(e), status=422)
        async with self.services.uow() as conn:
            found = await people.session_of(conn, req.cookies[SESSION_COOKIE])
        return await self.password_form(req, Signed(found[1], found[0]) if found else signed, done=True)

    # ------------------------------------------------------------------ developer page: API keys

    async def keys(self, req: Request, signed: Signed, *, created: dict[str, Any] | None = None,
                   errors: dict[str, str] | None = None, status: int = 200) -> Response:
        listing = await self.call(signed, "levy.v1.OrganizationService.ListApiKeys",
                                  organization_pb2.ListApiKeysRequest(limit=1000))
        return self._page(status, "keys.html", signed, keys=[_plain(k) for k in listing.data], created=created,
                          errors=errors or {}, form=req.form)

    async def key_create(self, req: Request, signed: Signed) -> Response:
        name = req.form.get("name", "").strip()
        admin = req.form.get("role") == "admin"
        try:
            key = await self.audited(
                signed, "levy.v1.OrganizationService.CreateApiKey",
                organization_pb2.CreateApiKeyRequest(api_key=organization_pb2.ApiKey(name=name, admin=admin)),
                "api_key.created", "", f"{name} ({'admin' if admin else 'plain'})")
        except PermissionDenied:
            raise
        except LevyError as e:
            return await self.keys(req, signed, errors=_errors(e), status=422)
        # The secret is in this response only: never stored, never shown again.
        return await self.keys(req, signed, created=_plain(key), status=201)

    async def key_revoke(self, req: Request, signed: Signed) -> Response:
        key_id = req.params["key_id"]
        await self.audited(signed, "levy.v1.OrganizationService.DeleteApiKey",
                           organization_pb2.DeleteApiKeyRequest(key_id=key_id), "api_key.revoked", key_id)
        # After the commit, so that no request re-caches the key as active meanwhile.
        self.services.authenticator.forget(key_id)
        return redirect(f"{self.prefix}/keys")

    # ------------------------------------------------------------------ customers

    async def customers(self, req: Request, signed: Signed) -> Response:
        text = req.query.get("q", "")[:200]
        deleted = req.query.get("deleted") == "1"
        after = req.query.get("after") or None
        async with self.services.uow() as conn:
            items, more = await customers_app.search_customers(
                conn, signed.user.organization_id, text, deleted=deleted, page=page_request(50, after))
        return self._page(200, "customers.html", signed, customers=items, more=more, q=text, deleted=deleted)

    async def customers_export(self, req: Request, signed: Signed) -> Response:
        """The customers the search finds (active, or deleted with ``deleted=1``) as a streamed CSV file."""
        deleted = req.query.get("deleted") == "1"
        return _csv_download("deleted-customers.csv" if deleted else "customers.csv",
                             exports.customers_csv(self.services.uow, signed.user.organization_id,
                                                   req.query.get("q", "")[:200], deleted=deleted))

    async def customer(self, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        cid = req.params["customer_id"]
        cust = await self.call(signed, "levy.v1.CustomerService.GetCustomer",
                               customers_pb2.GetCustomerRequest(customer_id=cid))
        certs: list[dict[str, Any]] = []
        if signed.admin:
            listing = await self.call(signed, "levy.v1.OrganizationService.ListExemptionCertificates",
                                      organization_pb2.ListExemptionCertificatesRequest(customer_id=cid, limit=1000))
            certs = [_plain(c) for c in listing.data]
            async with self.services.uow() as conn:
                docs = await people.documents_of(conn, signed.user.organization_id, [c["id"] for c in certs])
            for c in certs:
                c["document"] = docs.get(c["id"])
        return self._page(status, "customer.html", signed, customer=_plain(cust), certificates=certs,
                          errors=errors or {}, form=req.form, exemption_types=EXEMPTION_TYPES,
                          certificate_statuses=CERTIFICATE_STATUSES, max_upload=self.config.console_max_upload_bytes)

    async def customer_restore(self, req: Request, signed: Signed) -> Response:
        cid = req.params["customer_id"]
        try:
            await self.audited(signed, "levy.v1.OrganizationService.RestoreCustomer",
                               organization_pb2.RestoreCustomerRequest(customer_id=cid), "customer.restored", cid)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot restore", detail=e.detail)
        return redirect(f"{self.prefix}/customers/{cid}")

    async def certificate_create(self, req: Request, signed: Signed) -> Response:
        cid = req.params["customer_id"]
        f = req.form
        cert = organization_pb2.ExemptionCertificate()
        for name in ("jurisdiction", "exemption_type", "status", "starts_at", "expires_at"):
            if f.get(name, "").strip():
                setattr(cert, name, f[name].strip())
        upload = req.files.get("document")
        org = signed.user.organization_id

        async def store_document(conn: Any, created: Any) -> None:
            if upload is not None:
                await people.attach_document(conn, org, cid, created.id, upload.filename, upload.data,
                                             self.config.console_max_upload_bytes)

        try:
            if upload is not None:  # before anything is written: a bad file is the form's error
                rules.document_type(upload.data, self.config.console_max_upload_bytes)
            created = await self.audited(
                signed, "levy.v1.OrganizationService.CreateExemptionCertificate",
                organization_pb2.CreateExemptionCertificateRequest(customer_id=cid, certificate=cert),
                "certificate.attached", "", f"{cid}: {cert.jurisdiction} {cert.exemption_type}"
                + (f", document {upload.filename[:100]}" if upload else ""), after=store_document)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.customer(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/customers/{cid}#{created.id}")

    async def certificate_review(self, req: Request, signed: Signed) -> Response:
        cid, cert_id = req.params["customer_id"], req.params["certificate_id"]
        status = req.form.get("status", "")
        try:
            await self.audited(
                signed, "levy.v1.OrganizationService.UpdateExemptionCertificate",
                organization_pb2.UpdateExemptionCertificateRequest(
                    customer_id=cid, certificate_id=cert_id,
                    certificate=organization_pb2.ExemptionCertificate(status=status)),
                f"certificate.{status if status in ('valid', 'rejected') else 'reviewed'}", cert_id, status)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.customer(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/customers/{cid}#{cert_id}")

    async def certificate_document(self, req: Request, signed: Signed) -> Response:
        self._admin_only(signed)  # as the API's certificate methods
        async with self.services.uow() as conn:
            doc = await people.document(conn, signed.user.organization_id, req.params["customer_id"],
                                        req.params["certificate_id"])
        resp = Response(200, bytes(doc["data"]), str(doc["content_type"]))  # type: ignore[arg-type]
        resp.headers.append((b"content-disposition", f'attachment; filename="{doc["filename"]}"'.encode()))
        return resp

    # ------------------------------------------------------------------ organization: settings, registrations

    async def organization(self, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                           status: int = 200, saved: bool = False) -> Response:
        settings = await self.call(signed, "levy.v1.OrganizationService.GetOrganizationSettings",
                                   organization_pb2.GetOrganizationSettingsRequest())
        regs = await self.call(signed, "levy.v1.OrganizationService.ListRegistrations",
                               organization_pb2.ListRegistrationsRequest(limit=1000))
        return self._page(status, "organization.html", signed, settings=_plain(settings),
                          registrations=[_plain(r) for r in regs.data], errors=errors or {}, saved=saved,
                          treatments=CERTIFICATE_TREATMENTS, form=req.form)

    async def settings_update(self, req: Request, signed: Signed) -> Response:
        f = req.form
        codes = [c.strip() for c in f.get("default_tax_codes", "").replace("\n", ",").split(",") if c.strip()]
        currencies = _filing_currencies(f.get("filing_currencies", ""))
        body = organization_pb2.OrganizationSettings(
            name=f.get("name", "").strip(), default_tax_codes=codes,
            exemption_management=f.get("exemption_management") == "on",
            certificate_treatment=f.get("certificate_treatment", ""), filing_currencies=currencies)
        mask = ["name", "default_tax_codes", "exemption_management", "certificate_treatment", "filing_currencies"]
        request = organization_pb2.UpdateOrganizationSettingsRequest(settings=body)
        request.update_mask.paths.extend(mask)
        try:
            await self.audited(signed, "levy.v1.OrganizationService.UpdateOrganizationSettings", request,
                               "settings.changed", signed.user.organization_id,
                               f"name={body.name}; default_tax_codes={','.join(codes)}; "
                               f"exemption_management={body.exemption_management}; "
                               f"certificate_treatment={body.certificate_treatment}; "
                               f"filing_currencies={','.join(f'{k}={v}' for k, v in sorted(currencies.items()))}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.organization(req, signed, errors=_errors(e), status=422)
        return await self.organization(req, signed, saved=True)

    async def registration_create(self, req: Request, signed: Signed) -> Response:
        f = req.form
        reg = organization_pb2.Registration()
        for name in ("jurisdiction", "registration_number", "effective_from", "effective_to"):
            if f.get(name, "").strip():
                setattr(reg, name, f[name].strip())
        try:
            await self.audited(signed, "levy.v1.OrganizationService.CreateRegistration",
                               organization_pb2.CreateRegistrationRequest(registration=reg),
                               "registration.added", "", f"{reg.jurisdiction} from {reg.effective_from}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.organization(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/organization#registrations")

    async def registration_remove(self, req: Request, signed: Signed) -> Response:
        reg_id = req.params["registration_id"]
        await self.audited(signed, "levy.v1.OrganizationService.DeleteRegistration",
                           organization_pb2.DeleteRegistrationRequest(registration_id=reg_id),
                           "registration.removed", reg_id)
        return redirect(f"{self.prefix}/organization#registrations")

    # ------------------------------------------------------------------ confirmations

    #: Destructive actions are asked for first: their buttons GET a page that names the
    #: action and its consequence and POSTs it (no JavaScript needed). By the action's path:
    #: the question, its consequence, the button and where Cancel leads.
    CONFIRMATIONS: dict[str, tuple[str, str, str, str]] = {
        "keys": ("Revoke the API key {label}?",
                 "Calls with it are refused from then on; a revoked key cannot be restored.", "Revoke", "/keys"),
        "organization": ("Remove the registration {label}?",
                         "Calculations stop charging tax for it.", "Remove registration",
                         "/organization#registrations"),
        "returns": ("Mark the return {label} as filed?",
                    "Its transactions become filed; the console cannot undo this.", "Mark as filed", "/returns/{id}"),
        "users": ("Remove {label}?", "Their sessions end at once; they can be invited again.", "Remove", "/users"),
        "products": ("Archive the product {label}?",
                     "Calculations and transactions that name it as a preset are refused from then on, and it "
                     "cannot be edited; there is no unarchive. Transactions already recorded keep their tax.",
                     "Archive product", "/products/{id}"),
        "locations": ("Archive the location {label}?",
                      "It stops being a ship-from location (and the default, if it was one) until it is "
                      "unarchived.", "Archive location", "/locations/{id}"),
        # Two actions of one page: keyed by the path's first and last segments.
        "webhooks/delete": ("Delete the webhook endpoint {label}?",
                            "No more events are sent to it and its delivery log is deleted with it; this cannot "
                            "be undone.", "Delete endpoint", "/webhooks/{id}"),
        "webhooks/rotate": ("Rotate the signing secret of {label}?",
                            "The old secret stops signing at once: deliveries from now on are signed with the new "
                            "one, shown once on the next page.", "Rotate secret", "/webhooks/{id}"),
    }

    async def confirm(self, req: Request, signed: Signed) -> Response:
        if not signed.may_write:
            raise PermissionDenied("this role cannot change anything")
        segments = req.path.split("/")
        question, consequence, button, back = (self.CONFIRMATIONS.get(f"{segments[1]}/{segments[-1]}")
                                               or self.CONFIRMATIONS[segments[1]])
        (object_id,) = req.params.values()
        label = req.query.get("label", "").strip()[:200]
        return self._page(200, "confirm.html", signed, question=question.format(
            label=f"“{label}” ({object_id})" if label else object_id), consequence=consequence,
            button=button, action=req.path, back=back.format(id=object_id))

    # ------------------------------------------------------------------ transactions

    #: The search form's fields (``levy.domain.transactions.rules.parse_search``'s arguments).
    TRANSACTION_FILTERS = ("status", "type", "reference", "customer", "state", "date_from", "date_to")

    def _search_filters(self, req: Request) -> dict[str, str]:
        return {name: req.query.get(name, "").strip()[:255] for name in self.TRANSACTION_FILTERS}

    async def transactions(self, req: Request, signed: Signed) -> Response:
        filters = self._search_filters(req)
        after = req.query.get("after", "")[:64] or None
        org = signed.user.organization_id
        count = 0
        try:
            search = parse_search(**filters)
            async with self.services.uow() as conn:
                records, more = await transactions_app.search_transactions(conn, org, search,
                                                                           page_request(50, after))
                items = await exports.transaction_summaries(conn, org, records)
                count = await exports.count_transactions(conn, org, search)
            error = ""
        except ValidationFailed as e:
            items, more, error = [], False, "; ".join(item.detail for item in e.items)
        kept = {k: v for k, v in filters.items() if v}
        next_query = urlencode({**kept, "after": items[-1]["id"]}) if more else ""
        return self._page(422 if error else 200, "transactions.html", signed, transactions=items, more=more,
                          count=count, first_page=after is None, filters=filters, error=error,
                          next_query=next_query, export_query=urlencode(kept), statuses=STATUSES, types=TYPES)

    async def transactions_export(self, req: Request, signed: Signed) -> Response:
        """The transactions the list's filters find, every page, as a streamed CSV file."""
        try:
            search = parse_search(**self._search_filters(req))
        except ValidationFailed as e:
            return self._page(422, "error.html", signed, title="Cannot export",
                              detail="; ".join(item.detail for item in e.items))
        return _csv_download("transactions.csv",
                             exports.transactions_csv(self.services.uow, signed.user.organization_id, search))

    async def transaction(self, req: Request, signed: Signed) -> Response:
        async with self.services.uow() as conn:
            rec = await transactions_app.get_transaction(conn, signed.user.organization_id,
                                                         req.params["transaction_id"])
        # The stored customer each line matched (by line id; the API shows only its preset).
        customers = {line.id: line.customer_id for line in rec.lines if line.customer_id}
        return self._page(200, "transaction.html", signed, t=_plain(transaction_message(rec)), customers=customers)

    # ------------------------------------------------------------------ returns

    async def returns(self, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                      status: int = 200) -> Response:
        listing = await self.call(signed, "levy.v1.FilingService.ListFilings",
                                  filings_pb2.ListFilingsRequest(limit=100))
        return self._page(status, "returns.html", signed, filings=[_plain(f) for f in listing.data],
                          errors=errors or {}, form=req.form)

    async def return_prepare(self, req: Request, signed: Signed) -> Response:
        f = req.form
        filing = filings_pb2.Filing()
        for name in ("jurisdiction", "period_start", "period_end"):
            if f.get(name, "").strip():
                setattr(filing, name, f[name].strip())
        try:
            created = await self.audited(signed, "levy.v1.FilingService.CreateFiling",
                                         filings_pb2.CreateFilingRequest(filing=filing), "return.prepared", "",
                                         f"{filing.jurisdiction} {filing.period_start}..{filing.period_end}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.returns(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/returns/{created.id}")

    async def return_detail(self, req: Request, signed: Signed, *, error: str = "", status: int = 200) -> Response:
        fid = req.params["filing_id"]
        filing = await self.call(signed, "levy.v1.FilingService.GetFiling", filings_pb2.GetFilingRequest(filing_id=fid))
        # The transactions on the return, a page of them (issue 37), each linking to its own page.
        request = filings_pb2.ListFilingTransactionsRequest(filing_id=fid, limit=self.RETURN_TRANSACTIONS)
        if req.query.get("after"):
            request.starting_after = req.query["after"][:255]
        try:
            listing = await self.call(signed, "levy.v1.FilingService.ListFilingTransactions", request)
            entries, more = [_plain(e) for e in listing.data], listing.has_more
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            entries, more, error, status = [], False, error or e.detail, 422
        next_query = urlencode({"after": entries[-1]["transaction_id"]}) if more else ""
        return self._page(status, "return.html", signed, f=_plain(filing), error=error, entries=entries,
                          next_query=next_query)

    #: Transactions per page of a return's page.
    RETURN_TRANSACTIONS = 100

    async def return_file(self, req: Request, signed: Signed) -> Response:
        fid = req.params["filing_id"]
        try:
            await self.audited(signed, "levy.v1.FilingService.UpdateFiling",
                               filings_pb2.UpdateFilingRequest(filing_id=fid,
                                                               filing=filings_pb2.Filing(status="filed")),
                               "return.filed", fid)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.return_detail(req, signed, error=e.detail, status=422)
        return redirect(f"{self.prefix}/returns/{fid}")

    async def return_export(self, req: Request, signed: Signed) -> Response:
        fid = req.params["filing_id"]
        request = filings_pb2.ExportFilingRequest(filing_id=fid)
        name = fid
        if req.query.get("file"):  # the second file: the return's transactions
            request.file = req.query["file"][:32]
            name = f"{fid}-{request.file}"
        body = await self.call(signed, "levy.v1.FilingService.ExportFiling", request)
        resp = Response(200, body.data, body.content_type)
        resp.headers.append((b"content-disposition", f'attachment; filename="{name}.csv"'.encode()))
        return resp

    #: The most calendar months the liability page charts (one report call each).
    MONTHS_CHARTED = 36

    @staticmethod
    def _liability_request(req: Request) -> filings_pb2.GetLiabilityReportRequest:
        """The report's range from the query; the last 12 calendar months up to today (UTC) by default."""
        request = filings_pb2.GetLiabilityReportRequest()
        start, end = trailing_months(datetime.now(UTC).date())
        values = {"from": start.isoformat(), "to": end.isoformat()}
        for name in ("from", "to"):
            if req.query.get(name, "").strip():
                values[name] = req.query[name].strip()[:10]
            setattr(request, name, values[name])
        return request

    async def liability_export(self, req: Request, signed: Signed) -> Response:
        """The liability report of the range as a CSV file (the API's figures, in major units)."""
        try:
            report = _plain(await self.call(signed, "levy.v1.FilingService.GetLiabilityReport",
                                            self._liability_request(req)))
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot export the report", detail=e.detail)
        return _csv_download(f"liability-{report.get('from', '')}-{report.get('to', '')}.csv",
                             exports.liability_csv(report))

    async def liability(self, req: Request, signed: Signed) -> Response:
        try:
            report = _plain(await self.call(signed, "levy.v1.FilingService.GetLiabilityReport",
                                            self._liability_request(req)))
            months = await self._liability_by_month(signed, date.fromisoformat(report["from"]),
                                                    date.fromisoformat(report["to"]))
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot show the report", detail=e.detail)
        states = report.get("state_totals", [])
        chart = _bars([(s.get("jurisdiction_name") or s.get("jurisdiction", ""), s.get("filing_tax_amount"))
                       for s in states])
        month_chart = _bars([(m["label"], m["amount"]) for m in months or []], pitch=16, bar=12)
        return self._page(200, "liability.html", signed, report=report, states=states, chart=chart,
                          months=months, month_chart=month_chart, months_charted=self.MONTHS_CHARTED)

    async def _liability_by_month(self, signed: Signed, start: date, end: date) -> list[dict[str, Any]] | None:
        """Tax to file in each calendar month of [start, end] (the first and last clipped to
        the range): the API's liability report once per month, its state totals summed.
        None past :attr:`MONTHS_CHARTED` months."""
        spans = calendar_months(start, end)
        if len(spans) > self.MONTHS_CHARTED:
            return None
        out = []
        for first, last in spans:
            request = filings_pb2.GetLiabilityReportRequest(to=last.isoformat())
            setattr(request, "from", first.isoformat())
            report = await self.call(signed, "levy.v1.FilingService.GetLiabilityReport", request)
            out.append({"label": first.strftime("%b %Y"), "month": first.strftime("%Y-%m"),
                        "from": first.isoformat(), "to": last.isoformat(),
                        "amount": sum(int(s.filing_tax_amount or 0) for s in report.state_totals)})
        return out

    # ------------------------------------------------------------------ calculator

    CALCULATOR_LINES = 3
    ADDRESS_FIELDS = ("line1", "city", "state", "postal_code", "country")

    async def calculator(self, req: Request, signed: Signed, *, result: dict[str, Any] | None = None,
                         errors: dict[str, str] | None = None, status: int = 200) -> Response:
        return self._page(status, "calculator.html", signed, result=result, errors=errors or {}, form=req.form,
                          lines=range(1, self.CALCULATOR_LINES + 1))

    async def calculate(self, req: Request, signed: Signed) -> Response:
        f = {k: v.strip() for k, v in req.form.items()}
        request = calculations_pb2.CreateCalculationRequest(currency="USD")
        address = calculations_pb2.Address(**{k: f[k] for k in self.ADDRESS_FIELDS if f.get(k)})
        for n in range(1, self.CALCULATOR_LINES + 1):
            if not (f.get(f"price_{n}") or f.get(f"quantity_{n}")):
                continue
            line = request.line_items.add(id=str(n))
            for name in ("quantity", "unit_price"):
                value = f.get(f"{'price' if name == 'unit_price' else name}_{n}")
                if value:
                    setattr(line, name, value)
            codes = [c.strip() for c in f.get(f"codes_{n}", "").split(",") if c.strip()]
            line.product.tax_attributes.extend(codes)
            line.customer.address.CopyFrom(address)
        try:
            result = _plain(await self.call(signed, "levy.v1.CalculationService.CreateCalculation", request))
        except LevyError as e:
            if isinstance(e, PermissionDenied):
                raise
            return await self.calculator(req, signed, errors=_errors(e), status=422)
        return await self.calculator(req, signed, result=result)

    # ------------------------------------------------------------------ nexus

    async def nexus(self, req: Request, signed: Signed) -> Response:
        request = filings_pb2.GetNexusReportRequest()
        as_of = req.query.get("as_of", "").strip()
        if as_of:
            request.as_of = as_of
        try:
            report = await self.call(signed, "levy.v1.FilingService.GetNexusReport", request)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot show nexus", detail=e.detail)
        states = [_plain(s) for s in report.states]
        approaching = Decimal(report.approaching_share)
        for s in states:
            share = Decimal(s.get("threshold_share") or "0")
            s["percent"] = int(min(share * 100, Decimal(100)))
            s["percent_text"] = f"{share * 100:.0f} %"
            s["standing"] = nexus_rules.standing(share, exceeded=bool(s.get("exceeded")),
                                                 needs_registration=bool(s.get("needs_registration")),
                                                 approaching=approaching)
            s["period_label"] = nexus_rules.PERIOD_LABELS.get(s.get("measurement_period", ""), "")
            # Issue 37: the currencies of the counted sales that were converted to the filing currency.
            s["converted_currencies"] = sorted({c["currency"] for c in s.get("converted_transactions", ())})
        return self._page(200, "nexus.html", signed, as_of=report.as_of, states=states,
                          approaching=f"{approaching * 100:.0f} %")

    async def certificate_upload(self, req: Request, signed: Signed) -> Response:
        """Attach or replace the document of a certificate on file."""
        self._admin_only(signed)  # as the API's certificate methods
        cid, cert_id = req.params["customer_id"], req.params["certificate_id"]
        upload = req.files.get("document")
        try:
            async with self.services.uow(write=True) as conn:
                await people.attach_document(conn, signed.user.organization_id, cid, cert_id,
                                             upload.filename if upload else "", upload.data if upload else b"",
                                             self.config.console_max_upload_bytes)
                await people.record(conn, signed.user, "certificate.document_attached", cert_id,
                                    upload.filename[:100] if upload else "")
        except LevyError as e:
            if isinstance(e, NotFound):
                raise
            return await self.customer(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/customers/{cid}#{cert_id}")

    # ------------------------------------------------------------------ audit log, users (admins)

    def _admin_only(self, signed: Signed) -> None:
        if not signed.admin:
            raise PermissionDenied("admins only")

    async def audit(self, req: Request, signed: Signed) -> Response:
        self._admin_only(signed)
        async with self.services.uow() as conn:
            entries, more = await people.audit_page(conn, signed.user.organization_id, req.query.get("before"))
        return self._page(200, "audit.html", signed, entries=entries, more=more)

    async def users(self, req: Request, signed: Signed, *, invited: tuple[str, str] | None = None,
                    errors: dict[str, str] | None = None, status: int = 200) -> Response:
        self._admin_only(signed)
        async with self.services.uow() as conn:
            users = await people.list_users(conn, signed.user.organization_id)
        return self._page(status, "users.html", signed, users=users, invited=invited, errors=errors or {},
                          roles=list(rules.ROLES), default_role=rules.INVITE_DEFAULT_ROLE, form=req.form)

    async def user_invite(self, req: Request, signed: Signed) -> Response:
        self._admin_only(signed)
        try:
            async with self.services.uow(write=True) as conn:
                user, one_time = await people.create_user(conn, signed.user.organization_id,
                                                          req.form.get("email", ""), req.form.get("role", ""))
                await people.record(conn, signed.user, "user.invited", user.id, f"{user.email} ({user.role})")
        except LevyError as e:
            return await self.users(req, signed, errors=_errors(e), status=422)
        return await self.users(req, signed, invited=(user.email, one_time or ""), status=201)

    async def user_remove(self, req: Request, signed: Signed) -> Response:
        self._admin_only(signed)
        try:
            async with self.services.uow(write=True) as conn:
                user = await people.remove_user(conn, signed.user.organization_id, req.params["user_id"],
                                                acting=signed.user)
                await people.record(conn, signed.user, "user.removed", user.id, user.email)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.users(req, signed, errors=_errors(e), status=422)
        return redirect(f"{self.prefix}/users")


def _errors(e: LevyError) -> dict[str, str]:
    """Field errors by field name (the last segment of each JSON pointer); '' for the form."""
    out: dict[str, str] = {}
    for item in e.items:
        name = (item.pointer or "").rstrip("/").rsplit("/", 1)[-1]
        out.setdefault(name, item.detail)
    return out


def _query(raw: bytes) -> list[tuple[str, str]]:
    from urllib.parse import parse_qsl

    return parse_qsl(raw.decode("latin-1"), keep_blank_values=True)


def _when(value: Any) -> str:
    """A timestamp as 'YYYY-MM-DD HH:MM UTC' (RFC 3339 strings and datetimes)."""
    if not value:
        return "—"
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text[:16].replace("T", " ") + " UTC" if len(text) >= 16 else text


def _bars(items: list[tuple[str, Any]], *, pitch: int = 28, bar: int = 20) -> dict[str, Any]:
    """Geometry of a horizontal bar chart of (label, amount in minor units) items, an SVG
    drawn by the template: one row of ``pitch`` units per item, bar lengths out of 100
    relative to the largest amount (a negative amount draws no bar; its value is shown)."""
    amounts = [int(a or 0) for _, a in items]
    top = max((max(0, a) for a in amounts), default=0) or 1
    return {"height": pitch * len(items) + 8,
            "bars": [{"label": label, "amount": a, "length": round(max(0, a) * 100 / top, 2), "y": pitch * i + 4,
                      "height": bar, "text_y": pitch * i + 4 + bar * 3 // 4}
                     for i, ((label, _), a) in enumerate(zip(items, amounts))]}


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


def _csv_download(filename: str, lines: AsyncIterator[bytes]) -> Response:
    """A streamed CSV file, offered as a download."""
    resp = Response(200, content_type="text/csv; charset=utf-8", stream=lines)
    resp.headers.append((b"content-disposition", f'attachment; filename="{filename}"'.encode()))
    return resp


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


def _filing_currencies(text: str) -> dict[str, str]:
    """``"US=USD, GB=GBP"`` (commas or lines) from the organization form: country -> currency; a
    pair without ``=`` keeps an empty currency, which the API refuses at its country."""
    pairs = (p.strip() for p in text.replace("\n", ",").split(","))
    return {k.strip().upper(): v.strip().upper() for k, _, v in (p.partition("=") for p in pairs if p)}
