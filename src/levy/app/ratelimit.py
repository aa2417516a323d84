"""Rate limiters: per API key, and per client address for failed authentication.

In-process (one dict of TATs) by default; with ``LEVY_REDIS_URL`` the state is
in Redis and shared by every replica, one atomic ``EVALSHA`` per check (the
GCRA of ``levy.domain.gcra`` in Lua, on Redis's clock so that replicas'
clocks do not matter). If Redis cannot be reached the request is allowed (fail
open: an outage of the limiter must not become an outage of tax calculation);
each such failure is logged and counted in ``levy_rate_limiter_errors_total``.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

from levy.domain.gcra import Decision, Limit, gcra

log = logging.getLogger("levy.ratelimit")

# KEYS[1] = state key; ARGV = interval (µs), burst. Returns {allowed, remaining, retry_after_us}.
GCRA_LUA = """
if redis.replicate_commands then pcall(redis.replicate_commands) end
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then
  tat = tonumber(stored)
  if tat < now then tat = now end
end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if now < allow_at then
  return {0, 0, allow_at - now}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.floor((new_tat - now) / 1000) + 1)
return {1, math.floor((now - allow_at) / interval), 0}
"""


class Limiter(Protocol):
    async def hit(self, subject: str, limit: Limit) -> Decision: ...

    async def close(self) -> None: ...


class LocalLimiter:
    """Per-process state: right for one process, or when no Redis is configured."""

    def __init__(self) -> None:
        self._tats: dict[str, int] = {}

    async def hit(self, subject: str, limit: Limit) -> Decision:
        now = time.monotonic_ns() // 1000
        decision, new_tat = gcra(self._tats.get(subject), now, limit)
        if new_tat is not None:
            if len(self._tats) > 100_000:  # drop subjects whose bucket is full again
                self._tats = {k: v for k, v in self._tats.items() if v > now}
            self._tats[subject] = new_tat
        return decision

    async def close(self) -> None:
        return None


class RedisLimiter:
    """State in Redis, shared by every replica: one EVALSHA per check."""

    def __init__(self, url: str, *, prefix: str = "levy:rl:") -> None:
        import redis.asyncio as redis

        self.client: Any = redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        self.script = self.client.register_script(GCRA_LUA)  # EVALSHA, loading the script on NOSCRIPT
        self.prefix = prefix
        self.errors = 0

    async def hit(self, subject: str, limit: Limit) -> Decision:
        try:
            allowed, remaining, retry_us = await self.script(keys=[self.prefix + subject],
                                                             args=[limit.interval_us, limit.burst])
        except Exception as e:  # noqa: BLE001 - fail open, see the module docstring
            self.errors += 1
            from levy.app import metrics

            metrics.LIMITER_ERRORS.inc()
            log.warning("rate limiter unavailable, allowing the request: %s", e)
            return Decision(True, limit.burst, limit.burst, 0)
        return Decision(bool(allowed), limit.burst, int(remaining), int(retry_us))

    async def close(self) -> None:
        await self.client.aclose()


def create_limiter(redis_url: str) -> Limiter:
    return RedisLimiter(redis_url) if redis_url else LocalLimiter()
