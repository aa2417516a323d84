"""Webhook endpoints and deliveries (issue 35) against a real server with a real HTTP receiver on
loopback, on SQLite and PostgreSQL: every event type delivered and verified by the
``standardwebhooks`` package, retries, order per object, replay, the URL policy, and a server
killed with SIGKILL between the commit and the delivery.

The module's server allows http and loopback receivers (LEVY_WEBHOOK_ALLOW_HTTP/_PRIVATE) and
retries after 0.2 s each time; the server every API test shares keeps the defaults (https only,
no private addresses). Figures by hand: a TX address without postal code is Texas 6.25 % only, so
a $100.00 sale (10000 cents) has a tax of 625.
"""

from __future__ import annotations

import ipaddress
import signal
import socket
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from levy_client.webhooks import verify_webhook
from standardwebhooks import Webhook

from levy.domain.events import TYPES as EVENT_TYPES
from levyserver import LevyServer, Tenant, create_tenant, fresh_database, own_server, start_server
from txn_api import line, register
from webhook_receiver import FAST, Receiver, receiver

D = "2026-01-15T12:00:00Z"
FAST = {**FAST, "LEVY_EVENT_JOB_SECONDS": "0.1"}  # the events job's time-based events are delivered too


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def hooks_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("webhooks"), FAST, timeout=180) as srv:
        yield srv


@pytest.fixture
def rx() -> Iterator[Receiver]:
    """A receiver of the test's own (its requests are the test's only)."""
    with receiver() as r:
        yield r


