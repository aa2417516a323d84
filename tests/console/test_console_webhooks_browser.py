"""The console's Webhooks and Events pages (issue 35) in a real browser (Debian's chromium
driven by Playwright, as tests/console/test_console_browser.py) against a real ``levy serve``
on SQLite that delivers to a real HTTP receiver on loopback (tests/webhook_receiver.py): the
module's server allows http and loopback receivers (LEVY_WEBHOOK_ALLOW_HTTP/_PRIVATE, as
tests/api/test_webhooks.py) and polls every 0.05 s.

An endpoint created in the console shows its secret once, and that secret verifies the
delivery the receiver gets (the ``standardwebhooks`` package); the delivery log shows the
delivery (status, attempts, HTTP status, latency, the receiver's answer) and Replay sends it
again with the same ``webhook-id``; rotation shows a new secret once; deleting asks first;
the events list filters by type and date and an event's page shows its payload as text with
a link to its object; members get 403; axe-core finds no serious violation on these pages at
desktop and phone widths, and the phone width keeps them within the screen. Skips as the
other browser tests do when chromium, Playwright or npm are missing."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from consolekit import ConsoleClient, create_user, in_thread
from levyserver import LevyServer, Tenant, _create_tenant, own_server
from standardwebhooks import Webhook
from test_console_browser import (  # noqa: F401 (browser, admin_page, axe_source: fixtures)
    DESKTOP,
    PHONE,
    admin_page,
    axe_source,
    browser,
    expect,
    serious_violations,
    shot,
    sign_in,
)
from webhook_receiver import FAST, Receiver, receiver


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server("sqlite", tmp_path_factory.mktemp("hooksbrowser"), FAST) as srv:
        yield srv


@pytest.fixture
def org(site: LevyServer) -> Tenant:
    """An organization of the test's own: its events and endpoints are the test's only."""
    return in_thread(_create_tenant(site.database_url))


@pytest.fixture
def rx() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


@pytest.fixture
def api(site: LevyServer, org: Tenant) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key}, timeout=30) as client:
        yield client


@pytest.fixture
def page(admin_page: Any) -> Any:  # noqa: F811 (admin_page: the other module's, on this module's site and org)
    return admin_page


def customer(api: httpx.Client, name: str) -> dict[str, Any]:
    r = api.post("/customers", json={"source_id": "wh-" + uuid.uuid4().hex[:8], "name": name})
    assert r.status_code == 201, r.text
    return dict(r.json())


def reload_until(page: Any, ready: Callable[[], bool], timeout: float = 30) -> None:
    """Reload the page until ``ready()`` (the worker logs an attempt after the receiver answered)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, page.content()
        time.sleep(0.2)
        page.reload()


def add_endpoint(page: Any, site: LevyServer, url: str, types: str) -> tuple[str, str]:
    """Add an endpoint through the form; (its id, the secret shown)."""
    page.goto(site.http_url + "/console/webhooks")
    page.get_by_label("URL").fill(url)
    page.get_by_label("Event types").fill(types)
    page.get_by_label("Description").fill("ledger <sync>")
    page.get_by_role("button", name="Add endpoint").click()
    secret = page.get_by_label("The endpoint's signing secret").input_value()
    endpoint_id = page.locator("#secret-title a").get_attribute("href").rsplit("/", 1)[1]
    return endpoint_id, secret


def test_an_endpoint_shows_its_secret_once_and_logs_a_real_delivery_then_a_replay(
        page: Any, site: LevyServer, api: httpx.Client, rx: Receiver) -> None:
    endpoint_id, secret = add_endpoint(page, site, rx.url("/hook"), "customer.created")
    assert secret.startswith("whsec_") and endpoint_id.startswith("we_")
    shot(page, "webhooks-created-desktop")
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    # The list names it; the secret is never shown again, on the list or on the endpoint's page.
    page.goto(site.http_url + "/console/webhooks")
    row = page.locator(f"tr#{endpoint_id}")
    assert row.locator("td").all_inner_texts() == [rx.url("/hook"), "customer.created", "yes", "ledger <sync>"]
    assert secret not in page.content()
    page.get_by_role("link", name=rx.url("/hook")).click()
    page.wait_for_url(f"**/console/webhooks/{endpoint_id}")
    assert secret not in page.content()
    assert api.get(f"/webhook-endpoints/{endpoint_id}").json()["secret"] is None

    made = customer(api, "Ada Hook")
    (got,) = rx.wait("/hook", lambda r: len(r) == 1)
    event = Webhook(secret).verify(got.body, got.headers)  # the secret shown once signs the delivery
    assert (event["type"], event["data"]["customer"]["id"]) == ("customer.created", made["id"])

    first_row = page.locator("table.list tbody tr").first
    reload_until(page, lambda: "succeeded" in first_row.inner_text())
    cells = first_row.locator("td").all_inner_texts()
    assert cells[1:5] == ["customer.created", "succeeded", "1", "200"]
    assert re.fullmatch(r"\d+ ms", cells[5]) and cells[6] == "ok"  # the receiver answers "ok"
    delivery_id = first_row.get_attribute("id")
    shot(page, "webhook-deliveries-desktop")

    page.get_by_role("button", name=f"Replay delivery {delivery_id} (customer.created)").click()
    page.wait_for_url(f"**/console/webhooks/{endpoint_id}#{delivery_id}")
    again = rx.wait("/hook", lambda r: len(r) == 2)
    assert again[1].headers["webhook-id"] == got.headers["webhook-id"] == event["id"]
    row = page.locator(f"tr#{delivery_id}")
    reload_until(page, lambda: row.locator("td").nth(3).inner_text() == "2")
    assert row.locator("td").nth(2).inner_text() == "succeeded"
    # The replay is in the audit log with the endpoint.
    page.goto(site.http_url + "/console/audit")
    assert page.locator("tr", has_text="webhook_delivery.replayed").locator("td").nth(3).inner_text() == delivery_id


