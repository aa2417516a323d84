"""levy-client's generated methods (clients/python/scripts/gen-client, issue 36): every
operationId of docs/openapi.json has a sync and an async method, and at least one
operation of every resource works through them against a real server, on SQLite
and PostgreSQL (the ``server`` fixture)."""

from __future__ import annotations

import asyncio
import csv
import importlib.machinery
import inspect
import io
import json
import types
from typing import Any

import pytest

from levyserver import ROOT, LevyServer, Tenant
from levy_client import AsyncLevyClient, ConflictError, LevyClient, NotFoundError, ValidationError
from levy_client._generated import OPERATIONS


def _line(id: str, price: int) -> dict[str, Any]:
    # Texas with no postal code: the state's 6.25% only (Tex. Tax Code 151.051).
    return {"id": id, "quantity": "1", "unit_price": str(price), "customer": {"address": {"state": "TX"}},
            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}


def _sale(date: str, *lines: dict[str, Any]) -> Any:
    return {"type": "sale", "status": "finalized", "transaction_date": f"{date}T12:00:00Z", "line_items": list(lines)}


def test_every_operation_of_the_openapi_document_has_a_sync_and_an_async_method() -> None:
    document = json.loads((ROOT / "docs/openapi.json").read_text())
    ids = {op["operationId"] for item in document["paths"].values() for op in item.values()
           if isinstance(op, dict) and "operationId" in op}
    assert ids == set(OPERATIONS) and len(ids) >= 48
    for operation_id, name in OPERATIONS.items():
        assert callable(getattr(LevyClient, name)), operation_id
        assert inspect.iscoroutinefunction(getattr(AsyncLevyClient, name)), operation_id
    assert OPERATIONS["ListApiKeys"] == "list_api_keys" and OPERATIONS["GetNexusReport"] == "get_nexus_report"