@pytest.fixture
def org(hooks_server: LevyServer) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """(plain, admin) clients of a new organization on the module's server."""
    t = create_tenant(hooks_server.database_url)
    with httpx.Client(base_url=hooks_server.http_url, headers={"X-API-Key": t.key}, timeout=30) as plain, \
            httpx.Client(base_url=hooks_server.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as admin:
        yield plain, admin


def ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert r.status_code == status, r.text
    return dict(r.json()) if r.content else {}


def endpoint(admin: httpx.Client, url: str, types: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return ok(admin.post("/webhook-endpoints", json={"url": url, "enabled_events": types or ["*"], **extra}), 201)


def deliveries(admin: httpx.Client, endpoint_id: str, until: Callable[[list[dict[str, Any]]], bool],
               timeout: float = 30) -> list[dict[str, Any]]:
    """The endpoint's delivery log, once ``until`` holds for it (the receiver may have answered
    before the server logged the attempt)."""
    deadline = time.monotonic() + timeout
    while True:
        found = ok(admin.get(f"/webhook-endpoints/{endpoint_id}/deliveries"))["data"]
        if (found and until(found)) or time.monotonic() > deadline:
            assert found and until(found), found
            return list(found)
        time.sleep(0.05)


def only_delivery(admin: httpx.Client, endpoint_id: str, until: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The endpoint's one delivery, once ``until`` holds for it."""
    [delivery] = deliveries(admin, endpoint_id, lambda found: len(found) == 1 and until(found[0]))
    return delivery


def day(offset: int) -> str:
    """A date ``offset`` days from today on the server's (UTC) calendar."""
    return (datetime.now(timezone.utc).date() + timedelta(days=offset)).isoformat()


def stored_types(admin: httpx.Client, *types: str, timeout: float = 60) -> list[dict[str, Any]]:
    """The organization's events once one of each of ``types`` is stored (the events job's)."""
    deadline = time.monotonic() + timeout
    while True:
        stored = list(ok(admin.get("/events", params={"limit": 1000}))["data"])
        if set(types) <= {e["type"] for e in stored} or time.monotonic() > deadline:
            assert set(types) <= {e["type"] for e in stored}, [e["type"] for e in stored]
            return stored
        time.sleep(0.05)


def verified(ep: dict[str, Any], got: list[Any]) -> list[dict[str, Any]]:
    """Each request's event, after ``standardwebhooks`` verified its signature with the endpoint's secret."""
    return [Webhook(ep["secret"]).verify(r.body, r.headers) for r in got]


# ------------------------------------------------------------------ endpoints


def test_endpoint_lifecycle_and_secret_shown_once(org: tuple[httpx.Client, httpx.Client], rx: Receiver) -> None:
    plain, admin = org
    ep = endpoint(admin, rx.url("/crud"), ["customer.created"], description="ledger")
    assert ep["id"].startswith("we_") and ep["secret"].startswith("whsec_") and ep["enabled"] is True
    assert ep["enabled_events"] == ["customer.created"] and ep["description"] == "ledger"
    got = ok(admin.get(f"/webhook-endpoints/{ep['id']}"))
    assert got["secret"] is None and got["url"] == rx.url("/crud")
    assert [e["id"] for e in ok(admin.get("/webhook-endpoints"))["data"]] == [ep["id"]]
    changed = ok(admin.patch(f"/webhook-endpoints/{ep['id']}", json={"enabled_events": ["*"], "enabled": False}))
    assert changed["enabled_events"] == ["*"] and changed["enabled"] is False and changed["description"] == "ledger"
    rotated = ok(admin.post(f"/webhook-endpoints/{ep['id']}/rotate-secret", json={}))
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != ep["secret"]
    assert plain.get("/webhook-endpoints").status_code == 403
    assert admin.delete(f"/webhook-endpoints/{ep['id']}").status_code == 204
    assert admin.get(f"/webhook-endpoints/{ep['id']}").status_code == 404


def test_bad_endpoints_are_422_with_their_pointer(org: tuple[httpx.Client, httpx.Client]) -> None:
    _, admin = org
    r = admin.post("/webhook-endpoints", json={"url": "ftp://example.com/x", "enabled_events": ["nope.nope", "*"]})
    assert r.status_code == 422, r.text
    assert sorted(e["source"]["pointer"] for e in r.json()["errors"]) == ["/enabled_events/0", "/url"]
    r = admin.post("/webhook-endpoints", json={"enabled_events": ["*"]})
    assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/url"


@pytest.mark.parametrize("url", ["https://10.1.2.3/hook", "https://127.0.0.1/hook", "https://169.254.169.254/latest",
                                 "https://[::1]/hook", "https://localhost/hook", "https://192.168.0.10/hook"])
def test_an_endpoint_inside_the_network_is_refused_by_default(admin_http: httpx.Client, url: str) -> None:
    r = admin_http.post("/webhook-endpoints", json={"url": url, "enabled_events": ["*"]})
    assert r.status_code == 422, r.text
    err = r.json()["errors"][0]
    assert err["code"] == "webhook_url_refused" and err["source"]["pointer"] == "/url"


def test_http_is_refused_by_default(admin_http: httpx.Client) -> None:
    r = admin_http.post("/webhook-endpoints", json={"url": "http://example.com/hook", "enabled_events": ["*"]})
    assert r.status_code == 422 and "https" in r.json()["errors"][0]["detail"]
    assert ok(admin_http.post("/webhook-endpoints", json={"url": "https://example.com/hook",
                                                           "enabled_events": ["*"]}), 201)["secret"]


# ------------------------------------------------------------------ deliveries


def test_every_event_type_is_delivered_signed(org: tuple[httpx.Client, httpx.Client], rx: Receiver) -> None:
    plain, admin = org
    ep = endpoint(admin, rx.url("/all"))
    register(admin, "TX")
    cust = ok(plain.post("/customers", json={"source_id": "c-1", "name": "Ada"}), 201)
    ok(plain.patch(f"/customers/{cust['id']}", json={"name": "Grace"}))
    assert plain.delete(f"/customers/{cust['id']}").status_code == 204
    sale = ok(plain.post("/transactions", json={"type": "sale", "status": "draft", "transaction_date": D,
                                                "line_items": [line(price=10000)]}))
    assert sale["tax_amount"] == "625"  # 10000 x 6.25 %
    ok(plain.post(f"/transactions/{sale['id']}", json={"status": "finalized"}))
    credit = ok(plain.post("/transactions", json={"type": "credit", "status": "draft", "transaction_date": D,
                                                  "parent_transaction_id": sale["id"]}))
    ok(plain.post(f"/transactions/{credit['id']}", json={"status": "void"}))
    period = {"jurisdiction": "US-ST-TX", "period_start": "2026-01-01", "period_end": "2026-01-31"}
    filing = ok(admin.post("/filings", json=period), 201)
    ok(admin.post(f"/filings/{filing['id']}", json={"status": "filed"}))
    # Certificates: created, updated, deleted; one expiring in 10 days, one expired 3 days ago
    # (the events job, every 0.1 s here, produces those two).
    holder = ok(plain.post("/customers", json={"source_id": "c-2"}), 201)["id"]
    certs = f"/customers/{holder}/exemption-certificates"
    cert = {"jurisdiction": "US-ST-TX", "exemption_type": "resale", "status": "valid"}
    gone = ok(admin.post(certs, json=cert), 201)
    ok(admin.patch(f"{certs}/{gone['id']}", json={"status": "rejected"}))
    assert admin.delete(f"{certs}/{gone['id']}").status_code == 204
    ok(admin.post(certs, json={**cert, "expires_at": day(10)}), 201)
    ok(admin.post(certs, json={**cert, "starts_at": day(-100), "expires_at": day(-3)}), 201)
    # Nexus in Texas (threshold 50,000,000 cents over 12 months): 45,000,000 is 0.9, approaching;
    # 10,000,000 more is 1.1, crossed.
    big = {"type": "sale", "status": "finalized", "transaction_date": f"{day(-5)}T12:00:00Z"}
    ok(plain.post("/transactions", json={**big, "line_items": [line(price=45_000_000)]}))
    stored_types(admin, "nexus.threshold_approaching")
    ok(plain.post("/transactions", json={**big, "line_items": [line(price=10_000_000)]}))
    stored_types(admin, "nexus.threshold_crossed")

    stored = stored_types(admin, "certificate.expiring", "certificate.expired")
    types = {e["type"] for e in stored}
    assert types == set(EVENT_TYPES) - {"webhook_endpoint.disabled"}  # that one: its own test below
    assert types == {"customer.created", "customer.updated", "customer.deleted", "transaction.created",
                     "transaction.finalized", "credit.created", "transaction.voided", "filing.prepared",
                     "filing.filed", "transaction.filed", "certificate.created", "certificate.updated",
                     "certificate.deleted", "certificate.expiring", "certificate.expired",
                     "nexus.threshold_approaching", "nexus.threshold_crossed"}
    got = rx.wait("/all", lambda g: {r.headers["webhook-id"] for r in g} >= {e["id"] for e in stored})
    bodies = verified(ep, got)
    by_id = {b["id"]: b for b in bodies}
    for e in stored:
        assert by_id[e["id"]] == e  # the body is the event as GET /events renders it
    assert all(r.headers["webhook-id"] == r.event["id"] for r in got)
    assert verify_webhook(ep["secret"], got[0].body, got[0].headers) == bodies[0]  # the Python client's helper
    with pytest.raises(Exception):  # another secret does not verify
        Webhook("whsec_" + "A" * 44).verify(got[0].body, got[0].headers)
    log = deliveries(admin, ep["id"], lambda found: {d["status"] for d in found} == {"succeeded"})
    assert len(log) == len(stored)
    first = log[-1]["attempts"][0]
    assert first["status_code"] == 200 and first["succeeded"] is True and first["response_excerpt"] == "ok"


def test_a_receiver_failing_twice_gets_it_on_the_third_attempt(org: tuple[httpx.Client, httpx.Client],
                                                                rx: Receiver) -> None:
    plain, admin = org
    rx.fail_first("/flaky", 2)
    ep = endpoint(admin, rx.url("/flaky"), ["customer.created"])
    cust = ok(plain.post("/customers", json={"source_id": "f-1"}), 201)
    got = rx.wait("/flaky", lambda g: any(r.answered == 200 for r in g))
    assert [r.answered for r in got] == [500, 500, 200]
    assert {r.headers["webhook-id"] for r in got} == {got[0].event["id"]}
    assert all(b["data"]["customer"]["id"] == cust["id"] for b in verified(ep, got))
    delivery = only_delivery(admin, ep["id"], lambda d: d["status"] == "succeeded")
    assert delivery["next_attempt_at"] is None
    assert [(a["number"], a["status_code"], a["succeeded"]) for a in delivery["attempts"]] == [
        (1, 500, False), (2, 500, False), (3, 200, True)]
    assert delivery["attempts"][0]["response_excerpt"] == "nope"

    replayed = ok(admin.post(f"/webhook-endpoints/{ep['id']}/deliveries/{delivery['id']}/replay", json={}))
    assert replayed["status"] == "pending"
    again = rx.wait("/flaky", lambda g: len(g) == 4)
    assert again[3].headers["webhook-id"] == got[0].headers["webhook-id"] and again[3].answered == 200


def test_a_receiver_that_never_accepts_fails_after_the_schedule(org: tuple[httpx.Client, httpx.Client],
                                                                 rx: Receiver) -> None:
    plain, admin = org
    rx.fail_first("/down", 100)
    ep = endpoint(admin, rx.url("/down"), ["customer.created"])
    ok(plain.post("/customers", json={"source_id": "d-1"}), 201)
    rx.wait("/down", lambda g: len(g) == 4)  # the first attempt and the schedule's 3 retries
    delivery = only_delivery(admin, ep["id"], lambda d: d["status"] == "failed")
    assert len(delivery["attempts"]) == 4 and delivery["next_attempt_at"] is None
    assert len(rx.at("/down")) == 4


def test_events_of_one_object_arrive_in_order(org: tuple[httpx.Client, httpx.Client], rx: Receiver) -> None:
    plain, admin = org
    rx.fail_first("/order", 1)  # the first event is retried: the later ones wait for it
    endpoint(admin, rx.url("/order"), ["customer.created", "customer.updated"])
    cust = ok(plain.post("/customers", json={"source_id": "o-1", "name": "n0"}), 201)
    for i in range(1, 5):
        ok(plain.patch(f"/customers/{cust['id']}", json={"name": f"n{i}"}))
    got = rx.wait("/order", lambda g: sum(r.answered == 200 for r in g) == 5)
    accepted = [r.event["data"]["customer"]["name"] for r in got if r.answered == 200]
    assert accepted == ["n0", "n1", "n2", "n3", "n4"]


# ------------------------------------------------------------------ own servers


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_sigkill_between_commit_and_delivery_then_restart_delivers(kind: str, tmp_path: Path) -> None:
    with fresh_database(kind, tmp_path) as url, receiver() as rx:
        srv = start_server(url, tmp_path, extra_env={**FAST, "LEVY_WEBHOOK_WORKER": "false"}, timeout=180)
        try:
            t = create_tenant(url)
            admin = httpx.Client(base_url=srv.http_url, headers={"X-API-Key": t.admin_key}, timeout=30)
            ep = endpoint(admin, rx.url("/kill"), ["customer.created"])
            cust = ok(admin.post("/customers", json={"source_id": "k-1"}), 201)
        finally:
            srv.stop(signal.SIGKILL)
        assert rx.at("/kill") == []  # committed, not delivered
        srv = start_server(url, tmp_path, extra_env=FAST, timeout=180)
        try:
            got = rx.wait("/kill", lambda g: len(g) >= 1)
            assert verified(ep, got)[0]["data"]["customer"]["id"] == cust["id"]
        finally:
            assert srv.stop() == 0, srv.log()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_name_resolving_inside_the_network_is_refused_at_delivery(kind: str, tmp_path: Path) -> None:
    host = socket.gethostname()
    address = socket.getaddrinfo(host, 80)[0][4][0]
    if ipaddress.ip_address(address).is_global:
        pytest.skip(f"this machine's name resolves to a public address ({address})")
    env = {**FAST, "LEVY_WEBHOOK_ALLOW_PRIVATE": "false"}
    with fresh_database(kind, tmp_path) as url, receiver() as rx:
        srv = start_server(url, tmp_path, extra_env=env, timeout=180)
        try:
            t: Tenant = create_tenant(url)
            admin = httpx.Client(base_url=srv.http_url, headers={"X-API-Key": t.admin_key}, timeout=30)
            ep = endpoint(admin, f"http://{host}:{rx.port}/inside", ["customer.created"])
            ok(admin.post("/customers", json={"source_id": "i-1"}), 201)
            delivery = only_delivery(admin, ep["id"], lambda d: bool(d["attempts"]))
            excerpt = delivery["attempts"][0]["response_excerpt"]
            assert delivery["attempts"][0]["status_code"] is None and "SSRF" in excerpt, excerpt
            assert rx.at("/inside") == []
        finally:
            assert srv.stop() == 0, srv.log()


def test_two_replicas_on_postgresql_deliver_each_event_once(tmp_path: Path) -> None:
    """Two servers on one PostgreSQL database, both running the worker: each of 30 events is
    taken by one of them (FOR UPDATE SKIP LOCKED) and arrives once (the normal case: no crash)."""
    with fresh_database("postgres", tmp_path) as url, receiver() as rx:
        first = start_server(url, tmp_path, extra_env=FAST, timeout=180)
        second = start_server(url, tmp_path, extra_env=FAST, timeout=180)
        try:
            t = create_tenant(url)
            with httpx.Client(base_url=first.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as a, \
                    httpx.Client(base_url=second.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as b:
                endpoint(a, rx.url("/replicas"), ["customer.created"])
                for i in range(30):
                    ok((a if i % 2 else b).post("/customers", json={"source_id": f"r-{i}"}), 201)
            got = rx.wait("/replicas", lambda g: len({r.headers["webhook-id"] for r in g}) == 30)
            time.sleep(1)  # anything sent twice would have arrived by now
            ids = [r.headers["webhook-id"] for r in rx.at("/replicas")]
            assert len(ids) == 30 == len(set(ids)), len(got)
        finally:
            assert first.stop() == 0, first.log()
            assert second.stop() == 0, second.log()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_an_endpoint_failing_long_enough_is_disabled_with_an_event(kind: str, tmp_path: Path) -> None:
    # Disabled after 0.0005 h (1.8 s) of failures; retried every 0.5 s meanwhile (8 retries: 4 s).
    env = {**FAST, "LEVY_WEBHOOK_DISABLE_AFTER_HOURS": "0.0005", "LEVY_WEBHOOK_RETRY_SCHEDULE": ",".join(["0.5s"] * 8)}
    with fresh_database(kind, tmp_path) as url, receiver() as rx:
        srv = start_server(url, tmp_path, extra_env=env, timeout=180)
        try:
            t = create_tenant(url)
            with httpx.Client(base_url=srv.http_url, headers={"X-API-Key": t.admin_key}, timeout=30) as admin:
                rx.fail_first("/broken", 1000)
                broken = endpoint(admin, rx.url("/broken"), ["customer.created"])
                watcher = endpoint(admin, rx.url("/watcher"), ["webhook_endpoint.disabled"])
                ok(admin.post("/customers", json={"source_id": "x-1"}), 201)
                [note] = rx.wait("/watcher", lambda g: len(g) == 1)
                event = verified(watcher, [note])[0]
                assert event["type"] == "webhook_endpoint.disabled" and event["object_id"] == broken["id"]
                assert event["data"]["webhook_endpoint"]["enabled"] is False
                assert event["data"]["webhook_endpoint"]["secret"] is None
                got = ok(admin.get(f"/webhook-endpoints/{broken['id']}"))
                assert got["enabled"] is False and "every delivery failed" in got["disabled_reason"]
                delivery = only_delivery(admin, broken["id"], lambda d: d["status"] == "failed")
                assert 2 <= len(delivery["attempts"]) < 9  # stopped before the schedule ran out
                again = ok(admin.patch(f"/webhook-endpoints/{broken['id']}", json={"enabled": True}))
                assert again["enabled"] is True and again["disabled_reason"] is None
        finally:
            assert srv.stop() == 0, srv.log()
