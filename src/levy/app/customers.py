"""Customer use cases, shared by the RPC handlers and the CLI.

Each function runs inside the caller's unit of work (``conn``): validated
domain values in, domain records out. Transport concerns (protobuf, JSON)
stay in ``levy.app.handlers``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timezone
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.app import events
from levy.domain.customers import (
    BatchItem,
    CustomerRecord,
    CustomerSources,
    check_patch,
    decide,
    duplicate_meta,
    fail_duplicates,
    triple_of,
)
from levy.domain.errors import Conflict, FailedPrecondition, NotFound
from levy.domain.exemptions import Certificate, check_merge, validate_certificate
from levy.domain.ids import new_id
from levy.domain.pagination import PageRequest
from levy.store.customers import SqlCustomers


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def _not_found(customer_id: str) -> NotFound:
    return NotFound(f"No customer '{customer_id}' in your organization.")


async def active_customer(store: SqlCustomers, org: str, customer_id: str, *, lock: bool = False) -> CustomerRecord:
    """The customer unless missing, another organization's, or deleted (404)."""
    rec = await store.get(org, customer_id, lock=lock)
    if rec is None or rec.deleted:
        raise _not_found(customer_id)
    return rec


# ------------------------------------------------------------------ customers


async def create_customer(conn: AsyncConnection, org: str, values: dict[str, Any]) -> CustomerRecord:
    """Insert a customer; 409 with ``meta`` when its triple is taken (also by a tombstone)."""
    store = SqlCustomers(conn)
    now = utcnow()
    cid = new_id("cust")
    if not await store.insert(org, cid, values, now):
        existing = await store.find(org, triple_of(values))
        assert existing is not None
        raise _duplicate(existing)
    rec = await store.get(org, cid)
    assert rec is not None
    await events.record(conn, [events.customer_row("customer.created", org, rec)])
    return rec


def _duplicate(existing: CustomerRecord) -> Conflict:
    if existing.deleted:
        detail = (
            f"A deleted customer ({existing.id}) holds this source, source_account_id and source_id; "
            "it cannot be created again."
        )
    else:
        detail = f"Customer {existing.id} already has this source, source_account_id and source_id."
    return Conflict(detail, meta=duplicate_meta(existing), code="duplicate_customer", title="Duplicate Customer")


async def list_customers(conn: AsyncConnection, org: str, page: PageRequest) -> tuple[list[CustomerRecord], bool]:
    return await SqlCustomers(conn).page(org, page.limit, page.starting_after)


async def search_customers(conn: AsyncConnection, org: str, text: str, *, deleted: bool,
                           page: PageRequest) -> tuple[list[CustomerRecord], bool]:
    """The console's customer lists: active or deleted, filtered by source id, name or email."""
    return await SqlCustomers(conn).search(org, text.strip(), deleted=deleted, limit=page.limit,
                                           starting_after=page.starting_after)


async def get_customer(conn: AsyncConnection, org: str, customer_id: str) -> tuple[CustomerRecord, list[Certificate]]:
    store = SqlCustomers(conn)
    rec = await active_customer(store, org, customer_id)
    return rec, await store.certificates(org, customer_id)


async def update_customer(conn: AsyncConnection, org: str, customer_id: str, patch: dict[str, Any],
                          sources: CustomerSources) -> CustomerRecord:
    """PATCH: omitted and null keep the current value; a new triple must be free (409); ``sources``:
    the supported customer sources (reference data)."""
    store = SqlCustomers(conn)
    current = await active_customer(store, org, customer_id, lock=True)
    merged = check_patch(current, patch, sources=sources)
    changes = {k: v for k, v in merged.items() if v != getattr(current, k)}
    if not changes:
        return current
    if triple_of(merged) != current.triple:
        holder = await store.find(org, triple_of(merged))
        if holder is not None:
            raise _duplicate(holder)
    changes["updated_at"] = utcnow()
    try:
        async with conn.begin_nested():
            await store.update(org, customer_id, changes)
    except IntegrityError:
        # A concurrent request took the new triple between our check and the update.
        holder = await store.find(org, triple_of(merged))
        assert holder is not None
        raise _duplicate(holder) from None
    updated = replace(current, **changes)
    await events.record(conn, [events.customer_row("customer.updated", org, updated)])
    return updated


