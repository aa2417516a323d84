"""Products (spec 2.2, 2.4, 4.3, 4.7) through REST and gRPC against a real
server on SQLite and PostgreSQL: create, retrieve, list, update (null vs
omitted), archive, tax code composition, organization defaults."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime, timezone
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import field_mask_pb2, timestamp_pb2

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import products_pb2 as pb
from levy.v1 import products_pb2_grpc

DEFAULT = "GENERAL.TANGIBLE.GOODS"


def uid() -> str:
    return uuid.uuid4().hex[:10]


def stub(channel: grpc.Channel) -> products_pb2_grpc.ProductServiceStub:
    return products_pb2_grpc.ProductServiceStub(channel)


def create(http: httpx.Client, **fields: Any) -> dict[str, Any]:
    body = {"source_id": f"sku-{uid()}", "name": "Widget", **fields}
    r = http.post("/products", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def errors_of(r: httpx.Response, status: int = 422) -> dict[str, dict[str, Any]]:
    assert r.status_code == status, r.text
    return {(e.get("source") or {}).get("pointer"): e for e in r.json()["errors"]}


def run_sql(server: LevyServer, fn: Any) -> Any:
    from levy.store.db import create_engine, transaction

    async def go() -> Any:
        engine = create_engine(server.database_url, pool_size=1)
        try:
            async with transaction(engine, write=True) as conn:
                return await fn(conn)
        finally:
            await engine.dispose()

    return asyncio.run(go())


def set_default_tax_codes(server: LevyServer, tenant: Tenant, codes: list[str]) -> None:
    """Write the organization's settings row directly (the settings API is another area)."""
    from sqlalchemy import delete, insert

    from levy.store.tables.areas import organization_settings as t

    async def fn(conn: Any) -> None:
        await conn.execute(delete(t).where(t.c.organization_id == tenant.organization_id))
        await conn.execute(
            insert(t).values(
                organization_id=tenant.organization_id,
                default_tax_codes=json.dumps(codes),
                exemption_management=True,
                certificate_treatment="certificate_only",
                updated_at=datetime.now(timezone.utc),
            )
        )

    run_sql(server, fn)


# ------------------------------------------------------------------ create


def test_rest_create_minimal_assigns_the_organization_default(http: httpx.Client) -> None:
    r = http.post("/products", json={"source_id": "sku-1", "name": "Widget"})
    assert r.status_code == 201, r.text
    p = r.json()
    assert p["id"].startswith("prd_") and len(p["id"]) == 30
    assert p["source"] == "native" and p["source_account_id"] == "__default__"
    assert p["source_id"] == "sku-1" and p["name"] == "Widget"
    assert p["tax_codes"] == [] and p["resolved_tax_codes"] == [DEFAULT]
    assert p["description"] is None and p["source_category"] is None and p["source_updated_at"] is None
    assert p["archived_at"] is None and p["marked_sales_tax"] is False
    assert p["created_at"] == p["updated_at"] and p["created_at"].endswith("Z")
    assert http.get(f"/products/{p['id']}").json() == p


def test_rest_create_with_every_field(http: httpx.Client) -> None:
    p = create(
        http,
        source="native",
        description="Cloud accounting",
        source_category="Subscriptions",
        tax_codes=["SOFTWARE.SAAS.GENERAL._B2B._SUBSCRIPTION"],
        source_updated_at="2025-03-01T10:00:00+02:00",
    )
    assert p["tax_codes"] == p["resolved_tax_codes"] == ["SOFTWARE.SAAS.GENERAL._B2B._SUBSCRIPTION"]
    assert p["description"] == "Cloud accounting" and p["source_category"] == "Subscriptions"
    assert p["source_updated_at"] == "2025-03-01T08:00:00Z"
    assert http.get(f"/products/{p['id']}").json() == p


def test_rest_create_with_an_integration_source_and_account(http: httpx.Client) -> None:
    from levy.store.reference_data import customer_sources

    SOURCES = tuple(customer_sources())
    source = next(s for s in SOURCES if s != "native")
    p = create(http, source=source, source_account_id="acct_42")
    assert p["source"] == source and p["source_account_id"] == "acct_42"


