"""Webhook endpoints: the rules of their URLs, event types and retries.

Pure values and checks; the app layer (:mod:`levy.app.webhooks`) stores the endpoints
and the delivery worker (:mod:`levy.app.delivery`) sends the events.

URL policy (SSRF): ``https`` is required unless the operator allows ``http``
(``LEVY_WEBHOOK_ALLOW_HTTP``); a host that is, or resolves to, a loopback, private,
link-local, shared, multicast, reserved or unspecified address is refused unless the
operator allows private addresses (``LEVY_WEBHOOK_ALLOW_PRIVATE``, for tests and
receivers inside the operator's own network). The check runs when an endpoint is
saved (its host as written) and again before every delivery (each address the host
resolves to then), so a name that later resolves inside the network is refused too.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.events import TYPES

#: Event types an endpoint can subscribe to: every event type, and ``*`` for all of them.
ALL = "*"
#: The default retry schedule: the wait before each retry after a failed attempt.
DEFAULT_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])\Z")


@dataclass(frozen=True)
class UrlPolicy:
    allow_http: bool = False
    allow_private: bool = False


def parse_schedule(text: str) -> tuple[timedelta, ...]:
    """``"5s,5m,30m,2h"`` -> the waits before each retry (ValueError when malformed)."""
    out = []
    for part in text.split(","):
        m = _DURATION.match(part.strip())
        if m is None:
            raise ValueError(f"a retry schedule is durations like 5s, 5m, 2h or 1d separated by commas; got {part!r}")
        out.append(timedelta(seconds=float(m.group(1)) * _UNITS[m.group(2)]))
    return tuple(out)


def next_attempt(schedule: Sequence[timedelta], failed_attempts: int, now: datetime) -> datetime | None:
    """When to try again after ``failed_attempts`` failures (1 = the first attempt failed), or None
    when the schedule is exhausted (the delivery has failed for good)."""
    if failed_attempts < 1 or failed_attempts > len(schedule):
        return None
    return now + schedule[failed_attempts - 1]


def should_disable(failing_since: datetime | None, now: datetime, after: timedelta) -> bool:
    """An endpoint failing every delivery since ``failing_since`` is disabled once that is ``after`` ago."""
    return failing_since is not None and now - failing_since >= after


def address_refused(address: str, policy: UrlPolicy) -> str | None:
    """Why a delivery may not go to the IP ``address`` under ``policy``, or None."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if policy.allow_private:
        return None
    for kind, flag in (("loopback", ip.is_loopback), ("link-local", ip.is_link_local), ("private", ip.is_private),
                       ("multicast", ip.is_multicast), ("reserved", ip.is_reserved),
                       ("unspecified", ip.is_unspecified), ("not globally routable", not ip.is_global)):
        if flag:
            return f"{address} is a {kind} address" if kind != "not globally routable" else f"{address} is {kind}"
    return None


def check_url(url: str, policy: UrlPolicy, pointer: str = "/url") -> str:
    """The endpoint URL, checked (422 at ``pointer`` otherwise)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValidationFailed(f"url must be an absolute https URL; got {url!r}", pointer=pointer)
    if parts.username or parts.password:
        raise ValidationFailed("url may not carry a user name or password", pointer=pointer)
    if parts.scheme == "http" and not policy.allow_http:
        raise ValidationFailed("url must use https (this server does not allow http webhook endpoints)",
                               pointer=pointer)
    host = parts.hostname.rstrip(".")
    try:
        refused = address_refused(host, policy)
    except ValueError:  # a name: checked against what it resolves to before each delivery
        refused = None
        if not policy.allow_private and (host == "localhost" or host.endswith((".localhost", ".local", ".internal"))):
            refused = f"{host} names a host inside this network"
    if refused is not None:
        raise ValidationFailed(f"url may not point inside this network: {refused} (SSRF protection)",
                               pointer=pointer, code="webhook_url_refused")
    return url.strip()


def check_event_types(types: Iterable[str], pointer: str = "/enabled_events") -> tuple[str, ...]:
    """The subscribed types, each known (or ``*``), at least one; 422 naming each unknown one."""
    types = list(dict.fromkeys(types))
    errors: list[LevyError] = [
        ValidationFailed(f"unknown event type {t!r}: one of {', '.join(TYPES)}, or '*' for all",
                         pointer=f"{pointer}/{i}")
        for i, t in enumerate(types) if t != ALL and t not in TYPES
    ]
    if not types:
        errors.append(ValidationFailed("enabled_events lists at least one event type (or '*' for all)",
                                       pointer=pointer))
    if errors:
        raise ValidationFailed.many(errors)
    return tuple(types)


def wants(enabled_events: Iterable[str], event_type: str) -> bool:
    types = set(enabled_events)
    return ALL in types or event_type in types