async def delete_customer(conn: AsyncConnection, org: str, customer_id: str) -> None:
    """Tombstone the customer (idempotent) and remove its certificates."""
    store = SqlCustomers(conn)
    rec = await store.get(org, customer_id, lock=True)
    if rec is None:
        raise _not_found(customer_id)
    if rec.deleted:
        return
    now = utcnow()
    certificates = await store.certificates(org, customer_id)
    await store.delete_certificates(org, customer_id)
    changes = {"deleted_at": now, "updated_at": now}
    await store.update(org, customer_id, changes)
    await events.record(conn, [*(events.certificate_row("certificate.deleted", org, c) for c in certificates),
                               events.customer_row("customer.deleted", org, replace(rec, **changes))])


async def restore_customer(conn: AsyncConnection, org: str, customer_id: str) -> CustomerRecord:
    store = SqlCustomers(conn)
    rec = await store.get(org, customer_id, lock=True)
    if rec is None:
        raise _not_found(customer_id)
    if not rec.deleted:
        raise FailedPrecondition(f"Customer {customer_id} is not deleted; there is nothing to restore.")
    changes = {"deleted_at": None, "updated_at": utcnow()}
    await store.update(org, customer_id, changes)
    restored = replace(rec, **changes)
    await events.record(conn, [events.customer_row("customer.updated", org, restored)])
    return restored


async def merge_customer(conn: AsyncConnection, org: str, customer_id: str, into_id: str) -> CustomerRecord:
    store = SqlCustomers(conn)
    rec = await active_customer(store, org, customer_id, lock=True)
    target = await store.get(org, into_id, lock=True) if into_id != customer_id else rec
    if target is None:
        raise NotFound(f"No customer '{into_id}' in your organization to merge into.", pointer="/into_customer_id")
    check_merge(customer_id, into_id, rec.merged_into_customer_id, target.merged_into_customer_id, target.deleted)
    changes = {"merged_into_customer_id": into_id, "updated_at": utcnow()}
    await store.update(org, customer_id, changes)
    merged = replace(rec, **changes)
    await events.record(conn, [events.customer_row("customer.updated", org, merged)])
    return merged


async def set_overrides(conn: AsyncConnection, org: str, customer_id: str, overrides: dict[str, bool | None]) -> CustomerRecord:
    """Set the customer-wide exemption overrides; ``None`` keeps the current value."""
    store = SqlCustomers(conn)
    rec = await active_customer(store, org, customer_id, lock=True)
    changes: dict[str, Any] = {
        f"override_{k}": v for k, v in overrides.items() if v is not None and v != getattr(rec, f"override_{k}")
    }
    if changes:
        changes["exemption_updated_at"] = utcnow()
        await store.update(org, customer_id, changes)
    return replace(rec, **changes)


# ------------------------------------------------------------------ batch upsert


async def batch_upsert(conn: AsyncConnection, org: str, items: list[BatchItem]) -> dict[str, CustomerRecord]:
    """Create or update the valid items in one transaction with a constant number
    of statements: one insert of every item as a new customer (``ON CONFLICT DO
    NOTHING``), one select of the triples it found taken (locked on PostgreSQL),
    one executemany update. Sets each item's status; returns the customers as
    stored, by id.

    Overlapping batches never deadlock on PostgreSQL: each takes its locks in two
    steps, each in the one order every batch shares (the items sorted by triple).
    The insert waits only on triples another transaction inserted and has not yet
    committed, and holds no lock a select waits on (a conflicting stored row is
    skipped, not locked); the select then locks the taken rows in triple order."""
    store = SqlCustomers(conn)
    fail_duplicates(items)
    valid = sorted((it for it in items if it.values is not None), key=lambda it: it.triple)
    for it in items:
        if it.values is None:
            it.status = "failed"
    now = utcnow()
    out: dict[str, CustomerRecord] = {}
    created: list[tuple[BatchItem, dict[str, Any]]] = []
    for it in valid:
        it.customer_id = new_id("cust")
        created.append((it, decide(it, None)))  # type: ignore[arg-type]
    inserted = await store.insert_many(org, [(it.customer_id, v) for it, v in created], now)  # type: ignore[misc]
    for it, v in created:
        if it.customer_id in inserted:
            out[it.customer_id] = _fresh(it.customer_id, v, now)  # type: ignore[index,arg-type]
    taken = [it for it in valid if it.customer_id not in inserted]
    stored = await store.select_triples(org, [it.triple for it in taken], lock=True)
    updates: list[tuple[BatchItem, dict[str, Any]]] = []
    for it in taken:
        current = stored[it.triple]
        out[current.id] = current
        writes = decide(it, current)
        if writes is not None:
            updates.append((it, writes))
    await store.update_many(org, [(it.customer_id, v) for it, v in updates], now)  # type: ignore[misc]
    outbox = [events.customer_row("customer.created", org, out[it.customer_id])  # type: ignore[index]
              for it, _ in created if it.customer_id in inserted]
    for it, v in updates:
        out[it.customer_id] = replace(out[it.customer_id], **v, updated_at=now)  # type: ignore[index]
        outbox.append(events.customer_row("customer.updated", org, out[it.customer_id]))  # type: ignore[index]
    await events.record(conn, outbox)
    return out


