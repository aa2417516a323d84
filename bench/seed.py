"""Data for the benchmark: tenants, and realistic rows written straight into the
database (products, customers with exemption certificates, registrations), so
that seeding costs seconds and never goes through the code it measures."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

STATES = ("TX", "CA", "NY", "WA", "FL", "IL", "PA", "OH", "GA", "NC")
PLACES = (("TX", "75001"), ("CA", "90001"), ("NY", "10001"))
CODES = ("SOFTWARE.SAAS.GENERAL", "DIGITAL.EBOOK", "CLOTHING.GENERAL", "FOOD.GROCERY")
BUYER = "bench-buyer"


@dataclass(frozen=True)
class Tenant:
    organization_id: str
    key: str


def new_tenant(db: str) -> Tenant:
    async def go() -> Tenant:
        from levy.store.db import create_engine, transaction
        from levy.store.keys import SqlApiKeys, SqlOrganizations

        engine = create_engine(db, pool_size=1)
        try:
            async with transaction(engine, write=True) as conn:
                org = await SqlOrganizations(conn).create(f"bench {uuid.uuid4().hex[:6]}")
                _, secret = await SqlApiKeys(conn).create(org.id, "bench", False)
        finally:
            await engine.dispose()
        return Tenant(org.id, secret)

    return asyncio.run(go())


def _customer_row(org: str, cid: str, source_id: str, now: datetime, **kw: Any) -> dict[str, Any]:
    return {"id": cid, "organization_id": org, "source": "native", "source_account_id": "__default__",
            "source_id": source_id, "name": kw.get("name"), "email": kw.get("email"), "merged_into_customer_id": None,
            "source_updated_at": kw.get("source_updated_at"), "created_at": now, "updated_at": now, "deleted_at": None,
            "override_exempt": False, "override_resale": False, "override_manufacturing": False,
            "exemption_updated_at": None}


def seed_catalogue(db: str, tenant: Tenant, *, products_n: int = 200, customers_n: int = 2000) -> str:
    """Registrations in ten states, ``products_n`` products, ``customers_n`` customers
    (one in ten with a certificate) including ``bench-buyer`` (a resale certificate
    in NY). Returns the id of the product the calculations use."""

    async def go() -> str:
        from sqlalchemy import insert

        from levy.domain.ids import new_id
        from levy.store.db import create_engine, transaction
        from levy.store.tables.areas import customers, exemption_certificates, products, registrations

        org, now = tenant.organization_id, datetime.now(UTC)
        engine = create_engine(db, pool_size=1)
        try:
            async with transaction(engine, write=True) as conn:
                await conn.execute(insert(registrations), [
                    {"id": new_id("reg"), "organization_id": org, "jurisdiction": f"US-ST-{st}",
                     "registration_number": f"{st}-0001", "effective_from": date(2000, 1, 1), "effective_to": None,
                     "created_at": now} for st in STATES])
                prows = [{"id": new_id("prd"), "organization_id": org, "source": "native",
                          "source_account_id": "__default__", "source_id": f"sku-{i}", "name": f"Product {i}",
                          "description": None, "source_category": None, "tax_codes": json.dumps([CODES[i % len(CODES)]]),
                          "marked_sales_tax": False, "source_updated_at": None, "created_at": now, "updated_at": now,
                          "archived_at": None} for i in range(products_n)]
                await conn.execute(insert(products), prows)
                crows = [_customer_row(org, new_id("cust"), f"buyer-{i}", now, name=f"Buyer {i}",
                                       email=f"b{i}@example.com") for i in range(customers_n)]
                crows.append(_customer_row(org, new_id("cust"), BUYER, now, name="Bench buyer"))
                await conn.execute(insert(customers), crows)
                certs = [{"id": new_id("cert"), "organization_id": org, "customer_id": c["id"],
                          "jurisdiction": "US-ST-NY" if c["source_id"] == BUYER else f"US-ST-{STATES[i % len(STATES)]}",
                          "exemption_type": "resale", "status": "valid", "starts_at": date(2024, 1, 1),
                          "expires_at": None, "created_at": now, "updated_at": now}
                         for i, c in enumerate(crows) if i % 10 == 0 or c["source_id"] == BUYER]
                await conn.execute(insert(exemption_certificates), certs)
        finally:
            await engine.dispose()
        return str(prows[0]["id"])

    return asyncio.run(go())


def seed_many_customers(db: str, tenant: Tenant, n: int, *, chunk: int = 20_000) -> list[str]:
    """``n`` customers by raw bulk insert (not through the API); their ids, oldest first."""

    async def go() -> list[str]:
        from sqlalchemy import insert

        from levy.domain.ids import new_id
        from levy.store.db import create_engine, transaction
        from levy.store.tables.areas import customers

        org, now = tenant.organization_id, datetime.now(UTC)
        ids: list[str] = []
        engine = create_engine(db, pool_size=1)
        try:
            for start in range(0, n, chunk):
                rows = [_customer_row(org, new_id("cust"), f"deep-{i}", now, name=f"Customer {i}",
                                      email=f"c{i}@example.com") for i in range(start, min(n, start + chunk))]
                async with transaction(engine, write=True) as conn:
                    await conn.execute(insert(customers), rows)
                ids.extend(r["id"] for r in rows)
            # Fresh planner statistics, as autovacuum's ANALYZE gives a database that got its rows over
            # time: right after a bulk load PostgreSQL still estimates a few dozen rows for the
            # organization and sorts all 100,000 for page 1 (70 ms) instead of reading the index backward.
            async with engine.connect() as conn:
                await conn.exec_driver_sql("ANALYZE customers")
                await conn.commit()
        finally:
            await engine.dispose()
        return ids

    return asyncio.run(go())


def raw_insert_times(db: str, tenant: Tenant, items: list[dict[str, Any]]) -> tuple[float, float]:
    """The floor of the batch upsert: the same rows in one Core ``INSERT``
    executemany, one transaction, on a warm connection. (wall-clock ms, CPU ms
    of this process, its threads included)."""
    import time

    async def go() -> tuple[float, float]:
        from sqlalchemy import insert

        from levy.domain.ids import new_id
        from levy.store.db import create_engine, transaction
        from levy.store.tables.areas import customers

        engine = create_engine(db, pool_size=1)
        try:
            async with transaction(engine, write=True):  # warm the connection
                pass
            start, cpu = time.perf_counter(), time.process_time()
            now = datetime.now(UTC)
            rows = [_customer_row(tenant.organization_id, new_id("cust"), str(it["source_id"]), now,
                                  name=it["name"], email=it["email"],
                                  source_updated_at=datetime(2026, 1, 1, tzinfo=UTC)) for it in items]
            async with transaction(engine, write=True) as conn:
                await conn.execute(insert(customers), rows)
            return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000
        finally:
            await engine.dispose()

    return asyncio.run(go())


# ------------------------------------------------------------------ requests


def calc_message(product_id: str, n: int, message: Any = None) -> Any:
    """A calculation of ``n`` lines over TX, CA and NY ZIPs with the product and
    customer presets (``message``: a CreateCalculationRequest or a Transaction)."""
    from levy.v1 import calculations_pb2 as pb

    req = message if message is not None else pb.CreateCalculationRequest()
    req.currency = "USD"
    req.discount_amount = "100"
    req.transaction_date.FromDatetime(datetime(2026, 3, 15, tzinfo=UTC))
    for i in range(n):
        st, z = PLACES[i % len(PLACES)]
        li = req.line_items.add(id=f"l{i}", quantity="2", unit_price=str(1999 + i))
        li.product.preset.id = product_id
        li.customer.address.state = st
        li.customer.address.postal_code = z
        li.customer.preset.id = BUYER
    return req


def calc_json(product_id: str, n: int) -> dict[str, Any]:
    """The same calculation as :func:`calc_message`, as the JSON body."""
    return {
        "currency": "USD",
        "discount_amount": "100",
        "transaction_date": "2026-03-15T00:00:00Z",
        "line_items": [
            {"id": f"l{i}", "quantity": "2", "unit_price": str(1999 + i),
             "product": {"preset": {"id": product_id}},
             "customer": {"address": {"state": PLACES[i % 3][0], "postal_code": PLACES[i % 3][1]},
                          "preset": {"id": BUYER}}}
            for i in range(n)
        ],
    }


def batch_items(n: int) -> list[dict[str, Any]]:
    tag = uuid.uuid4().hex[:8]
    return [{"source_id": f"bench-{tag}-{i}", "name": f"Customer {i}", "email": f"c{i}@example.com",
             "source_updated_at": "2026-01-01T00:00:00Z"} for i in range(n)]
