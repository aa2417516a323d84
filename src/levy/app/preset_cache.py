"""An in-process cache of what a calculation reads from the database: per
organization, its settings and registrations, and its product and customer
(with certificates) preset rows, so that a calculation whose presets are cached
needs no database round trip at all.

Correctness first:

* Read-your-writes in a process: every write unit of work of a request
  (:meth:`levy.app.context.CallContext.uow` with ``write=True``, and the
  idempotent request transaction) drops the organization's entry when it ends
  (the organization of the request's API key; a write with no key known drops
  every entry).
* A read that raced with a write cannot put stale rows back: rows are stored
  into the entry object the read started with, and a write drops that object
  from the cache, so the late rows land in an orphan nobody reads.
* Across replicas (and writes made outside the server, e.g. the CLI), an entry
  lives at most ``LEVY_PRESET_CACHE_SECONDS`` (default 1 s); 0 turns caching off.

See docs/calculations.md ("Preset cache") and docs/operations.md.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from levy.domain.locations import BusinessLocation
    from levy.domain.settings import OrganizationSettings
    from levy.domain.tax.model import Registration
    from levy.store.calc_reads import CustomerRow, ProductRow

# Bounds on memory: beyond them the cache starts over (entries are cheap to rebuild).
MAX_ORGANIZATIONS = 10_000
MAX_ROWS_PER_ORGANIZATION = 50_000


@dataclass(slots=True)
class OrgPresets:
    """One organization's cached reads; ``None`` / absent keys mean "not read yet"."""

    expires: float
    settings: tuple[OrganizationSettings, tuple[Registration, ...]] | None = None
    # product id -> its row, or None when no such product exists.
    products: dict[str, ProductRow | None] = field(default_factory=dict)
    # customer source_id -> its live customers (every source and account).
    customers: dict[str, tuple[CustomerRow, ...]] = field(default_factory=dict)
    # Every business location (archived ones too), read with the settings.
    locations: tuple[BusinessLocation, ...] = ()
    # Held while one calculation reads what the entry lacks (levy.app.calculate._presets).
    read_lock: asyncio.Lock | None = None

    def full(self) -> bool:
        return len(self.products) + len(self.customers) >= MAX_ROWS_PER_ORGANIZATION


class PresetCache:
    def __init__(self, ttl_seconds: float) -> None:
        self.ttl = ttl_seconds
        self._orgs: dict[str, OrgPresets] = {}

    @property
    def enabled(self) -> bool:
        return self.ttl > 0

    def entry(self, organization_id: str) -> OrgPresets:
        """The organization's live entry (a fresh one when absent or expired).

        With caching off, a throw-away entry: callers read everything."""
        now = time.monotonic()
        if not self.enabled:
            return OrgPresets(expires=now)
        e = self._orgs.get(organization_id)
        if e is None or e.expires <= now or e.full():
            if len(self._orgs) >= MAX_ORGANIZATIONS:
                self._orgs.clear()
            e = self._orgs[organization_id] = OrgPresets(expires=now + self.ttl)
        return e

    def invalidate(self, organization_id: str | None) -> None:
        """Drop ``organization_id``'s entry (every entry when ``None``)."""
        if organization_id is None:
            self._orgs.clear()
        else:
            self._orgs.pop(organization_id, None)
