"""The developers' page: API keys (a key's secret shown once), created and revoked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from levy.console.helpers import Signed, errors_of, plain
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, confirmed, route
from levy.domain.errors import LevyError, PermissionDenied
from levy.v1 import organization_pb2

if TYPE_CHECKING:
    from levy.console.app import Console


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/keys", c.keys),
        route("POST", "/keys", c.key_create, writes=True),
        *confirmed("/keys/{key_id}/revoke", c.key_revoke, c.confirm),
    ]


class KeyPages:
    async def keys(self: Console, req: Request, signed: Signed, *, created: dict[str, Any] | None = None,
                   errors: dict[str, str] | None = None, status: int = 200) -> Response:
        listing = await self.call(signed, "levy.v1.OrganizationService.ListApiKeys",
                                  organization_pb2.ListApiKeysRequest(limit=1000))
        return self._page(status, "keys.html", signed, keys=[plain(k) for k in listing.data], created=created,
                          errors=errors or {}, form=req.form)

    async def key_create(self: Console, req: Request, signed: Signed) -> Response:
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
            return await self.keys(req, signed, errors=errors_of(e), status=422)
        # The secret is in this response only: never stored, never shown again.
        return await self.keys(req, signed, created=plain(key), status=201)

    async def key_revoke(self: Console, req: Request, signed: Signed) -> Response:
        key_id = req.params["key_id"]
        await self.audited(signed, "levy.v1.OrganizationService.DeleteApiKey",
                           organization_pb2.DeleteApiKeyRequest(key_id=key_id), "api_key.revoked", key_id)
        # After the commit, so that no request re-caches the key as active meanwhile.
        self.services.authenticator.forget(key_id)
        return redirect(self.url_for("keys"))