def test_rotating_shows_the_new_secret_once_and_deliveries_use_it(page: Any, site: LevyServer, api: httpx.Client,
                                                                   rx: Receiver) -> None:
    endpoint_id, old = add_endpoint(page, site, rx.url("/rotated"), "customer.created")
    page.goto(f"{site.http_url}/console/webhooks/{endpoint_id}")
    page.get_by_role("button", name="Rotate secret").click()
    expect(page.get_by_role("heading", name="Rotate the signing secret of", exact=False)).to_be_visible()
    page.get_by_role("button", name="Rotate secret").click()
    new = page.get_by_label("The endpoint's new signing secret").input_value()
    assert new.startswith("whsec_") and new != old
    page.goto(f"{site.http_url}/console/webhooks/{endpoint_id}")  # the endpoint's page again: no secret
    assert new not in page.content()
    customer(api, "Rotated")
    (got,) = rx.wait("/rotated", lambda r: len(r) == 1)
    assert Webhook(new).verify(got.body, got.headers)["type"] == "customer.created"


def test_edit_then_delete_asks_first(page: Any, site: LevyServer, api: httpx.Client, rx: Receiver) -> None:
    endpoint_id, _ = add_endpoint(page, site, rx.url("/edit"), "*")
    page.goto(f"{site.http_url}/console/webhooks/{endpoint_id}")
    page.get_by_label("Event types").fill("customer.updated, customer.deleted")
    page.get_by_label("Description").fill("")
    page.get_by_label("Enabled").uncheck()
    page.get_by_role("button", name="Save endpoint").click()
    page.wait_for_url(f"**/console/webhooks/{endpoint_id}")
    got = api.get(f"/webhook-endpoints/{endpoint_id}").json()
    assert (got["enabled_events"], got["enabled"], got["description"]) == (
        ["customer.updated", "customer.deleted"], False, None)
    # A URL the API refuses is the form's error, nothing saved.
    page.get_by_label("URL").fill("ftp://example.com/x")
    page.get_by_role("button", name="Save endpoint").click()
    expect(page.get_by_role("alert")).to_contain_text("Nothing was saved")
    assert api.get(f"/webhook-endpoints/{endpoint_id}").json()["url"] == rx.url("/edit")

    page.goto(f"{site.http_url}/console/webhooks/{endpoint_id}")
    page.get_by_role("button", name="Delete endpoint").click()
    heading = page.get_by_role("heading", level=1)
    assert heading.inner_text() == f"Delete the webhook endpoint “{rx.url('/edit')}” ({endpoint_id})?"
    shot(page, "webhook-delete-desktop")
    page.get_by_role("link", name="Cancel").click()  # nothing deleted
    page.wait_for_url(f"**/console/webhooks/{endpoint_id}")
    assert api.get(f"/webhook-endpoints/{endpoint_id}").status_code == 200
    page.get_by_role("button", name="Delete endpoint").click()
    page.get_by_role("button", name="Delete endpoint").click()
    page.wait_for_url("**/console/webhooks")
    assert page.locator(f"tr#{endpoint_id}").count() == 0
    assert api.get(f"/webhook-endpoints/{endpoint_id}").status_code == 404


def test_the_events_list_filters_by_type_and_date_and_shows_the_payload(page: Any, site: LevyServer,
                                                                        api: httpx.Client) -> None:
    made = customer(api, "<b>Bold</b> & Co")
    r = api.patch(f"/customers/{made['id']}", json={"name": "Plain & Co"})
    assert r.status_code == 200, r.text
    page.goto(site.http_url + "/console/events")
    types = [c.inner_text() for c in page.locator("table.list tbody tr td:nth-child(2)").all()]
    assert types == ["customer.updated", "customer.created"]  # a new organization: these two, newest first
    page.get_by_label("Type").select_option("customer.created")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url(re.compile(r".*/console/events\?type=customer\.created.*"))
    rows = page.locator("table.list tbody tr")
    assert rows.count() == 1 and rows.first.locator("td").nth(2).inner_text() == made["id"]
    shot(page, "events-desktop")
    # Today (UTC) holds both; from tomorrow on, none.
    today = datetime.now(UTC).date()
    page.get_by_label("From").fill(today.isoformat())
    page.get_by_label("To (inclusive)").fill(today.isoformat())
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.list tbody tr")).to_have_count(1)
    page.get_by_label("Type").select_option("")
    page.get_by_label("From").fill((today + timedelta(days=1)).isoformat())
    page.get_by_label("To (inclusive)").fill("")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.list tbody")).to_have_text("No events.")

    page.goto(site.http_url + "/console/events?type=customer.created")
    page.locator("table.list tbody a").first.click()
    # The payload is the API's event, shown as text: the name's markup is not markup.
    payload = json.loads(page.locator("pre.payload").inner_text())
    assert payload == api.get(f"/events/{payload['id']}").json()
    assert payload["data"]["customer"]["name"] == "<b>Bold</b> & Co"
    assert page.locator("pre.payload b").count() == 0
    shot(page, "event-desktop")
    page.get_by_role("link", name=made["id"]).click()
    page.wait_for_url(f"**/console/customers/{made['id']}")