def test_every_resource_through_the_generated_methods(server: LevyServer, tenant: Tenant) -> None:
    with LevyClient(server.http_url, tenant.admin_key) as c:
        # organization settings and registrations
        settings = c.update_organization_settings({"name": "Generated Co"})
        assert settings["name"] == "Generated Co" == c.get_organization_settings()["name"]
        reg = c.create_registration({"jurisdiction": "US-ST-TX", "effective_from": "2020-01-01"})
        assert [r["id"] for r in c.iter_registrations()] == [reg["id"]]
        assert c.list_registrations(limit=1)["has_more"] is False

        # business locations
        loc = c.create_location({"name": "Houston", "effective_from": "2026-01-01", "address": {
            "line1": "901 Bagby St", "city": "Houston", "state": "TX", "postal_code": "77002"}})
        assert c.update_location(loc["id"], {"name": "Houston HQ"})["name"] == "Houston HQ"
        assert c.get_location(loc["id"])["name"] == "Houston HQ"
        assert c.archive_location(loc["id"])["archived_at"]
        assert [x["id"] for x in c.iter_locations()] == []  # archived ones are left out by default
        assert [x["id"] for x in c.iter_locations(include_archived=True)] == [loc["id"]]
        assert c.unarchive_location(loc["id"])["archived_at"] is None
        assert [x["id"] for x in c.list_locations()["data"]] == [loc["id"]]

        # API keys
        key = c.create_api_key({"name": "generated"})
        assert key["secret"] and key["admin"] is False
        assert key["id"] in [k["id"] for k in c.iter_api_keys()]
        assert c.delete_api_key(key["id"]) is None
        assert key["id"] not in [k["id"] for k in c.list_api_keys(limit=1000)["data"] if not k.get("revoked_at")]

        # reference data
        first = c.list_product_tax_codes(limit=1)
        assert len(first["data"]) == 1 and first["has_more"] is True
        assert all(a["code"].startswith("_") for a in c.list_product_attributes(limit=3)["data"])

        # products
        widget = c.create_product({"source_id": "g-1", "name": "Widget", "tax_codes": ["GENERAL.TANGIBLE.GOODS"]})
        assert c.update_product(widget["id"], {"description": "red"})["description"] == "red"
        assert c.get_product(widget["id"])["name"] == "Widget"
        assert [p["id"] for p in c.list_products()["data"]] == [widget["id"]]
        assert c.delete_product(widget["id"]) is None  # archives it: still readable
        assert c.get_product(widget["id"])["archived_at"]
        with pytest.raises(NotFoundError):
            c.get_product("prod_00000000000000000000000000")

        # customers, their certificates, overrides, merge and restore
        ann = c.create_customer({"source_id": "g-ann", "name": "Ann"})
        bob = c.create_customer({"source_id": "g-bob", "name": "Bob"}, idempotency_key="g-bob-1")
        assert c.create_customer({"source_id": "g-bob", "name": "Bob"}, idempotency_key="g-bob-1") == bob  # replayed
        with pytest.raises(ConflictError):
            c.create_customer({"source_id": "g-bob"})
        cert = c.create_exemption_certificate(ann["id"], {"jurisdiction": "US-ST-TX", "exemption_type": "resale"})
        assert cert["customer_id"] == ann["id"]
        assert c.update_exemption_certificate(ann["id"], cert["id"], {"expires_at": "2030-12-31"})["expires_at"]
        assert [x["id"] for x in c.iter_exemption_certificates(ann["id"])] == [cert["id"]]
        assert c.delete_exemption_certificate(ann["id"], cert["id"]) is None
        assert c.list_exemption_certificates(ann["id"])["data"] == []
        assert c.update_exemption_overrides(ann["id"], {"resale": True})["resale"] is True
        with pytest.raises(ValidationError):
            c.update_customer(ann["id"], {"source_id": " "})
        merged = c.merge_customer(ann["id"], {"into_customer_id": bob["id"]})
        assert merged["merged_into_customer_id"] == bob["id"]
        c.delete_customer(bob["id"])
        assert c.restore_customer(bob["id"])["id"] == bob["id"]
        assert c.get_customer(bob["id"])["name"] == "Bob"
        assert bob["id"] in [x["id"] for x in c.iter_customers()]

        # calculations: 6.25% of 10000 = 625
        assert c.create_calculation({"line_items": [_line("1", 10000)]})["tax_amount"] == "625"

        # transactions, one at a time and in a batch
        one = c.create_transaction(_sale("2026-01-15", _line("1", 10000)))  # 625
        assert c.update_transaction(one["id"], {"reference_id": "G-1"})["reference_id"] == "G-1"
        batch = c.batch_create_transactions({"transactions": [_sale("2026-01-20", _line("1", 5000))]})
        (made,) = batch["data"]
        assert made["status"] == "created"
        two = made["transaction"]  # 6.25% of 5000 = 312.5 -> 313 (half up)
        assert two["tax_amount"] == "313"
        assert c.get_transaction(one["id"])["reference_id"] == "G-1"
        assert [t["id"] for t in c.iter_transactions(page_size=1, reference_id="G-1")] == [one["id"]]
        assert {t["id"] for t in c.list_transactions(transaction_date_from="2026-01-01")["data"]} == {
            one["id"], two["id"]}

        # reports: January's Texas liability, 10000 + 5000 = 15000 sold, 625 + 313 = 938 tax
        report = c.get_liability_report(from_="2026-01-01", to="2026-01-31")
        (tx,) = [j for j in report["state_totals"] if j["jurisdiction"] == "US-ST-TX"]
        assert (tx["gross_sales"], tx["tax_calculated"]) == ("15000", "938")

        # nexus: Texas, registered, with the 15000 of sales counted
        nexus = c.get_nexus_report(as_of="2026-02-01")
        (texas,) = [s for s in nexus["states"] if s["state"] == "TX"]
        assert texas["is_registered"] is True

        # filings: prepare January, list its transactions, export it, file it
        filing = c.create_filing({"jurisdiction": "US-ST-TX", "period_start": "2026-01-01",
                                  "period_end": "2026-01-31"})
        assert (filing["filing_tax_amount"], filing["transaction_count"]) == ("938", 2)
        assert {t["transaction_id"] for t in c.iter_filing_transactions(filing["id"], page_size=1)} == {
            one["id"], two["id"]}
        assert len(c.list_filing_transactions(filing["id"])["data"]) == 2
        rows = list(csv.DictReader(io.StringIO(c.export_filing(filing["id"]))))
        assert [r["jurisdiction_code"] for r in rows] == ["US-ST-TX", "TOTAL"]
        assert rows[-1]["filing_tax_amount"] == "938"
        per_transaction = list(csv.DictReader(io.StringIO(c.export_filing(filing["id"], file="transactions"))))
        assert len(per_transaction) == 2
        assert c.update_filing(filing["id"], {"status": "filed"})["status"] == "filed"
        assert c.get_filing(filing["id"])["status"] == "filed"
        assert [f["id"] for f in c.iter_filings()] == [filing["id"]] == [f["id"] for f in c.list_filings()["data"]]


