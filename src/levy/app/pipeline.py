"""The request pipeline both transports call: one path for every RPC.

concurrency cap -> version -> authentication (failures rate-limited per client
address) -> rate limit per API key -> authorization (admin-only methods) ->
the key's share of the concurrency cap -> field limits -> handler (under the
request timeout). Errors are domain errors
(``levy.domain.errors``); each transport maps them once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import datetime, timezone

from google.protobuf import message

from levy.app import audit, constraints, idempotency, metrics
from levy.app.auth import require_admin
from levy.app.context import CallContext
from levy.app.limits import DeadlineExceeded, Overloaded
from levy.app.ratelimit import Limiter
from levy.app.registry import Handler, MethodInfo
from levy.app.services import AppServices
from levy.domain.errors import NotImplementedYet, RateLimited, Unauthenticated
from levy.domain.gcra import Decision, Limit
from levy.domain.versioning import LATEST, resolve_version

log = logging.getLogger("levy.pipeline")


class Pipeline:
    def __init__(self, services: AppServices, handlers: Mapping[str, Handler], *, limiter: Limiter) -> None:
        self.services = services
        self.auth = services.authenticator
        self.handlers = handlers
        self.limiter = limiter
        config = services.config
        self.key_limit = (
            Limit(config.rate_limit_per_second, max(1, config.rate_limit_burst)) if config.rate_limit_per_second > 0 else None
        )
        per_minute = config.auth_failure_limit_per_minute
        self.auth_failure_limit = Limit(per_minute / 60.0, per_minute) if per_minute > 0 else None
        # Client addresses over the failure limit, until when (monotonic): refused before their key is read.
        self._blocked: dict[str, float] = {}
        self.in_flight = 0
        self.max_in_flight = config.max_concurrent_requests
        # Requests one API key may run at once: its share of the process's places (0 = no cap).
        self.max_per_key = max(1, int(self.max_in_flight * config.key_concurrency_share)) if (
            self.max_in_flight > 0 and 0 < config.key_concurrency_share < 1) else 0
        self.in_flight_by_key: dict[str, int] = {}

    def context(self, *, request_id: str, transport: str) -> CallContext:
        return CallContext(services=self.services, request_id=request_id, transport=transport)

    @contextlib.contextmanager
    def slot(self, ctx: CallContext) -> Iterator[None]:
        """One of the process's LEVY_MAX_CONCURRENT_REQUESTS places, or 503 / RESOURCE_EXHAUSTED at once."""
        if self.max_in_flight > 0 and self.in_flight >= self.max_in_flight:
            metrics.OVERLOADED.labels("concurrency").inc()
            ctx.response_headers["retry-after"] = "1"
            raise Overloaded(
                f"The server is handling its maximum of {self.max_in_flight} concurrent requests; retry shortly."
            )
        self.in_flight += 1
        metrics.IN_FLIGHT.inc()
        try:
            yield
        finally:
            self.in_flight -= 1
            metrics.IN_FLIGHT.dec()
            metrics.observe_pool(self.services.engine)

    @contextlib.contextmanager
    def key_share(self, ctx: CallContext) -> Iterator[None]:
        """One of the places of the caller's API key (LEVY_KEY_CONCURRENCY_SHARE of the process's), or
        503 / RESOURCE_EXHAUSTED at once: no single key can take every place."""
        key_id = ctx.key.id if ctx.key is not None and self.max_per_key else None
        if key_id is None:
            yield
            return
        held = self.in_flight_by_key.get(key_id, 0)
        if held >= self.max_per_key:
            metrics.OVERLOADED.labels("key_share").inc()
            ctx.response_headers["retry-after"] = "1"
            raise Overloaded(
                f"This API key is running its maximum of {self.max_per_key} concurrent requests "
                f"(its share of the server's {self.max_in_flight}); retry shortly."
            )
        self.in_flight_by_key[key_id] = held + 1
        try:
            yield
        finally:
            left = self.in_flight_by_key[key_id] - 1
            if left:
                self.in_flight_by_key[key_id] = left
            else:
                del self.in_flight_by_key[key_id]

    async def invoke(
        self, method: MethodInfo, request: message.Message, ctx: CallContext, *, peer: str = "",
        deadline: float | None = None,
    ) -> message.Message:
        """Admit the call, then run it (the gRPC path)."""
        await self.admit(method, ctx, peer=peer)
        return await self.run(method, request, ctx, deadline=deadline)

    async def admit(self, method: MethodInfo, ctx: CallContext, *, peer: str = "") -> None:
        """Version, authentication, rate limit and authorization: before any input
        is read, so that an unauthenticated caller learns nothing about validation."""
        header = ctx.service_version_header
        ctx.version = resolve_version(header, datetime.now(timezone.utc).date()) if header else LATEST
        if not method.policy.public:
            ctx.key = await self._authenticate(ctx, peer)
            if self.key_limit is not None:
                decision = await self.limiter.hit("key:" + ctx.key.id, self.key_limit)
                self._check(ctx, decision, "api_key", "the rate limit of this API key")
            if method.policy.admin_only:
                require_admin(ctx.key)

    def admit_principal(self, method: MethodInfo, ctx: CallContext, principal) -> None:  # type: ignore[no-untyped-def]
        """Admit a call of the web console, whose user signed in with a session
        instead of presenting an API key: the user's principal stands where the key
        would (its organization, its admin rights), and the same authorization applies."""
        ctx.version = LATEST
        ctx.key = principal
        if method.policy.admin_only:
            require_admin(principal)

    async def _authenticate(self, ctx: CallContext, peer: str):  # type: ignore[no-untyped-def]
        limit = self.auth_failure_limit
        if limit is not None and peer:
            until = self._blocked.get(peer)
            if until is not None:
                wait = until - time.monotonic()
                if wait > 0:
                    self._check(ctx, Decision(False, limit.burst, 0, int(wait * 1_000_000)), "auth_failures",
                                "the limit of failed authentications from this address")
                del self._blocked[peer]
        try:
            return await self.auth.authenticate(ctx.api_key)
        except Unauthenticated:
            if limit is None or not peer:
                raise
            decision = await self.limiter.hit("authfail:" + peer, limit)
            if not decision.allowed:
                if len(self._blocked) > 10_000:
                    self._blocked.clear()
                self._blocked[peer] = time.monotonic() + decision.retry_after_us / 1_000_000
                self._check(ctx, decision, "auth_failures", "the limit of failed authentications from this address")
            raise

    @staticmethod
    def _check(ctx: CallContext, decision: Decision, kind: str, what: str) -> None:
        """Rate-limit headers on the response; 429 when the decision refuses."""
        ctx.response_headers["x-ratelimit-limit"] = str(decision.limit)
        ctx.response_headers["x-ratelimit-remaining"] = str(decision.remaining)
        if decision.allowed:
            return
        retry = decision.retry_after_seconds
        ctx.response_headers["retry-after"] = str(retry)
        metrics.RATE_LIMITED.labels(kind).inc()
        raise RateLimited(
            f"Too many requests: over {what} ({decision.limit} requests at once). Retry after {retry} second(s).",
            retry_after=retry,
            limit=decision.limit,
            remaining=0,
        )

    async def run(
        self, method: MethodInfo, request: message.Message, ctx: CallContext, *, deadline: float | None = None
    ) -> message.Message:
        """The key's share of the concurrency places, field limits, then the handler,
        cancelled after the request timeout (or the caller's ``deadline`` in seconds,
        when sooner)."""
        with self.key_share(ctx):
            return await self._run(method, request, ctx, deadline)

    async def _run(
        self, method: MethodInfo, request: message.Message, ctx: CallContext, deadline: float | None
    ) -> message.Message:
        body = method.http.body
        target = getattr(request, body) if body and body != "*" else request
        constraints.check(target, ctx.item_errors)
        if target is not request:
            constraints.check_outside_body(request, body)
        if ctx.audit is None and ctx.transport != "console" and ctx.key is not None and method.http_method != "GET":
            ctx.audit = audit.note_for(method, request, ctx.key, ctx.transport)  # the console records its own
        handler = self.handlers.get(method.full_name)
        if handler is None:
            raise NotImplementedYet(f"{method.http_method} {method.http_path} ({method.name}) is not implemented yet.")
        timeout = self.services.config.request_timeout_seconds
        if timeout <= 0:
            timeout = None  # type: ignore[assignment]
        if deadline is not None:
            timeout = deadline if timeout is None else min(timeout, deadline)
        if timeout is None:
            return await idempotency.run(method, request, ctx, handler)
        cm = asyncio.timeout(timeout)
        try:
            async with cm:
                return await idempotency.run(method, request, ctx, handler)
        except TimeoutError:
            if not cm.expired():
                raise
            metrics.OVERLOADED.labels("timeout").inc()
            raise DeadlineExceeded(
                f"The request did not complete within {timeout:g} seconds and was cancelled; nothing was changed."
            ) from None

    def stream(self, method: MethodInfo, request: message.Message, ctx: CallContext) -> AsyncIterator[message.Message]:
        """A server-streaming call, once admitted: field limits, then the handler's messages (no
        request timeout and no concurrency place: it lasts until the caller cancels)."""
        constraints.check(request, ctx.item_errors)
        handler = self.handlers.get(method.full_name)
        if handler is None:
            raise NotImplementedYet(f"{method.name} is not implemented yet.")
        return handler(request, ctx)  # type: ignore[return-value]

    async def close(self) -> None:
        await self.limiter.close()