def test_events_page_back_to_the_newest(page: Any, site: LevyServer, api: httpx.Client) -> None:
    # 51 events (one page is 50): the first page links to the older one, which links back.
    for n in range(51):
        customer(api, f"Page {n}")
    page.goto(site.http_url + "/console/events?type=customer.created")
    expect(page.locator("table.list tbody tr")).to_have_count(50)
    assert page.get_by_role("link", name="Newest events").count() == 0
    page.get_by_role("link", name="Older events").click()
    expect(page.locator("table.list tbody tr")).to_have_count(1)
    assert page.get_by_role("link", name="Older events").count() == 0
    page.get_by_role("link", name="Newest events").click()
    page.wait_for_url(re.compile(r".*/console/events\?type=customer\.created$"))
    expect(page.locator("table.list tbody tr")).to_have_count(50)


def test_members_are_refused_and_do_not_see_the_navigation(site: LevyServer, org: Tenant) -> None:
    client = ConsoleClient(site.http_url)
    try:
        address, password = create_user(site.database_url, org.organization_id, role="member")
        assert client.sign_in(address, password).status_code == 303
        listing = client.get("/customers")
        assert 'href="/console/webhooks"' not in listing.text and 'href="/console/events"' not in listing.text
        for path in ("/webhooks", "/events"):
            assert client.get(path).status_code == 403, path
        r = client.post("/webhooks", {"url": "http://127.0.0.1:9/x", "enabled_events": "*"})
        assert r.status_code == 403
    finally:
        client.close()


def test_phone_width_and_axe(browser: Any, site: LevyServer, org: Tenant, api: httpx.Client,  # noqa: F811
                             rx: Receiver, axe_source: str) -> None:  # noqa: F811
    made = customer(api, "Axe")
    r = api.post("/webhook-endpoints", json={"url": rx.url("/axe"), "enabled_events": ["*"], "description": "axe"})
    assert r.status_code == 201, r.text
    endpoint_id = r.json()["id"]
    customer(api, "Axe two")
    rx.wait("/axe", lambda got: any(r.event["data"]["customer"]["name"] == "Axe two" for r in got))
    event_id = api.get("/events", params={"type": "customer.created", "limit": 1}).json()["data"][0]["id"]
    address, password = create_user(site.database_url, org.organization_id)
    pages = {"/console/webhooks": "webhooks", f"/console/webhooks/{endpoint_id}": "webhook",
             f"/console/webhooks/{endpoint_id}/delete": "webhook-delete", "/console/events": "events",
             f"/console/events/{event_id}": "event"}
    found: dict[str, list[str]] = {}
    for viewport in (DESKTOP, PHONE):
        context = browser.new_context(viewport=viewport, bypass_csp=True, is_mobile=viewport is PHONE)
        page = context.new_page()
        sign_in(page, site, address, password)
        page.wait_for_url("**/console/customers")
        for path, name in pages.items():
            page.goto(site.http_url + path)
            if viewport is PHONE:
                assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
                shot(page, f"{name}-phone")
            serious = serious_violations(page, axe_source)
            if serious:
                found[f"{path} @{viewport['width']}px"] = serious
        context.close()
    assert found == {}, found
    assert made["id"]


def test_forms_without_the_csrf_token_and_bad_dates_change_nothing(site: LevyServer, org: Tenant,
                                                                   api: httpx.Client) -> None:
    client = ConsoleClient(site.http_url)
    try:
        assert client.sign_in(*create_user(site.database_url, org.organization_id)).status_code == 303
        client.get("/webhooks")
        r = client.post("/webhooks", {"url": "http://127.0.0.1:9/x", "enabled_events": "*"}, token=False)
        assert r.status_code == 403
        assert api.get("/webhook-endpoints").json()["data"] == []
        # A date that is not one is the API's error on the page (422), never a 500.
        r = client.get("/events?date_from=2026-13-45")
        assert r.status_code == 422 and 'role="alert"' in r.text and "created_from" in r.text
        assert client.get("/events/evt_nothing").status_code == 404
        assert client.get("/webhooks/we_nothing").status_code == 404
    finally:
        client.close()