def test_grpc_create_and_get(channel: grpc.Channel, tenant: Tenant) -> None:
    s = stub(channel)
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    created = s.CreateProduct(
        pb.CreateProductRequest(
            product=pb.Product(source_id="g-1", name="Ebook", tax_codes=["DIGITAL.EBOOKS.GENERAL", "_DOWNLOADED"],
                               description="A book", source_updated_at=ts)
        ),
        metadata=md(tenant.key),
    )
    assert created.id.startswith("prd_") and created.source == "native"
    assert list(created.tax_codes) == list(created.resolved_tax_codes) == ["DIGITAL.EBOOKS.GENERAL", "_DOWNLOADED"]
    assert created.source_updated_at.ToDatetime(tzinfo=timezone.utc) == datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert not created.HasField("archived_at") and not created.HasField("source_category")
    got = s.GetProduct(pb.GetProductRequest(product_id=created.id), metadata=md(tenant.key))
    assert got == created
    plain = s.CreateProduct(pb.CreateProductRequest(product=pb.Product(source_id="g-2", name="Thing")),
                            metadata=md(tenant.key))
    assert list(plain.tax_codes) == [] and list(plain.resolved_tax_codes) == [DEFAULT]


def test_rest_required_and_blank_fields(http: httpx.Client) -> None:
    errs = errors_of(http.post("/products", json={}))
    assert set(errs) == {"/source_id", "/name"}
    assert errs["/source_id"]["code"] == "validation_required_field"
    assert errs["/source_id"]["title"] == "Missing source_id" and errs["/name"]["title"] == "Missing name"
    errs = errors_of(http.post("/products", json={"source_id": "  ", "name": "n"}))
    assert set(errs) == {"/source_id"} and "blank" in errs["/source_id"]["detail"]
    errs = errors_of(http.post("/products", json={"source_id": "x", "name": None}))
    assert set(errs) == {"/name"} and errs["/name"]["code"] == "validation_required_field"
    errs = errors_of(http.post("/products", json={"source_id": "x", "name": " "}))
    assert set(errs) == {"/name"} and "blank" in errs["/name"]["detail"]
    errs = errors_of(http.post("/products", json={"source_id": "x", "name": "n", "source": "NATIVE"}))
    assert set(errs) == {"/source"} and "not supported" in errs["/source"]["detail"]
    errs = errors_of(http.post("/products", json={"source_id": "x", "name": "n", "source_account_id": " "}))
    assert set(errs) == {"/source_account_id"}
    errs = errors_of(http.post("/products", json={"source_id": "x", "name": "n", "description": "d" * 2001}))
    assert set(errs) == {"/description"}
    assert http.get("/products").json()["data"] == []  # nothing stored


