"""The web console in a real browser: Debian's chromium (``/usr/bin/chromium``,
installed by ``.ci/run``) driven by Playwright, against a real ``levy serve``
(SQLite). Few and fast: sign-in and sign-out, a key created and shown once (and
refused by the API once revoked), a customer restored, keyboard navigation, the
phone width (the navigation's height, the lists' important columns), the
transactions export downloaded, the contrast of the focus outline and of input
borders (WCAG 1.4.11), and axe-core (tests/console/axe, installed with npm ci)
run on every page with no serious or critical violation.

Skipped with the reason when chromium or Playwright is missing, except under
LEVY_TEST_REQUIRE_SERVICES=1 (CI), where that fails. With
LEVY_CONSOLE_SCREENSHOTS=DIR the tests save screenshots of the pages at desktop
and phone widths there (docs/images/console holds the ones in docs/console.md)."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from consolekit import create_user, in_thread
from levyserver import LevyServer, Tenant, _create_tenant, fresh_database, start_server

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 375, "height": 740}
DESKTOP = {"width": 1280, "height": 800}


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


def _unavailable(reason: str) -> None:
    if os.environ.get("LEVY_TEST_REQUIRE_SERVICES") == "1":
        pytest.fail(f"browser tests required (LEVY_TEST_REQUIRE_SERVICES=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e '.[dev]')")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no chromium at {CHROMIUM} (.ci/run installs Debian's chromium package)")
    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
    except Exception as e:  # pragma: no cover - depends on the machine
        pw.stop()
        _unavailable(f"chromium at {CHROMIUM} does not start: {e}")
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with fresh_database("sqlite", tmp_path_factory.mktemp("browserdb")) as url:
        srv = start_server(url, tmp_path_factory.mktemp("browserlogs"))
        try:
            yield srv
        finally:
            assert srv.stop() == 0


@pytest.fixture(scope="module")
def org(site: LevyServer) -> Tenant:
    return in_thread(_create_tenant(site.database_url))


def shot(page: Any, name: str) -> None:
    target = os.environ.get("LEVY_CONSOLE_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(target) / f"{name}.png"), full_page=True)


def sign_in(page: Any, site: LevyServer, address: str, password: str) -> None:
    page.goto(site.http_url + "/console/")
    page.get_by_label("Email").fill(address)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


@pytest.fixture
def admin_page(browser: Any, site: LevyServer, org: Tenant) -> Iterator[Any]:
    address, password = create_user(site.database_url, org.organization_id)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    sign_in(page, site, address, password)
    page.wait_for_url("**/console/customers")
    yield page
    context.close()


def test_sign_in_and_sign_out(browser: Any, site: LevyServer, org: Tenant) -> None:
    address, password = create_user(site.database_url, org.organization_id)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(site.http_url + "/console/keys")
    assert page.url.endswith("/console/sign-in")
    shot(page, "sign-in-desktop")
    sign_in(page, site, address, "wrong password, surely")
    assert page.get_by_role("alert").inner_text() == "The email or password is wrong."
    sign_in(page, site, address, password)
    page.wait_for_url("**/console/customers")
    assert page.get_by_role("heading", level=1).inner_text() == "Customers"
    cookie = next(c for c in context.cookies() if c["name"] == "levy_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie").find("levy_session") == -1  # not readable by scripts
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/console/sign-in")
    page.goto(site.http_url + "/console/customers")
    assert page.url.endswith("/console/sign-in")
    context.close()


def test_a_key_is_shown_once_and_refused_once_revoked(admin_page: Any, site: LevyServer) -> None:
    page = admin_page
    page.get_by_role("link", name="Developers").click()
    name = "browser key " + uuid.uuid4().hex[:6]
    page.get_by_label("Name").fill(name)
    page.get_by_label("Role").select_option("plain")
    page.get_by_role("button", name="Create key").click()
    secret = page.get_by_label("The new key's secret").input_value()
    assert secret.startswith("levy_sk_")
    shot(page, "keys-created-desktop")
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    assert httpx.get(site.http_url + "/customers", headers={"X-API-Key": secret}).status_code == 200
    page.goto(site.http_url + "/console/keys")
    assert secret not in page.content()  # shown once
    page.get_by_role("button", name=f"Revoke key {name}").click()
    # Revoking asks first (issue 36): a page naming the key, with the button that revokes it.
    expect(page.get_by_role("heading", name=f"Revoke the API key “{name}”", exact=False)).to_be_visible()
    page.get_by_role("button", name="Revoke", exact=True).click()
    page.wait_for_url("**/console/keys")
    row = page.locator("tr", has_text=name)
    assert "revoked" in row.inner_text()
    assert httpx.get(site.http_url + "/customers", headers={"X-API-Key": secret}).status_code == 401


def test_a_customer_deleted_through_the_api_is_restored_in_the_console(admin_page: Any, site: LevyServer,
                                                                       org: Tenant) -> None:
    page = admin_page
    api = httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key})
    tag = uuid.uuid4().hex[:8]
    cust = api.post("/customers", json={"source_id": "b-" + tag, "name": f"Grace {tag}",
                                        "email": f"grace-{tag}@example.com"}).json()
    assert api.delete(f"/customers/{cust['id']}").status_code == 204
    page.get_by_role("link", name="Show deleted customers").click()
    page.get_by_label("Search source id, name or email").fill(tag)
    page.get_by_label("Search source id, name or email").press("Enter")
    shot(page, "customers-deleted-desktop")
    page.get_by_role("button", name=f"Restore Grace {tag}").click()
    page.wait_for_url(f"**/console/customers/{cust['id']}")
    assert page.get_by_role("heading", level=1).inner_text() == f"Grace {tag}"
    shot(page, "customer-desktop")
    assert api.get(f"/customers/{cust['id']}").status_code == 200
    api.close()


def test_keyboard_navigation(admin_page: Any) -> None:
    page = admin_page
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    # From the top, Tab reaches every navigation link in order, then the sign-out button.
    page.reload()
    seen = []
    for _ in range(17):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("document.activeElement.textContent.trim()"))
    assert seen == ["Skip to content", "Customers", "Transactions", "Products", "Calculator", "Developers",
                    "Organization", "Locations", "Nexus", "Returns", "People", "Webhooks", "Events", "Audit log", "Password",
                    "Sign out", ""]
    # The focused search field (its label) and Enter submit the form without a mouse.
    assert page.evaluate("document.activeElement.labels[0].textContent") == "Search source id, name or email"
    page.keyboard.type("nobody-" + uuid.uuid4().hex[:6])
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r".*/console/customers\?q=nobody-.*"))
    assert "No customers match" in page.content()
    # Every form field has a label.
    unlabelled = page.evaluate("""[...document.querySelectorAll('input:not([type=hidden]), select')]
        .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).length""")
    assert unlabelled == 0


def test_phone_width(browser: Any, site: LevyServer, org: Tenant) -> None:
    address, password = create_user(site.database_url, org.organization_id)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(site.http_url + "/console/sign-in")
    shot(page, "sign-in-phone")
    sign_in(page, site, address, password)
    page.wait_for_url("**/console/customers")
    for path, name in (("/console/customers", "customers-phone"), ("/console/keys", "keys-phone"),
                       ("/console/audit", "audit-phone"), ("/console/users", "people-phone"),
                       ("/console/organization", "organization-phone"), ("/console/nexus", "nexus-phone"),
                       ("/console/transactions", "transactions-phone"), ("/console/returns", "returns-phone"),
                       ("/console/calculator", "calculator-phone")):
        page.goto(site.http_url + path)
        # Nothing wider than the screen but the tables' own scroll boxes.
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
        assert page.get_by_role("button", name="Sign out").is_visible()
        shot(page, name)
    context.close()


def test_a_certificate_with_its_document_is_attached_and_approved(admin_page: Any, site: LevyServer, org: Tenant,
                                                                  tmp_path: Path) -> None:
    # The browser's own multipart upload (not a test client's), then approval, seen by the API.
    page = admin_page
    api = httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key})
    cust = api.post("/customers", json={"source_id": "cert-" + uuid.uuid4().hex[:8], "name": "Certified"}).json()
    scan = tmp_path / "resale.pdf"
    scan.write_bytes(b"%PDF-1.4\n%%EOF\n")
    page.goto(f"{site.http_url}/console/customers/{cust['id']}")
    page.get_by_label("Jurisdiction (e.g. US-ST-TX)").fill("US-ST-TX")
    page.get_by_label("Type").select_option("resale")
    page.get_by_label("Valid from").fill("2026-01-01")
    page.get_by_label("Expires").fill("2030-12-31")
    page.get_by_label("Document (PDF or image").set_input_files(str(scan))
    page.get_by_role("button", name="Attach").click()
    page.wait_for_url(re.compile(r".*#cexc_.*"))
    cert_id = page.url.rsplit("#", 1)[1]
    assert page.get_by_role("link", name="resale.pdf").is_visible()
    page.get_by_role("button", name=f"Approve certificate {cert_id}").click()
    page.wait_for_url(re.compile(r".*#cexc_.*"))
    shot(page, "certificate-approved-desktop")
    exemption = api.get(f"/customers/{cust['id']}").json()["exemption"]
    assert [(j["jurisdiction"], j["status"], j.get("expires_at")) for j in exemption["jurisdictions"]] == [
        ("US-ST-TX", "valid", "2030-12-31")]
    api.close()


def _sale(api: httpx.Client, ref: str) -> str:
    # $100.00 shipped to Texas (state only): the organization is not registered, so tax $0.00.
    r = api.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z", "reference_id": ref,
        "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000", "customer": {"address": {"state": "TX"}},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def test_the_phone_shows_the_lists_important_columns_under_a_short_navigation(
        browser: Any, site: LevyServer, org: Tenant) -> None:
    with httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key}) as api:
        ref = "phone-" + uuid.uuid4().hex[:8]
        _sale(api, ref)
    address, password = create_user(site.database_url, org.organization_id)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    sign_in(page, site, address, password)
    page.wait_for_url("**/console/customers")
    page.goto(f"{site.http_url}/console/transactions?reference={ref}")
    # The header (brand, sign-out and the navigation's one scrolling row) takes at most a
    # fifth of the first screen (issue 36: the navigation took 40 %).
    header = page.locator("header.top").bounding_box()
    assert header["height"] <= PHONE["height"] / 5, header
    # Every navigation link is still there, reached by scrolling the row sideways.
    assert page.locator("header nav a").count() == 14
    visible = [th for th in page.locator("table.list thead th").all() if th.is_visible()]
    assert [th.inner_text() for th in visible] == ["Date", "Reference", "Customer", "Tax"]
    box = visible[-1].bounding_box()  # all on the first screen, without scrolling the table
    assert box["x"] + box["width"] <= PHONE["width"], box
    assert page.get_by_role("link", name=ref).is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    context.close()


def test_the_phone_shows_the_first_rows_under_closed_filters_that_still_open_and_apply(
        browser: Any, site: LevyServer, org: Tenant) -> None:
    # Issue 36: at phone width the filter form filled the first screen. It is now a "Filters"
    # disclosure, open on a wide screen and closed on a phone, so the first rows are in view.
    tag = uuid.uuid4().hex[:8]
    with httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key}) as api:
        _sale(api, f"ph-{tag}-1")
        _sale(api, f"ph-{tag}-2")
    address, password = create_user(site.database_url, org.organization_id)
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    sign_in(page, site, address, password)
    page.wait_for_url("**/console/customers")
    page.goto(site.http_url + "/console/transactions")
    filters = page.locator("details.filters")
    assert filters.evaluate("d => d.open") is False
    assert not page.get_by_label("Reference").is_visible()
    first_row = page.locator("table.list tbody tr").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= PHONE["height"], first_row  # no scrolling needed
    # Opened with a tap, the filters apply: a part of the reference in another case finds both.
    page.get_by_text("Filters", exact=True).click()
    page.get_by_label("Reference").fill(f"PH-{tag}")
    page.get_by_label("Status").select_option("finalized")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("status")).to_have_text("2 transactions match; this page shows 2.")
    assert [a.inner_text() for a in page.locator("table.list tbody tr td:nth-child(2) a").all()] == [
        f"ph-{tag}-2", f"ph-{tag}-1"]
    # Closed again on the results page, saying how many filters are set.
    assert filters.evaluate("d => d.open") is False
    assert page.locator("details.filters > summary").inner_text() == "Filters (2 set)"
    first_row = page.locator("table.list tbody tr").first.bounding_box()
    assert first_row["y"] + first_row["height"] <= PHONE["height"], first_row
    shot(page, "transactions-phone")
    context.close()


def test_the_filters_are_open_on_a_wide_screen(admin_page: Any, site: LevyServer) -> None:
    page = admin_page
    page.goto(site.http_url + "/console/transactions")
    assert page.locator("details.filters").evaluate("d => d.open") is True
    assert page.get_by_label("Reference").is_visible()


def _contrast(rgb_a: str, rgb_b: str = "rgb(255, 255, 255)") -> float:
    """The WCAG contrast ratio of two CSS rgb() colours."""
    def luminance(rgb: str) -> float:
        channels = [int(v) / 255 for v in re.findall(r"\d+", rgb)[:3]]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((luminance(rgb_a), luminance(rgb_b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_focus_outline_and_input_borders_have_3_to_1_contrast(admin_page: Any, site: LevyServer) -> None:
    # WCAG 1.4.11: the parts needed to identify a control and the focus indicator, 3:1 against white.
    page = admin_page
    page.goto(site.http_url + "/console/transactions")
    field = page.get_by_label("Reference")
    assert _contrast(field.evaluate("e => getComputedStyle(e).borderTopColor")) >= 3
    page.keyboard.press("Tab")  # the skip link, focused from the keyboard
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    assert _contrast(outline) >= 3, outline


def test_the_transactions_export_downloads_what_the_filters_find(admin_page: Any, site: LevyServer,
                                                                 org: Tenant, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    with httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key}) as api:
        first, second = _sale(api, f"dl-{tag}-1"), _sale(api, f"dl-{tag}-2")
    page = admin_page
    page.goto(site.http_url + "/console/transactions")
    page.get_by_label("Reference").fill(f"DL-{tag}")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("status")).to_have_text("2 transactions match; this page shows 2.")
    shot(page, "transactions-desktop")
    with page.expect_download() as info:
        page.get_by_role("link", name="Export CSV (every match)").click()
    download = info.value
    assert download.suggested_filename == "transactions.csv"
    path = tmp_path / "t.csv"
    download.save_as(str(path))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("transaction_id,transaction_date,reference_id,")
    # Same date, so newest first by id: the second, then the first; $100.00 with no tax.
    assert [line.split(",")[:3] for line in lines[1:]] == [[second, "2026-03-15", f"dl-{tag}-2"],
                                                           [first, "2026-03-15", f"dl-{tag}-1"]]
    assert all(line.split(",")[8:12] == ["100.00", "0.00", "100.00", "USD"] for line in lines[1:])


AXE = Path(__file__).parent / "axe"


@pytest.fixture(scope="module")
def axe_source() -> str:
    """axe-core's script, from the npm project in tests/console/axe (npm ci when not installed)."""
    import shutil
    import subprocess

    script = AXE / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        if not shutil.which("npm"):
            _unavailable("the accessibility check needs npm to install axe-core (tests/console/axe)")
        r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=AXE, capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            _unavailable(f"npm ci of axe-core failed (is the npm registry reachable?): {r.stderr[-1000:]}")
    return script.read_text()


