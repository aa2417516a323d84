"""The events job (issue 35) against a real server, on SQLite and PostgreSQL: certificate
changes reported as events; ``certificate.expiring`` / ``certificate.expired`` and
``nexus.threshold_approaching`` / ``nexus.threshold_crossed`` produced once per object and
period by the periodic job, also with two replicas on one PostgreSQL database; old events and
settled deliveries pruned.

The module's server runs the job every 0.1 s (``LEVY_EVENT_JOB_SECONDS``) with the default 30 days
of ``LEVY_CERTIFICATE_EXPIRING_DAYS``. "Later passes ran" is shown without timing: a sentinel
certificate expiring tomorrow is created and its event awaited, twice; the second can only be
produced by a pass that began after the first sentinel's pass had ended.

Figures by hand (the server's calendar is UTC; dates sit at least two days from a boundary so a
run crossing midnight holds): Texas's threshold is $500,000 of sales over the 12 months up to
the day (project data, ``levy/data/nexus/thresholds.json``), 50,000,000 cents. A sale of
45,000,000 cents is a share of 45,000,000 / 50,000,000 = 0.9000: at least 0.8, approaching; a
further 10,000,000 makes 55,000,000, a share of 1.1000: crossed on the day of that sale.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from levyserver import (
    LevyServer,
    create_tenant,
    fresh_database,
    own_server,
    start_server,
)
from txn_api import line, register
from webhook_receiver import receiver

JOB = {"LEVY_EVENT_JOB_SECONDS": "0.1", "LEVY_WEBHOOK_POLL_SECONDS": "0.05"}
TODAY = datetime.now(UTC).date()


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def job_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("eventjobs"), JOB, timeout=180) as srv:
        yield srv


@pytest.fixture
def admin(job_server: LevyServer) -> Iterator[httpx.Client]:
    """An admin client of a new organization on the module's server."""
    with client(job_server, create_tenant(job_server.database_url).admin_key) as c:
        yield c


def client(srv: LevyServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=srv.http_url, headers={"X-API-Key": key}, timeout=30)


def ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert r.status_code == status, r.text
    return dict(r.json()) if r.content else {}


def events(admin: httpx.Client, type_: str | None = None) -> list[dict[str, Any]]:
    params = {"limit": 1000, **({"type": type_} if type_ else {})}
    return list(ok(admin.get("/events", params=params))["data"])


def wait_for(admin: httpx.Client, until: Callable[[list[dict[str, Any]]], bool],
             timeout: float = 60) -> list[dict[str, Any]]:
    """The organization's events once ``until`` holds for them."""
    deadline = time.monotonic() + timeout
    while True:
        got = events(admin)
        if until(got) or time.monotonic() > deadline:
            assert until(got), [(e["type"], e["object_id"]) for e in got]
            return got
        time.sleep(0.05)


def customer(admin: httpx.Client, source_id: str) -> str:
    return str(ok(admin.post("/customers", json={"source_id": source_id}), 201)["id"])


def certificate(admin: httpx.Client, cid: str, **body: Any) -> dict[str, Any]:
    body.setdefault("jurisdiction", "US-ST-TX")
    body.setdefault("exemption_type", "resale")
    body.setdefault("status", "valid")
    return ok(admin.post(f"/customers/{cid}/exemption-certificates", json=body), 201)


def later_passes_ran(admin: httpx.Client) -> None:
    """Two more passes of the job ran to their end (see the module doc)."""
    cid = customer(admin, f"sentinel-{time.monotonic_ns()}")
    for _ in range(2):
        sentinel = certificate(admin, cid, expires_at=day(1))
        wait_for(admin, lambda got, made=sentinel["id"]: any(
            e["type"] == "certificate.expiring" and e["object_id"] == made for e in got))


def of(got: list[dict[str, Any]], type_: str) -> list[str]:
    return sorted(e["object_id"] for e in got if e["type"] == type_)