def test_grpc_required_fields(channel: grpc.Channel, tenant: Tenant) -> None:
    err = call_error(stub(channel).CreateProduct, pb.CreateProductRequest(product=pb.Product(name="n")),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert [v[0] for v in err.violations] == ["/source_id"]
    assert err.errors[0]["code"] == "validation_required_field"


# ------------------------------------------------------------------ composition (section 2.4)

BAD_CODES = [
    (["NOT.A.CODE"], "/tax_codes/0", "unknown tax code 'NOT.A.CODE'"),
    (["SOFTWARE.SAAS"], "/tax_codes/0", "leaf code, not a prefix"),
    (["software.saas.general"], "/tax_codes/0", "case-sensitive"),
    (["SOFTWARE.SAAS.GENERAL._b2b"], "/tax_codes/0", "case-sensitive"),
    (["SOFTWARE.SAAS.GENERAL._NOPE"], "/tax_codes/0", "unknown attribute '_NOPE'"),
    (["CLOTHING.APPAREL.GENERAL._DOWNLOADED"], "/tax_codes/0", "does not apply to 'CLOTHING.APPAREL.GENERAL'"),
    (["CLOTHING.APPAREL.GENERAL", "_DOWNLOADED"], "/tax_codes/1", "applies only to SOFTWARE, DIGITAL"),
    (["SOFTWARE.SAAS.GENERAL._B2B._PERSONAL_USE"], "/tax_codes/0", "exclusive group 'buyer'"),
    (["SOFTWARE.SAAS.GENERAL._RESALE", "_RESALE"], "/tax_codes/1", "duplicate attribute '_RESALE'"),
    (["SOFTWARE._B2B.SAAS.GENERAL"], "/tax_codes/0", "attributes must trail the category path"),
    (["SOFTWARE.SAAS.GENERAL", "GENERAL.TANGIBLE.GOODS"], "/tax_codes/1", "more than one category path"),
    (["SALES_TAX._B2B"], "/tax_codes/0", "never takes attributes"),
    (["SALES_TAX", "GENERAL.TANGIBLE.GOODS"], "/tax_codes/0", "must be the only tax code"),
    (["SALES_TAX", "_B2B"], "/tax_codes/0", "must be the only tax code"),
    (["sales_tax"], "/tax_codes/0", "did you mean 'SALES_TAX'"),
    (["_B2B"], "/tax_codes/0", "name no category path"),
    (["_DOWNLOADED"], "/tax_codes/0", "no category path was given"),
    (["SOFTWARE..GENERAL"], "/tax_codes/0", "empty component"),
]


@pytest.mark.parametrize("codes, pointer, fragment", BAD_CODES, ids=[";".join(c[0]) for c in BAD_CODES])
def test_rest_composition_rules(http: httpx.Client, codes: list[str], pointer: str, fragment: str) -> None:
    errs = errors_of(http.post("/products", json={"source_id": "c", "name": "n", "tax_codes": codes}))
    assert pointer in errs, errs
    assert errs[pointer]["code"] == "validation_error"
    assert fragment in errs[pointer]["detail"]
    # the same rules on PATCH
    p = create(http)
    errs = errors_of(http.patch(f"/products/{p['id']}", json={"tax_codes": codes}))
    assert fragment in errs[pointer]["detail"]
    assert http.get(f"/products/{p['id']}").json()["tax_codes"] == []


@pytest.mark.parametrize("codes, pointer, fragment", BAD_CODES, ids=[";".join(c[0]) for c in BAD_CODES])
def test_grpc_composition_rules(channel: grpc.Channel, tenant: Tenant, codes: list[str], pointer: str,
                                fragment: str) -> None:
    err = call_error(stub(channel).CreateProduct,
                     pb.CreateProductRequest(product=pb.Product(source_id="c", name="n", tax_codes=codes)),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    violations = dict(err.violations)
    assert fragment in violations[pointer]


def test_every_problem_is_reported_at_once(http: httpx.Client) -> None:
    errs = errors_of(http.post("/products", json={
        "source_id": "c", "name": "n", "tax_codes": ["SOFTWARE.SAAS.GENERAL._NOPE", "_B2B", "_B2B"]}))
    assert set(errs) == {"/tax_codes/0", "/tax_codes/2"}


@pytest.mark.parametrize("codes", [
    ["SOFTWARE.SAAS.GENERAL._B2B._SUBSCRIPTION"],
    ["SOFTWARE.DOWNLOADED.PREWRITTEN", "_DOWNLOADED", "_PERMANENT_USE"],
    ["_RESALE", "FOOD.GROCERY.GENERAL"],
    ["SHIPPING.DELIVERY.COMMON_CARRIER._MANDATORY._SEPARATELY_STATED"],
    ["NONTAXABLE.GENERAL.EXEMPT"],
])
def test_valid_compositions_are_kept_as_sent(http: httpx.Client, codes: list[str]) -> None:
    p = create(http, tax_codes=codes)
    assert p["tax_codes"] == p["resolved_tax_codes"] == codes and p["marked_sales_tax"] is False


def test_sales_tax_marks_the_product(http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
    p = create(http, tax_codes=["SALES_TAX"])
    assert p["marked_sales_tax"] is True and p["resolved_tax_codes"] == ["SALES_TAX"]
    r = http.patch(f"/products/{p['id']}", json={"tax_codes": ["GENERAL.TANGIBLE.GOODS"]})
    assert r.json()["marked_sales_tax"] is False
    got = stub(channel).UpdateProduct(
        pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(tax_codes=["SALES_TAX"])),
        metadata=md(tenant.key))
    assert got.marked_sales_tax is True
    r = http.patch(f"/products/{p['id']}", json={"tax_codes": []})
    assert r.json()["marked_sales_tax"] is False and r.json()["resolved_tax_codes"] == [DEFAULT]


# ------------------------------------------------------------------ uniqueness


def test_duplicate_triple_is_409_with_the_existing_product(http: httpx.Client, channel: grpc.Channel,
                                                           tenant: Tenant) -> None:
    p = create(http, source_id="dup-1")
    errs = errors_of(http.post("/products", json={"source_id": "dup-1", "name": "Other"}), 409)
    (e,) = errs.values()
    assert e["status"] == "409" and e["code"] == "duplicate_product"
    assert e["meta"] == {"existing_product_id": p["id"], "existing_product_path": f"/products/{p['id']}"}
    err = call_error(stub(channel).CreateProduct,
                     pb.CreateProductRequest(product=pb.Product(source_id="dup-1", name="x", source="native")),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.ALREADY_EXISTS
    assert err.errors[0]["meta"]["existing_product_id"] == p["id"]
    # another source or account is another product
    from levy.store.reference_data import customer_sources

    SOURCES = tuple(customer_sources())
    other_source = next(s for s in SOURCES if s != "native")
    create(http, source_id="dup-1", source=other_source)
    create(http, source_id="dup-1", source_account_id="acct-2")
    # archived products keep their triple
    assert http.delete(f"/products/{p['id']}").status_code == 204
    errs = errors_of(http.post("/products", json={"source_id": "dup-1", "name": "Again"}), 409)
    assert errs[None]["meta"]["archived"] is True and errs[None]["meta"]["existing_product_id"] == p["id"]


def test_patch_into_a_taken_triple_is_409(http: httpx.Client) -> None:
    a = create(http, source_id="t-a")
    b = create(http, source_id="t-b")
    errs = errors_of(http.patch(f"/products/{b['id']}", json={"source_id": "t-a"}), 409)
    assert errs[None]["meta"]["existing_product_id"] == a["id"]
    assert http.get(f"/products/{b['id']}").json()["source_id"] == "t-b"
    r = http.patch(f"/products/{b['id']}", json={"source_id": "t-c"})
    assert r.status_code == 200 and r.json()["source_id"] == "t-c"


def test_concurrent_creates_of_one_triple_make_one_product(server: LevyServer, tenant: Tenant) -> None:
    async def go() -> list[int]:
        async with httpx.AsyncClient(base_url=server.http_url, headers={"X-API-Key": tenant.key}) as c:
            rs = await asyncio.gather(*(c.post("/products", json={"source_id": "race", "name": f"n{i}"})
                                        for i in range(8)))
            return sorted(r.status_code for r in rs)

    assert asyncio.run(go()) == [201] + [409] * 7


def test_tenants_are_isolated(http: httpx.Client, server: LevyServer, other_tenant: Tenant,
                              channel: grpc.Channel) -> None:
    p = create(http, source_id="iso")
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.key}) as other:
        assert other.post("/products", json={"source_id": "iso", "name": "theirs"}).status_code == 201
        assert other.get(f"/products/{p['id']}").status_code == 404
        assert other.patch(f"/products/{p['id']}", json={"name": "x"}).status_code == 404
        assert other.delete(f"/products/{p['id']}").status_code == 404
        assert p["id"] not in [x["id"] for x in other.get("/products").json()["data"]]
    err = call_error(stub(channel).GetProduct, pb.GetProductRequest(product_id=p["id"]), md(other_tenant.key))
    assert err.code == grpc.StatusCode.NOT_FOUND
    assert http.get(f"/products/{p['id']}").json()["name"] == "Widget"


# ------------------------------------------------------------------ update


def test_rest_patch_omitted_unchanged_null_clears(http: httpx.Client) -> None:
    p = create(http, description="old", source_category="cat", tax_codes=["FOOD.GROCERY.GENERAL"])
    r = http.patch(f"/products/{p['id']}", json={"name": "Renamed"})
    assert r.status_code == 200, r.text
    q = r.json()
    assert q["name"] == "Renamed" and q["description"] == "old" and q["source_category"] == "cat"
    assert q["tax_codes"] == ["FOOD.GROCERY.GENERAL"] and q["updated_at"] > p["updated_at"]
    assert q["created_at"] == p["created_at"]
    q = http.patch(f"/products/{p['id']}", json={"description": None}).json()
    assert q["description"] is None and q["source_category"] == "cat" and q["name"] == "Renamed"
    q = http.patch(f"/products/{p['id']}", json={"source_category": None, "description": "new"}).json()
    assert q["source_category"] is None and q["description"] == "new"
    assert http.get(f"/products/{p['id']}").json() == q


def test_rest_patch_tax_codes_empty_or_null_reverts_to_default(http: httpx.Client) -> None:
    p = create(http, tax_codes=["FOOD.GROCERY.GENERAL"])
    q = http.patch(f"/products/{p['id']}", json={"tax_codes": []}).json()
    assert q["tax_codes"] == [] and q["resolved_tax_codes"] == [DEFAULT]
    http.patch(f"/products/{p['id']}", json={"tax_codes": ["FOOD.GROCERY.GENERAL"]})
    q = http.patch(f"/products/{p['id']}", json={"tax_codes": None}).json()
    assert q["tax_codes"] == [] and q["resolved_tax_codes"] == [DEFAULT]


def test_rest_patch_empty_body_changes_nothing(http: httpx.Client) -> None:
    p = create(http)
    r = http.patch(f"/products/{p['id']}", json={})
    assert r.status_code == 200 and r.json() == p


def test_rest_patch_required_fields_cannot_be_cleared(http: httpx.Client) -> None:
    p = create(http)
    errs = errors_of(http.patch(f"/products/{p['id']}", json={"name": None, "source_id": None, "source": None,
                                                              "source_account_id": None}))
    assert set(errs) == {"/name", "/source_id", "/source", "/source_account_id"}
    assert all("cannot be cleared" in e["detail"] for e in errs.values())
    errs = errors_of(http.patch(f"/products/{p['id']}", json={"name": "  "}))
    assert set(errs) == {"/name"} and "blank" in errs["/name"]["detail"]
    assert http.get(f"/products/{p['id']}").json() == p


def test_rest_source_updated_at_moves_forward_only(http: httpx.Client) -> None:
    p = create(http, source_updated_at="2025-02-01T00:00:00Z")
    pid = p["id"]
    errs = errors_of(http.patch(f"/products/{pid}", json={"source_updated_at": "2025-01-31T23:59:59Z",
                                                            "name": "stale"}))
    e = errs["/source_updated_at"]
    assert e["code"] == "outdated_source_updated_at" and e["status"] == "422"
    assert "older than the stored" in e["detail"]
    assert http.get(f"/products/{pid}").json()["name"] == "Widget"  # nothing half-written
    errs = errors_of(http.patch(f"/products/{pid}", json={"source_updated_at": None}))
    assert "cannot be cleared" in errs["/source_updated_at"]["detail"]
    r = http.patch(f"/products/{pid}", json={"source_updated_at": "2025-02-01T00:00:00Z", "name": "same time"})
    assert r.status_code == 200 and r.json()["name"] == "same time"
    r = http.patch(f"/products/{pid}", json={"source_updated_at": "2025-03-01T00:00:00+01:00"})
    assert r.status_code == 200 and r.json()["source_updated_at"] == "2025-02-28T23:00:00Z"
    # without a stored value any value is accepted
    q = create(http)
    r = http.patch(f"/products/{q['id']}", json={"source_updated_at": "2001-01-01T00:00:00Z"})
    assert r.status_code == 200 and r.json()["source_updated_at"] == "2001-01-01T00:00:00Z"


def test_grpc_update_with_and_without_mask(channel: grpc.Channel, tenant: Tenant, http: httpx.Client) -> None:
    s = stub(channel)
    p = create(http, description="keep", source_category="c", tax_codes=["FOOD.GROCERY.GENERAL"])
    # empty mask: the fields set are the fields present
    got = s.UpdateProduct(pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(name="G")),
                          metadata=md(tenant.key))
    assert got.name == "G" and got.description == "keep" and list(got.tax_codes) == ["FOOD.GROCERY.GENERAL"]
    # a mask path that is unset clears (description) or reverts (tax_codes)
    got = s.UpdateProduct(
        pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(),
                                update_mask=field_mask_pb2.FieldMask(paths=["description", "tax_codes"])),
        metadata=md(tenant.key))
    assert not got.HasField("description") and got.source_category == "c"
    assert list(got.tax_codes) == [] and list(got.resolved_tax_codes) == [DEFAULT]
    err = call_error(s.UpdateProduct,
                     pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(),
                                             update_mask=field_mask_pb2.FieldMask(paths=["id"])), md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/update_mask/paths/0"
    old = timestamp_pb2.Timestamp(seconds=10)
    s.UpdateProduct(pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(source_updated_at=timestamp_pb2.Timestamp(seconds=20))),
                    metadata=md(tenant.key))
    err = call_error(s.UpdateProduct,
                     pb.UpdateProductRequest(product_id=p["id"], product=pb.Product(source_updated_at=old)),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION and err.reason == "outdated_source_updated_at"
    assert err.violations[0][0] == "/source_updated_at"
    err = call_error(s.UpdateProduct, pb.UpdateProductRequest(product_id="prd_missing", product=pb.Product(name="x")),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.NOT_FOUND


# ------------------------------------------------------------------ organization default


def test_products_without_codes_follow_the_organization_default(http: httpx.Client, server: LevyServer,
                                                                tenant: Tenant, channel: grpc.Channel) -> None:
    plain = create(http)
    own = create(http, tax_codes=["FOOD.GROCERY.GENERAL"])
    set_default_tax_codes(server, tenant, ["SOFTWARE.SAAS.GENERAL", "_B2B"])
    assert http.get(f"/products/{plain['id']}").json()["resolved_tax_codes"] == ["SOFTWARE.SAAS.GENERAL", "_B2B"]
    assert http.get(f"/products/{own['id']}").json()["resolved_tax_codes"] == ["FOOD.GROCERY.GENERAL"]
    listed = {p["id"]: p["resolved_tax_codes"] for p in http.get("/products").json()["data"]}
    assert listed == {plain["id"]: ["SOFTWARE.SAAS.GENERAL", "_B2B"], own["id"]: ["FOOD.GROCERY.GENERAL"]}
    new = create(http)
    assert new["tax_codes"] == [] and new["resolved_tax_codes"] == ["SOFTWARE.SAAS.GENERAL", "_B2B"]
    got = stub(channel).GetProduct(pb.GetProductRequest(product_id=plain["id"]), metadata=md(tenant.key))
    assert list(got.resolved_tax_codes) == ["SOFTWARE.SAAS.GENERAL", "_B2B"]
    set_default_tax_codes(server, tenant, ["SERVICES.PROFESSIONAL.GENERAL"])
    assert http.get(f"/products/{plain['id']}").json()["resolved_tax_codes"] == ["SERVICES.PROFESSIONAL.GENERAL"]
    r = http.patch(f"/products/{own['id']}", json={"tax_codes": []})
    assert r.json()["resolved_tax_codes"] == ["SERVICES.PROFESSIONAL.GENERAL"]


# ------------------------------------------------------------------ list


def test_rest_list_newest_first_paged(http: httpx.Client) -> None:
    ids = [create(http, source_id=f"l-{i}")["id"] for i in range(7)]
    seen: list[str] = []
    after = None
    while True:
        r = http.get("/products", params={"limit": 3, **({"starting_after": after} if after else {})})
        assert r.status_code == 200
        body = r.json()
        assert set(body) == {"data", "has_more"} and len(body["data"]) <= 3
        seen += [p["id"] for p in body["data"]]
        if not body["has_more"]:
            break
        after = body["data"][-1]["id"]
    assert seen == list(reversed(ids))
    assert errors_of(http.get("/products", params={"limit": 1001}))[None]["source"]["parameter"] == "limit"
    assert len(http.get("/products", params={"limit": 1000}).json()["data"]) == 7


def test_grpc_list_includes_archived(channel: grpc.Channel, tenant: Tenant, http: httpx.Client) -> None:
    a = create(http)
    b = create(http)
    assert http.delete(f"/products/{a['id']}").status_code == 204
    s = stub(channel)
    page = s.ListProducts(pb.ListProductsRequest(limit=1), metadata=md(tenant.key))
    assert [p.id for p in page.data] == [b["id"]] and page.has_more
    page = s.ListProducts(pb.ListProductsRequest(limit=1, starting_after=b["id"]), metadata=md(tenant.key))
    assert [p.id for p in page.data] == [a["id"]] and page.data[0].HasField("archived_at") and not page.has_more
    err = call_error(s.ListProducts, pb.ListProductsRequest(limit=0), md(tenant.key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT


# ------------------------------------------------------------------ archive


def test_rest_archive(http: httpx.Client) -> None:
    p = create(http)
    r = http.delete(f"/products/{p['id']}")
    assert r.status_code == 204 and r.content == b""
    got = http.get(f"/products/{p['id']}").json()
    assert got["archived_at"] is not None and got["name"] == "Widget"
    assert http.delete(f"/products/{p['id']}").status_code == 204
    assert http.get(f"/products/{p['id']}").json()["archived_at"] == got["archived_at"]
    errs = errors_of(http.patch(f"/products/{p['id']}", json={"name": "x"}))
    assert errs[None]["code"] == "product_archived"
    assert http.delete("/products/prd_doesnotexist").status_code == 404
    assert http.get("/products/prd_doesnotexist").json()["errors"][0]["code"] == "not_found"


def test_grpc_archive(channel: grpc.Channel, tenant: Tenant) -> None:
    s = stub(channel)
    p = s.CreateProduct(pb.CreateProductRequest(product=pb.Product(source_id=uid(), name="n")), metadata=md(tenant.key))
    s.DeleteProduct(pb.DeleteProductRequest(product_id=p.id), metadata=md(tenant.key))
    s.DeleteProduct(pb.DeleteProductRequest(product_id=p.id), metadata=md(tenant.key))
    got = s.GetProduct(pb.GetProductRequest(product_id=p.id), metadata=md(tenant.key))
    assert got.HasField("archived_at")
    err = call_error(s.UpdateProduct, pb.UpdateProductRequest(product_id=p.id, product=pb.Product(name="x")),
                     md(tenant.key))
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION and err.reason == "product_archived"
    err = call_error(s.DeleteProduct, pb.DeleteProductRequest(product_id="prd_x"), md(tenant.key))
    assert err.code == grpc.StatusCode.NOT_FOUND


def test_preset_lookup_returns_archived_products_for_the_caller_to_refuse(
    http: httpx.Client, server: LevyServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    from levy.domain.errors import ValidationFailed
    from levy.domain.products import require_usable_preset
    from levy.store.products import get_product_for_preset

    live = create(http)
    gone = create(http)
    http.delete(f"/products/{gone['id']}")

    async def fn(conn: Any) -> tuple[Any, ...]:
        return (
            await get_product_for_preset(conn, tenant.organization_id, live["id"]),
            await get_product_for_preset(conn, tenant.organization_id, gone["id"]),
            await get_product_for_preset(conn, other_tenant.organization_id, live["id"]),
        )

    rec_live, rec_gone, foreign = run_sql(server, fn)
    assert rec_live.id == live["id"] and not rec_live.archived
    assert require_usable_preset(rec_live, live["id"], "/line_items/0/product/preset/id") is rec_live
    assert rec_gone.archived and foreign is None
    with pytest.raises(ValidationFailed) as exc:
        require_usable_preset(rec_gone, gone["id"], "/line_items/0/product/preset/id")
    assert exc.value.first.code == "product_archived" and exc.value.first.pointer == "/line_items/0/product/preset/id"