def serious_violations(page: Any, axe_source: str) -> list[str]:
    """axe-core's serious and critical violations on the page (its context must bypass the CSP)."""
    page.add_script_tag(content=axe_source)
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in result["violations"] if v["impact"] in ("serious", "critical")]


def test_axe_finds_no_serious_accessibility_violation(browser: Any, site: LevyServer, org: Tenant,
                                                      axe_source: str) -> None:
    with httpx.Client(base_url=site.http_url, headers={"X-API-Key": org.admin_key}) as api:
        txn = _sale(api, "axe-" + uuid.uuid4().hex[:8])
        cust = api.post("/customers", json={"source_id": "axe-" + uuid.uuid4().hex[:8], "name": "Axe"}).json()
    address, password = create_user(site.database_url, org.organization_id)
    found: dict[str, list[str]] = {}
    for viewport in (DESKTOP, PHONE):
        # The console's CSP allows only its own scripts: this context lets the test inject axe.
        context = browser.new_context(viewport=viewport, bypass_csp=True)
        page = context.new_page()
        page.goto(site.http_url + "/console/sign-in")
        pages = ["/console/sign-in"]
        sign_in(page, site, address, password)
        page.wait_for_url("**/console/customers")
        pages += ["/console/customers", f"/console/customers/{cust['id']}", "/console/transactions",
                  f"/console/transactions/{txn}", "/console/products", "/console/calculator", "/console/keys",
                  "/console/organization", "/console/locations", "/console/nexus", "/console/returns",
                  "/console/returns/liability", "/console/users", "/console/audit", "/console/password"]
        for path in pages:
            page.goto(site.http_url + path)
            serious = serious_violations(page, axe_source)
            if serious:
                found[f"{path} @{viewport['width']}px"] = serious
        context.close()
    assert found == {}, found