def sale(admin: httpx.Client, cents: int, on: str) -> dict[str, Any]:
    return ok(admin.post("/transactions", json={"type": "sale", "status": "finalized",
                                                "transaction_date": f"{on}T12:00:00Z",
                                                "line_items": [line(price=cents)]}))


# ------------------------------------------------------------------ certificate changes


def test_certificate_changes_are_events_with_the_certificate_as_the_api_returned_it(admin: httpx.Client) -> None:
    cid = customer(admin, "c-1")
    cert = certificate(admin, cid, expires_at=day(300))
    changed = ok(admin.patch(f"/customers/{cid}/exemption-certificates/{cert['id']}", json={"status": "rejected"}))
    assert admin.delete(f"/customers/{cid}/exemption-certificates/{cert['id']}").status_code == 204
    other = certificate(admin, cid, jurisdiction="US-ST-CA")
    assert admin.delete(f"/customers/{cid}").status_code == 204  # its certificates go with it

    got = [e for e in events(admin) if e["object_type"] == "certificate"]
    assert [(e["type"], e["object_id"]) for e in got] == [  # newest first
        ("certificate.deleted", other["id"]),
        ("certificate.created", other["id"]),
        ("certificate.deleted", cert["id"]),
        ("certificate.updated", cert["id"]),
        ("certificate.created", cert["id"]),
    ]
    assert got[4]["data"]["certificate"] == cert
    assert got[3]["data"]["certificate"] == changed and changed["status"] == "rejected"
    assert got[2]["data"]["certificate"] == changed
    assert got[0]["data"]["certificate"] == other
    assert got[0]["data"]["customer"] is None and got[0]["data"]["nexus_state"] is None


# ------------------------------------------------------------------ certificates expiring and expired


def test_certificates_expiring_and_expired_are_produced_once(admin: httpx.Client) -> None:
    cid = customer(admin, "c-1")
    soon = certificate(admin, cid, expires_at=day(10))  # within 30 days: expiring
    reviewed = certificate(admin, cid, status="in_review", expires_at=day(20))  # in review: expiring too
    far = certificate(admin, cid, expires_at=day(40))  # 40 > 30: nothing yet
    ended = certificate(admin, cid, starts_at=day(-300), expires_at=day(-3))  # ended 3 days ago: expired
    certificate(admin, cid, starts_at=day(-300), expires_at=day(-40))  # ended 40 > 30 days ago: nothing
    certificate(admin, cid, status="rejected", expires_at=day(5))  # rejected: nothing
    certificate(admin, cid, status="renewed", starts_at=day(-300), expires_at=day(-3))  # renewed: nothing
    certificate(admin, cid)  # no expiry: nothing

    wait_for(admin, lambda got: len(of(got, "certificate.expiring")) == 2 and len(of(got, "certificate.expired")) == 1)
    later_passes_ran(admin)
    got = events(admin)
    sentinels = set(of(got, "certificate.expiring")) - {soon["id"], reviewed["id"]}
    assert len(sentinels) == 2  # the two of later_passes_ran
    assert of(got, "certificate.expiring") == sorted([soon["id"], reviewed["id"], *sentinels])
    assert of(got, "certificate.expired") == [ended["id"]]
    by_id = {e["object_id"]: e for e in got if e["type"] == "certificate.expiring"}
    assert by_id[soon["id"]]["data"]["certificate"] == soon  # the certificate as the API returned it
    assert by_id[soon["id"]]["object_type"] == "certificate"

    # A new expiry date is a new period: the far certificate brought within 30 days is announced,
    # once; the soon one moved away is not announced again.
    moved = ok(admin.patch(f"/customers/{cid}/exemption-certificates/{far['id']}", json={"expires_at": day(15)}))
    ok(admin.patch(f"/customers/{cid}/exemption-certificates/{soon['id']}", json={"expires_at": day(200)}))
    wait_for(admin, lambda got: far["id"] in of(got, "certificate.expiring"))
    later_passes_ran(admin)
    expiring = [e for e in events(admin, "certificate.expiring") if e["object_id"] in (soon["id"], far["id"])]
    assert sorted(e["object_id"] for e in expiring) == sorted([soon["id"], far["id"]])
    assert [e["data"]["certificate"] for e in expiring if e["object_id"] == far["id"]] == [moved]


