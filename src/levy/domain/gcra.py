"""GCRA (generic cell rate algorithm): the rate-limit rule, pure.

A limit is ``rate`` requests per second with a ``burst`` ceiling. The state of
one subject (an API key, a client address) is its *theoretical arrival time*
(TAT). A request at ``now`` is allowed when ``max(tat, now) + interval - burst
* interval <= now``; it then moves the TAT one interval forward. This is a
token bucket of ``burst`` tokens refilled at ``rate`` per second, stored as one
number. The Redis limiter runs the same arithmetic in a Lua script
(``levy.app.ratelimit``), in integer microseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limit:
    rate: float  # requests per second (> 0)
    burst: int  # the ceiling: requests allowed at once (>= 1)

    @property
    def interval_us(self) -> int:
        """Microseconds between two requests at the sustained rate."""
        return max(1, round(1_000_000 / self.rate))


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int  # X-RateLimit-Limit
    remaining: int  # X-RateLimit-Remaining
    retry_after_us: int  # 0 when allowed

    @property
    def retry_after_seconds(self) -> int:
        """Retry-After: whole seconds, at least 1."""
        return max(1, math.ceil(self.retry_after_us / 1_000_000))


def gcra(tat_us: int | None, now_us: int, limit: Limit) -> tuple[Decision, int | None]:
    """(decision, new TAT to store or None when nothing changes)."""
    interval = limit.interval_us
    tat = now_us if tat_us is None or tat_us < now_us else tat_us
    new_tat = tat + interval
    allow_at = new_tat - limit.burst * interval
    if now_us < allow_at:
        return Decision(False, limit.burst, 0, allow_at - now_us), None
    return Decision(True, limit.burst, (now_us - allow_at) // interval, 0), new_tat
