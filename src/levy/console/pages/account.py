"""Signing in and out and changing one's password (every role)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from levy.console.helpers import Signed, errors_of
from levy.console.http import Receive, Request, Response, redirect, same
from levy.console.routing import Route, route
from levy.domain import console_users as rules
from levy.domain.errors import LevyError, RateLimited, Unauthenticated

if TYPE_CHECKING:
    from levy.console.app import Console

SESSION_COOKIE = "levy_session"
SIGN_IN_CSRF_COOKIE = "levy_signin_csrf"
STALE_SIGN_IN = "This form's security token is missing or stale; try again."


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/sign-in", c.sign_in_page, public=True),
        route("POST", "/sign-in", c.sign_in, public=True),
        route("GET", "/", c.home),
        route("POST", "/sign-out", c.sign_out),
        route("GET", "/password", c.password_form),
        route("POST", "/password", c.password_change),
    ]


class AccountPages:
    def _sign_in_form(self: Console, req: Request, *, error: str = "", status: int = 200,
                      email: str = "") -> Response:
        token = req.cookies.get(SIGN_IN_CSRF_COOKIE) or secrets.token_urlsafe(32)
        resp = self._page(status, "sign_in.html", None, error=error, email=email, signin_csrf=token)
        resp.set_cookie(SIGN_IN_CSRF_COOKIE, token, path=self.prefix, max_age=3600,
                        secure=self.config.console_secure_cookies)
        return resp

    async def sign_in_page(self: Console, req: Request, receive: Receive) -> Response:
        return self._sign_in_form(req)

    async def sign_in(self: Console, req: Request, receive: Receive) -> Response:
        if not req.cookies.get(SIGN_IN_CSRF_COOKIE):  # the double-submit cookie, before the body
            return self.unread(self._sign_in_form(req, status=403, error=STALE_SIGN_IN))
        refused = await self._read_form(req, receive, self.FORM_LIMIT)
        if refused is not None:
            return refused
        email = rules.normalize_email(req.form.get("email", ""))
        if not same(req.form.get("csrf_token"), req.cookies.get(SIGN_IN_CSRF_COOKIE)):
            return self._sign_in_form(req, status=403, email=email, error=STALE_SIGN_IN)
        try:
            await self.throttle.check(email, req.peer)
            result = await self.service.sign_in(email, req.form.get("password", ""),
                                                session_hours=self.config.console_session_hours)
        except RateLimited as e:
            resp = self._sign_in_form(req, status=429, email=email, error=e.detail)
            resp.headers.append((b"retry-after", str(e.retry_after).encode()))
            return resp
        except Unauthenticated as e:
            return self._sign_in_form(req, status=401, email=email, error=e.detail)
        resp = redirect(self.url_for("password_form" if result.user.must_change_password else "home"))
        resp.set_cookie(SESSION_COOKIE, result.token, path=self.prefix,
                        max_age=int(self.config.console_session_hours * 3600),
                        secure=self.config.console_secure_cookies)
        return resp

    async def sign_out(self: Console, req: Request, signed: Signed) -> Response:
        await self.service.sign_out(signed.session.id)
        resp = redirect(self.url_for("sign_in_page"))
        resp.set_cookie(SESSION_COOKIE, "", path=self.prefix, max_age=0, secure=self.config.console_secure_cookies)
        return resp

    async def home(self: Console, req: Request, signed: Signed) -> Response:
        return redirect(self.url_for("customers"))

    async def password_form(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                            status: int = 200, done: bool = False) -> Response:
        return self._page(status, "password.html", signed, errors=errors or {}, done=done,
                          minimum=rules.PASSWORD_MIN)

    async def password_change(self: Console, req: Request, signed: Signed) -> Response:
        f = req.form
        try:
            await self.throttle.check_password_change(signed.user.id)
            await self.service.change_password(signed.user, signed.session.id, f.get("current_password", ""),
                                               f.get("new_password", ""), f.get("confirm_password", ""))
        except RateLimited as e:
            resp = await self.password_form(req, signed, errors={"current_password": e.detail}, status=429)
            resp.headers.append((b"retry-after", str(e.retry_after).encode()))
            return resp
        except LevyError as e:
            return await self.password_form(req, signed, errors=errors_of(e), status=422)
        found = await self.service.session_of(req.cookies[SESSION_COOKIE])
        return await self.password_form(req, Signed(found[1], found[0]) if found else signed, done=True)
