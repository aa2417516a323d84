"""The people of the organization (invited, removed) and the audit log, for admins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from levy.console.helpers import Signed, admin_only, errors_of
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, confirmed, route
from levy.domain import console_users as rules
from levy.domain.errors import LevyError, NotFound, PermissionDenied

if TYPE_CHECKING:
    from levy.console.app import Console


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/audit", c.audit),
        route("GET", "/users", c.users),
        route("POST", "/users", c.user_invite, writes=True),
        *confirmed("/users/{user_id}/remove", c.user_remove, c.confirm),
    ]


class PeoplePages:
    async def audit(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        entries, more = await self.service.audit_page(signed.user.organization_id, req.query.get("before"))
        return self._page(200, "audit.html", signed, entries=entries, more=more)

    async def users(self: Console, req: Request, signed: Signed, *, invited: tuple[str, str] | None = None,
                    errors: dict[str, str] | None = None, status: int = 200) -> Response:
        admin_only(signed)
        users = await self.service.users(signed.user.organization_id)
        return self._page(status, "users.html", signed, users=users, invited=invited, errors=errors or {},
                          roles=list(rules.ROLES), default_role=rules.INVITE_DEFAULT_ROLE, form=req.form)

    async def user_invite(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        try:
            user, one_time = await self.service.invite_user(signed.user, req.form.get("email", ""),
                                                            req.form.get("role", ""))
        except LevyError as e:
            return await self.users(req, signed, errors=errors_of(e), status=422)
        return await self.users(req, signed, invited=(user.email, one_time or ""), status=201)

    async def user_remove(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)
        try:
            await self.service.remove_user(signed.user, req.params["user_id"])
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.users(req, signed, errors=errors_of(e), status=422)
        return redirect(self.url_for("users"))