def test_the_async_client_has_the_same_generated_methods(server: LevyServer, tenant: Tenant) -> None:
    async def run() -> tuple[str, list[str], str]:
        async with AsyncLevyClient(server.http_url, tenant.admin_key) as c:
            reg = await c.create_registration({"jurisdiction": "US-ST-TX", "effective_from": "2020-01-01"})
            made = await c.batch_create_transactions({"transactions": [_sale("2026-03-02", _line("1", 2000))]})
            filing = await c.create_filing({"jurisdiction": "US-ST-TX", "period_start": "2026-03-01",
                                            "period_end": "2026-03-31"})
            ids = [t["transaction_id"] async for t in c.iter_filing_transactions(filing["id"])]
            assert ids == [made["data"][0]["transaction"]["id"]]
            await c.delete_registration(reg["id"])
            return filing["filing_tax_amount"], ids, (await c.get_nexus_report())["as_of"]

    # 6.25% of 2000 = 125
    tax, ids, as_of = asyncio.run(run())
    assert tax == "125" and len(ids) == 1 and as_of


def _gen_client() -> Any:
    loader = importlib.machinery.SourceFileLoader("gen_client", str(ROOT / "clients/python/scripts/gen-client"))
    module = types.ModuleType(loader.name)
    module.__file__ = loader.path
    loader.exec_module(module)
    return module


def test_an_operation_added_to_the_document_becomes_methods_by_regeneration_alone() -> None:
    """What another engineer's new RPC (say, webhooks) gets once scripts/gen-protos runs:
    the model, the Call, a sync and an async method and, for a list, its iter_* pager."""
    document = json.loads((ROOT / "docs/openapi.json").read_text())
    document["components"]["schemas"]["WebhookEndpoint"] = {
        "type": "object", "description": "Where events are sent.", "required": ["id"],
        "properties": {"id": {"type": "string"}, "url": {"type": ["string", "null"]}}}
    document["components"]["schemas"]["ListWebhookEndpointsResponse"] = {
        "type": "object", "required": ["data", "has_more"], "properties": {
            "data": {"type": "array", "items": {"$ref": "#/components/schemas/WebhookEndpoint"}},
            "has_more": {"type": "boolean"}}}
    document["paths"]["/webhook-endpoints/{endpoint_id}/deliveries"] = {"get": {
        "operationId": "ListWebhookDeliveries", "description": "Lists deliveries.",
        "parameters": [{"name": "endpoint_id", "in": "path", "required": True, "schema": {"type": "string"}},
                       {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                       {"name": "starting_after", "in": "query", "schema": {"type": "string"},
                        "description": "The `id` of the last item of the previous page."}],
        "responses": {"200": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ListWebhookEndpointsResponse"}}}}}}}
    namespace: dict[str, Any] = {}
    exec(compile(_gen_client().generate(document), "_generated", "exec", dont_inherit=True), namespace)
    assert namespace["OPERATIONS"]["ListWebhookDeliveries"] == "list_webhook_deliveries"
    assert namespace["WebhookEndpoint"].__required_keys__ == {"id"}
    call = namespace["_ops"].list_webhook_deliveries("we/1", limit=5)
    assert (call.method, call.path, call.params, call.repeatable) == ("GET", "/webhook-endpoints/we%2F1/deliveries",
                                                                      {"limit": 5}, True)
    for cls in ("SyncOperations", "AsyncOperations"):
        assert hasattr(namespace[cls], "list_webhook_deliveries") and hasattr(namespace[cls], "iter_webhook_deliveries")


def test_the_generated_calls_carry_what_the_document_declares() -> None:
    from levy_client._generated import _ops

    created = _ops.create_transaction({"type": "sale"}, idempotency_key="k-1")
    assert (created.method, created.path, created.headers, created.repeatable) == (
        "POST", "/transactions", {"Idempotency-Key": "k-1"}, True)
    assert _ops.create_transaction({"type": "sale"}).headers["Idempotency-Key"]  # one made up when none is given
    assert _ops.create_filing({"jurisdiction": "US-ST-TX"}).repeatable is False  # no Idempotency-Key: not retried
    assert _ops.delete_api_key("key_1").empty and _ops.export_filing("fil_1", file="transactions").text
    assert _ops.get_liability_report(from_="2026-01-01", to="2026-01-31").params == {
        "from": "2026-01-01", "to": "2026-01-31"}
    assert _ops.create_calculation({}, x_include_unregistered="true").headers == {"X-Include-Unregistered": "true"}
