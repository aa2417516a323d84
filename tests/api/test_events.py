"""Events (issue 35): each change stores its event in its own database transaction, and
``GET /events`` / ``GET /events/{event_id}`` list them over REST and gRPC, on SQLite and
PostgreSQL, against a real server.

Figures by hand: a TX address without postal code is Texas 6.25% only, so a $100.00 sale
(10000 cents) has a tax of 625 and its full credit a tax of 625 as well.
"""

from __future__ import annotations

from typing import Any

import grpc
import httpx

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import events_pb2 as pb
from levy.v1 import events_pb2_grpc as pbg
from txn_api import line, register

D = "2026-01-15T12:00:00Z"


def events(admin: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    r = admin.get("/events", params=params)
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


def created(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert r.status_code == status, r.text
    return dict(r.json())


def test_each_change_stores_its_event_with_the_object_as_the_api_returned_it(
        http: httpx.Client, admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    cust = created(http.post("/customers", json={"source_id": "c-1", "name": "Ada"}), 201)
    patched = created(http.patch(f"/customers/{cust['id']}", json={"name": "Grace"}))
    assert http.delete(f"/customers/{cust['id']}").status_code == 204
    sale = created(http.post("/transactions", json={"type": "sale", "status": "draft", "transaction_date": D,
                                                    "line_items": [line(price=10000)]}))
    assert sale["tax_amount"] == "625"  # 10000 x 6.25 %
    final = created(http.post(f"/transactions/{sale['id']}", json={"status": "finalized"}))
    credit = created(http.post("/transactions", json={"type": "credit", "status": "finalized", "transaction_date": D,
                                                      "parent_transaction_id": sale["id"]}))
    assert credit["tax_amount"] == "625"  # the full credit of the sale's 625
    voided = created(http.post(f"/transactions/{credit['id']}", json={"status": "void"}))

    got = events(admin_http)
    # Newest first: the credit created finalized reports created and finalized, then voided.
    assert [(e["type"], e["object_id"]) for e in got] == [
        ("transaction.voided", credit["id"]),
        ("transaction.finalized", credit["id"]),
        ("credit.created", credit["id"]),
        ("transaction.finalized", sale["id"]),
        ("transaction.created", sale["id"]),
        ("customer.deleted", cust["id"]),
        ("customer.updated", cust["id"]),
        ("customer.created", cust["id"]),
    ]
    for e in got:
        assert e["id"].startswith("evt_") and e["created_at"].endswith("Z")
        assert e["object_type"] == ("customer" if e["type"].startswith("customer.") else "transaction")
    by_type = {(e["type"], e["object_id"]): e["data"] for e in got}
    assert by_type[("transaction.created", sale["id"])]["transaction"] == sale
    assert by_type[("transaction.finalized", sale["id"])]["transaction"] == final
    assert by_type[("transaction.voided", credit["id"])]["transaction"] == voided
    assert by_type[("transaction.created", sale["id"])]["customer"] is None
    assert by_type[("customer.updated", cust["id"])]["customer"]["name"] == patched["name"] == "Grace"
    assert by_type[("customer.deleted", cust["id"])]["customer"]["id"] == cust["id"]

    one = got[0]
    assert created(admin_http.get(f"/events/{one['id']}")) == one


def test_a_filing_reports_prepared_filed_and_each_transaction_filed(http: httpx.Client,
                                                                    admin_http: httpx.Client) -> None:
    register(admin_http, "TX")
    sale = created(http.post("/transactions", json={"type": "sale", "status": "finalized", "transaction_date": D,
                                                    "line_items": [line(price=10000)]}))
    period = {"jurisdiction": "US-ST-TX", "period_start": "2026-01-01", "period_end": "2026-01-31"}
    prepared = created(admin_http.post("/filings", json=period), 201)
    assert prepared["filing_tax_amount"] == "625"
    filed = created(admin_http.post(f"/filings/{prepared['id']}", json={"status": "filed"}))
    got = events(admin_http)
    assert [(e["type"], e["object_id"]) for e in got[:3]] == [
        ("transaction.filed", sale["id"]), ("filing.filed", prepared["id"]), ("filing.prepared", prepared["id"])]
    assert got[0]["data"]["transaction"]["status"] == "filed"
    assert got[1]["data"]["filing"] == filed
    assert got[2]["data"]["filing"]["status"] == "prepared"


def test_paging_and_filters(http: httpx.Client, admin_http: httpx.Client) -> None:
    ids = [created(http.post("/customers", json={"source_id": f"p-{i}"}), 201)["id"] for i in range(5)]
    created(http.patch(f"/customers/{ids[0]}", json={"name": "x"}))
    every = events(admin_http)
    assert len(every) == 6
    page1 = created(admin_http.get("/events", params={"limit": 4}))
    assert page1["has_more"] is True and page1["data"] == every[:4]
    page2 = created(admin_http.get("/events", params={"limit": 4, "starting_after": every[3]["id"]}))
    assert page2["has_more"] is False and page2["data"] == every[4:]
    assert [e["object_id"] for e in events(admin_http, type="customer.created")] == ids[::-1]
    assert [e["type"] for e in events(admin_http, type="customer.updated")] == ["customer.updated"]
    assert events(admin_http, type="transaction.created") == []
    first = every[-1]["created_at"]
    assert events(admin_http, created_from="2000-01-01", created_to="2999-01-01") == every
    assert events(admin_http, created_to=first) == []
    assert events(admin_http, created_from=first)[-1] == every[-1]


def test_bad_filters_are_422_with_their_parameter(admin_http: httpx.Client) -> None:
    r = admin_http.get("/events", params={"type": "transaction.exploded", "created_from": "yesterday"})
    assert r.status_code == 422, r.text
    params = sorted(e["source"]["parameter"] for e in r.json()["errors"])
    assert params == ["created_from", "type"]
    r = admin_http.get("/events", params={"created_from": "2026-02-01", "created_to": "2026-01-01"})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["parameter"] == "created_to"


def test_events_need_an_admin_key_and_stay_in_their_organization(
        http: httpx.Client, admin_http: httpx.Client, server: LevyServer, other_tenant: Tenant) -> None:
    created(http.post("/customers", json={"source_id": "mine"}), 201)
    assert http.get("/events").status_code == 403
    mine = events(admin_http)[0]
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as other:
        assert other.get(f"/events/{mine['id']}").status_code == 404
        assert other.get("/events").json()["data"] == []
    assert admin_http.get("/events/evt_nope").status_code == 404


def test_grpc_lists_and_gets_the_same_events(http: httpx.Client, admin_http: httpx.Client, channel: grpc.Channel,
                                             tenant: Tenant) -> None:
    cust = created(http.post("/customers", json={"source_id": "g-1", "name": "Ada"}), 201)
    created(http.patch(f"/customers/{cust['id']}", json={"name": "Bea"}))
    stub = pbg.EventServiceStub(channel)
    page = stub.ListEvents(pb.ListEventsRequest(limit=1), metadata=md(tenant.admin_key))
    assert page.has_more and [e.type for e in page.data] == ["customer.updated"]
    event = page.data[0]
    assert event.object_type == "customer" and event.data.customer.name == "Bea"
    assert not event.data.HasField("transaction") and not event.data.HasField("filing")
    assert stub.GetEvent(pb.GetEventRequest(event_id=event.id), metadata=md(tenant.admin_key)) == event
    rest = events(admin_http, limit=1)[0]
    assert rest["id"] == event.id and rest["data"]["customer"]["name"] == "Bea"
    rest_page = stub.ListEvents(pb.ListEventsRequest(starting_after=event.id), metadata=md(tenant.admin_key))
    assert [e.type for e in rest_page.data] == ["customer.created"] and not rest_page.has_more
    err = call_error(stub.ListEvents, pb.ListEventsRequest(type="nope"), md(tenant.admin_key))
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT


def watch_error(stub: pbg.EventServiceStub, request: pb.WatchEventsRequest, key: str) -> Any:
    """The error a WatchEvents call ends with before sending anything."""
    return call_error(lambda req, metadata: next(iter(stub.WatchEvents(req, metadata=metadata, timeout=30))),
                      request, md(key))


def test_watch_events_streams_stored_then_new_events_of_its_organization(
        http: httpx.Client, admin_http: httpx.Client, channel: grpc.Channel, tenant: Tenant,
        other_tenant: Tenant, server: LevyServer) -> None:
    """gRPC server streaming: the events after the cursor, oldest first, then each new one as it
    is committed, of the caller's organization and the types asked only; ended by the client."""
    first = created(http.post("/customers", json={"source_id": "w-1"}), 201)
    second = created(http.post("/customers", json={"source_id": "w-2"}), 201)
    created(http.patch(f"/customers/{first['id']}", json={"name": "Ada"}))
    [cursor] = [e for e in events(admin_http) if e["object_id"] == first["id"] and e["type"] == "customer.created"]
    stub = pbg.EventServiceStub(channel)
    call = stub.WatchEvents(pb.WatchEventsRequest(starting_after=cursor["id"], types=["customer.created",
                                                                                     "customer.deleted"]),
                            metadata=md(tenant.admin_key), timeout=120)
    stream = iter(call)
    try:
        stored = next(stream)  # stored before the call: the second customer's (the update is filtered out)
        assert (stored.type, stored.object_id) == ("customer.created", second["id"])
        assert stored == stub.GetEvent(pb.GetEventRequest(event_id=stored.id), metadata=md(tenant.admin_key))
        # Committed while the stream is open: another organization's event, an update (filtered
        # out), then a delete: the delete is the next message.
        with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.key}) as other:
            created(other.post("/customers", json={"source_id": "elsewhere"}), 201)
        created(http.patch(f"/customers/{second['id']}", json={"name": "Bea"}))
        assert http.delete(f"/customers/{second['id']}").status_code == 204
        new = next(stream)
        assert (new.type, new.object_id) == ("customer.deleted", second["id"])
        assert new.data.customer.name == "Bea"
        assert new.id == events(admin_http, type="customer.deleted")[0]["id"]
    finally:
        call.cancel()


def test_watch_events_without_a_cursor_starts_now(http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
    created(http.post("/customers", json={"source_id": "before"}), 201)
    call = pbg.EventServiceStub(channel).WatchEvents(pb.WatchEventsRequest(), metadata=md(tenant.admin_key),
                                                     timeout=120)
    try:
        # The stream has started once its initial metadata arrived; what is committed after is sent.
        call.initial_metadata()
        after = created(http.post("/customers", json={"source_id": "after"}), 201)
        got = next(iter(call))
        assert (got.type, got.object_id) == ("customer.created", after["id"])
    finally:
        call.cancel()


def test_watch_events_refuses_bad_input_and_plain_keys(channel: grpc.Channel, tenant: Tenant) -> None:
    stub = pbg.EventServiceStub(channel)
    err = watch_error(stub, pb.WatchEventsRequest(types=["customer.created", "nope"]), tenant.admin_key)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.violations[0][0] == "/types/1", err
    err = watch_error(stub, pb.WatchEventsRequest(starting_after="evt_nope"), tenant.admin_key)
    assert err.code == grpc.StatusCode.NOT_FOUND
    assert watch_error(stub, pb.WatchEventsRequest(), tenant.key).code == grpc.StatusCode.PERMISSION_DENIED
    assert watch_error(stub, pb.WatchEventsRequest(), "lk_nope").code == grpc.StatusCode.UNAUTHENTICATED