def _fresh(customer_id: str, values: dict[str, Any], now: datetime) -> CustomerRecord:
    return CustomerRecord(
        id=customer_id, source=values["source"], source_account_id=values["source_account_id"],
        source_id=values["source_id"], name=values.get("name"), email=values.get("email"),
        merged_into_customer_id=None, source_updated_at=values.get("source_updated_at"), created_at=now,
        updated_at=now, deleted_at=None, override_exempt=False, override_resale=False,
        override_manufacturing=False, exemption_updated_at=None,
    )


# ------------------------------------------------------------------ certificates


async def add_certificate(conn: AsyncConnection, org: str, customer_id: str, raw: dict[str, str | None]) -> Certificate:
    store = SqlCustomers(conn)
    await active_customer(store, org, customer_id, lock=True)
    f = validate_certificate(raw, create=True)
    now = utcnow()
    cert = Certificate(
        id=new_id("cexc"), customer_id=customer_id, jurisdiction=f.jurisdiction,  # type: ignore[arg-type]
        exemption_type=f.exemption_type, status=f.status or "in_review",  # type: ignore[arg-type]
        starts_at=f.starts_at, expires_at=f.expires_at, created_at=now, updated_at=now,
    )
    await store.insert_certificate(org, cert)
    await store.update(org, customer_id, {"exemption_updated_at": now})
    await events.record(conn, [events.certificate_row("certificate.created", org, cert)])
    return cert


async def list_certificates(
    conn: AsyncConnection, org: str, customer_id: str, page: PageRequest
) -> tuple[list[Certificate], bool]:
    store = SqlCustomers(conn)
    await active_customer(store, org, customer_id)
    return await store.certificate_page(org, customer_id, page.limit, page.starting_after)


async def certificate_of(store: SqlCustomers, org: str, customer_id: str, certificate_id: str) -> Certificate:
    """The certificate, read once its active customer's row is locked (as every write
    of a customer's certificates and documents does first)."""
    await active_customer(store, org, customer_id, lock=True)
    cert = await store.certificate(org, customer_id, certificate_id)
    if cert is None:
        raise NotFound(f"Customer '{customer_id}' has no exemption certificate '{certificate_id}'.")
    return cert


async def update_certificate(
    conn: AsyncConnection, org: str, customer_id: str, certificate_id: str, raw: dict[str, str | None]
) -> Certificate:
    """Partial update: fields not given (or null) keep their value."""
    store = SqlCustomers(conn)
    cert = await certificate_of(store, org, customer_id, certificate_id)
    f = validate_certificate(raw, create=False, current=cert)
    changes: dict[str, Any] = {
        k: getattr(f, k) for k in ("jurisdiction", "exemption_type", "status", "starts_at", "expires_at")
        if getattr(f, k) is not None and getattr(f, k) != getattr(cert, k)
    }
    if not changes:
        return cert
    now = utcnow()
    changes["updated_at"] = now
    await store.update_certificate(org, certificate_id, changes)
    await store.update(org, customer_id, {"exemption_updated_at": now})
    updated = replace(cert, **changes)
    await events.record(conn, [events.certificate_row("certificate.updated", org, updated)])
    return updated


async def remove_certificate(conn: AsyncConnection, org: str, customer_id: str, certificate_id: str) -> None:
    store = SqlCustomers(conn)
    cert = await certificate_of(store, org, customer_id, certificate_id)
    await store.delete_certificates(org, customer_id, certificate_id)
    await store.update(org, customer_id, {"exemption_updated_at": utcnow()})
    await events.record(conn, [events.certificate_row("certificate.deleted", org, cert)])


def today() -> date:
    return utcnow().date()
