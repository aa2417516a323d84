"""The request pipeline both transports call: one path for every RPC.

version -> authentication -> authorization (admin-only methods) -> field limits
-> handler. Errors are domain errors (``levy.domain.errors``); each transport
maps them once.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from google.protobuf import message

from levy.app import constraints, idempotency
from levy.app.auth import Authenticator, require_admin
from levy.app.context import CallContext
from levy.app.registry import MethodInfo, handler_for
from levy.app.services import AppServices
from levy.domain.errors import NotImplementedYet
from levy.domain.versioning import resolve_version

log = logging.getLogger("levy.pipeline")


class Pipeline:
    def __init__(self, services: AppServices) -> None:
        self.services = services
        self.auth = Authenticator(services)
        services.extras["authenticator"] = self.auth

    def context(self, *, request_id: str, transport: str) -> CallContext:
        return CallContext(services=self.services, request_id=request_id, transport=transport)

    async def invoke(self, method: MethodInfo, request: message.Message, ctx: CallContext) -> message.Message:
        """Admit the call, then run it (the gRPC path)."""
        await self.admit(method, ctx)
        return await self.run(method, request, ctx)

    async def admit(self, method: MethodInfo, ctx: CallContext) -> None:
        """Version, authentication and authorization: before any input is read,
        so that an unauthenticated caller learns nothing about validation."""
        ctx.version = resolve_version(ctx.service_version_header, datetime.now(timezone.utc).date())
        if not method.policy.public:
            ctx.key = await self.auth.authenticate(ctx.api_key)
            if method.policy.admin_only:
                require_admin(ctx.key)

    async def run(self, method: MethodInfo, request: message.Message, ctx: CallContext) -> message.Message:
        """Field limits, then the handler."""
        body = method.http.body
        target = getattr(request, body) if body and body != "*" else request
        constraints.check(target, ctx.item_errors)
        handler = handler_for(method.full_name)
        if handler is None:
            raise NotImplementedYet(f"{method.http_method} {method.http_path} ({method.name}) is not implemented yet.")
        return await idempotency.run(method, request, ctx, handler)