# ------------------------------------------------------------------ nexus


def test_nexus_approaching_then_crossed_are_produced_once(admin: httpx.Client) -> None:
    register(admin, "TX")
    sale(admin, 45_000_000, day(-5))  # 0.9000 of Texas's 50,000,000
    got = wait_for(admin, lambda got: bool(of(got, "nexus.threshold_approaching")))
    later_passes_ran(admin)
    got = events(admin)
    [approaching] = [e for e in got if e["type"] == "nexus.threshold_approaching"]
    assert of(got, "nexus.threshold_crossed") == []
    assert approaching["object_type"] == "nexus_state" and approaching["object_id"] == "US-ST-TX"
    state = approaching["data"]["nexus_state"]
    assert (state["state"], state["sales_amount"], state["sales_threshold"], state["threshold_share"],
            state["exceeded"], state["is_registered"], state["crossed_on"]) == (
        "TX", "45000000", "50000000", "0.9000", False, True, None)
    # The same line as GET /nexus shows it today.
    [line_today] = [s for s in ok(admin.get("/nexus"))["states"] if s["state"] == "TX"]
    assert state == line_today

    sale(admin, 10_000_000, day(-3))  # 55,000,000: 1.1000, crossed on that day
    wait_for(admin, lambda got: bool(of(got, "nexus.threshold_crossed")))
    later_passes_ran(admin)
    got = events(admin)
    assert of(got, "nexus.threshold_approaching") == ["US-ST-TX"]
    [crossed] = [e for e in got if e["type"] == "nexus.threshold_crossed"]
    state = crossed["data"]["nexus_state"]
    assert (state["sales_amount"], state["threshold_share"], state["exceeded"], state["crossed_on"],
            state["needs_registration"]) == ("55000000", "1.1000", True, day(-3), False)


def test_a_state_below_the_share_is_no_event(admin: httpx.Client) -> None:
    sale(admin, 39_000_000, day(-5))  # 0.7800 of 50,000,000: below 0.8
    later_passes_ran(admin)
    assert [e["type"] for e in events(admin) if e["type"].startswith("nexus.")] == []
    [tx] = [s for s in ok(admin.get("/nexus"))["states"] if s["state"] == "TX"]
    assert tx["threshold_share"] == "0.7800"


def test_the_organizations_own_share_decides_approaching(admin: httpx.Client) -> None:
    # 30,000,000 of Texas's 50,000,000 is 0.6000: below the default 0.8, at or above the 0.6 set here.
    assert ok(admin.get("/organization/settings"))["nexus_approaching_share"] == "0.8"
    for bad in ("1", "0", "-0.2", "0.12345", "eighty", "1.5"):
        r = admin.patch("/organization/settings", json={"nexus_approaching_share": bad})
        assert r.status_code == 422 and r.json()["errors"][0]["source"]["pointer"] == "/nexus_approaching_share", bad
    assert ok(admin.patch("/organization/settings", json={"nexus_approaching_share": "0.6"}))[
        "nexus_approaching_share"] == "0.6"
    sale(admin, 30_000_000, day(-5))
    got = wait_for(admin, lambda got: bool(of(got, "nexus.threshold_approaching")))
    assert of(got, "nexus.threshold_approaching") == ["US-ST-TX"] and of(got, "nexus.threshold_crossed") == []
    report = ok(admin.get("/nexus"))
    assert report["approaching_share"] == "0.6"
    assert [s["threshold_share"] for s in report["states"] if s["state"] == "TX"] == ["0.6000"]
    # Null puts the default back.
    assert ok(admin.patch("/organization/settings", json={"nexus_approaching_share": None}))[
        "nexus_approaching_share"] == "0.8"
    assert ok(admin.get("/nexus"))["approaching_share"] == "0.8"


# ------------------------------------------------------------------ two replicas


def test_two_replicas_on_postgresql_produce_each_event_once(tmp_path: Path) -> None:
    """Two servers on one PostgreSQL database, both running the job every 0.02 s: the marks'
    unique key lets one of them write each event."""
    env = {**JOB, "LEVY_EVENT_JOB_SECONDS": "0.02"}
    with fresh_database("postgres", tmp_path) as url:
        first = start_server(url, tmp_path, extra_env=env, timeout=180)
        second = start_server(url, tmp_path, extra_env=env, timeout=180)
        try:
            t = create_tenant(url)
            with client(first, t.admin_key) as a, client(second, t.admin_key) as b:
                register(a, "TX")
                cid = customer(a, "c-1")
                certs = [certificate(a if i % 2 else b, cid, expires_at=day(5 + i)) for i in range(10)]
                expired = [certificate(b, cid, starts_at=day(-100), expires_at=day(-5 - i)) for i in range(5)]
                sale(b, 45_000_000, day(-5))
                wait_for(a, lambda got: len(of(got, "certificate.expiring")) == 10
                         and len(of(got, "certificate.expired")) == 5 and bool(of(got, "nexus.threshold_approaching")))
                later_passes_ran(a)
                later_passes_ran(b)
                got = events(b)
            sentinels = set(of(got, "certificate.expiring")) - {c["id"] for c in certs}
            assert len(sentinels) == 4
            assert of(got, "certificate.expiring") == sorted([c["id"] for c in certs] + list(sentinels))
            assert of(got, "certificate.expired") == sorted(c["id"] for c in expired)
            assert of(got, "nexus.threshold_approaching") == ["US-ST-TX"]
        finally:
            assert first.stop() == 0, first.log()
            assert second.stop() == 0, second.log()


# ------------------------------------------------------------------ retention


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_old_events_and_settled_deliveries_are_pruned(kind: str, tmp_path: Path) -> None:
    """Kept 0.00002 days (1.728 s): an event delivered is pruned with its delivery; one whose
    delivery is still being retried stays, with its delivery."""
    env = {**JOB, "LEVY_EVENT_RETENTION_DAYS": "0.00002", "LEVY_WEBHOOK_ALLOW_HTTP": "true",
           "LEVY_WEBHOOK_ALLOW_PRIVATE": "true", "LEVY_WEBHOOK_RETRY_SCHEDULE": "1h"}
    with fresh_database(kind, tmp_path) as url, receiver() as rx:
        srv = start_server(url, tmp_path, extra_env=env, timeout=180)
        try:
            t = create_tenant(url)
            with client(srv, t.admin_key) as admin:
                good = ok(admin.post("/webhook-endpoints", json={"url": rx.url("/good"),
                                                                 "enabled_events": ["customer.created"]}), 201)
                rx.fail_first("/bad", 1000)
                bad = ok(admin.post("/webhook-endpoints", json={"url": rx.url("/bad"),
                                                                "enabled_events": ["customer.updated"]}), 201)
                cid = customer(admin, "c-1")
                ok(admin.patch(f"/customers/{cid}", json={"name": "Ada"}))
                rx.wait("/good", lambda g: len(g) == 1)
                rx.wait("/bad", lambda g: len(g) == 1)
                kept = wait_for(admin, lambda got: [e["type"] for e in got] == ["customer.updated"])
                assert kept[0]["object_id"] == cid
                assert ok(admin.get(f"/webhook-endpoints/{good['id']}/deliveries"))["data"] == []
                [pending] = ok(admin.get(f"/webhook-endpoints/{bad['id']}/deliveries"))["data"]
                assert pending["status"] == "pending" and pending["event_id"] == kept[0]["id"]
        finally:
            assert srv.stop() == 0, srv.log()
