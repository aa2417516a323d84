"""The web console (issue 21) against a real ``levy serve`` on SQLite and
PostgreSQL, over HTTP as a browser would use it (forms, cookies, CSRF tokens):
sign-in, sign-out and passwords; the developer page's API keys checked against the
API; customers, deleted customers and restore; certificates; the audit log;
people; and the security properties (CSRF, another organization's objects 404,
cookie flags, CSP, members cannot write)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from datetime import date, timedelta

import httpx
import pytest

from consolekit import PASSWORD, ConsoleClient, create_user, csrf, post_files
from levyserver import LevyServer, Tenant


@pytest.fixture
def admin(server: LevyServer, tenant: Tenant) -> Iterator[ConsoleClient]:
    address, password = create_user(server.database_url, tenant.organization_id, role="admin")
    c = ConsoleClient(server.http_url)
    assert c.sign_in(address, password).status_code == 303
    yield c
    c.close()


@pytest.fixture
def member(server: LevyServer, tenant: Tenant) -> Iterator[ConsoleClient]:
    address, password = create_user(server.database_url, tenant.organization_id, role="member")
    c = ConsoleClient(server.http_url)
    assert c.sign_in(address, password).status_code == 303
    yield c
    c.close()


def new_customer(admin_http: httpx.Client, **fields: str) -> dict:
    r = admin_http.post("/customers", json={"source_id": "c-" + uuid.uuid4().hex[:10], **fields})
    assert r.status_code == 201, r.text
    return r.json()


def audit_actions(admin: ConsoleClient) -> list[str]:
    page = admin.get("/audit")
    assert page.status_code == 200
    return re.findall(r"<code>([a-z_]+\.[a-z_]+)</code>", page.text)


# ------------------------------------------------------------------ sign-in, sessions, headers


def test_pages_need_a_session_and_carry_security_headers(server: LevyServer) -> None:
    with httpx.Client(base_url=server.http_url) as c:
        for path in ("/console", "/console/", "/console/keys", "/console/customers", "/console/audit"):
            r = c.get(path)
            assert (r.status_code, r.headers["location"]) == (303, "/console/sign-in"), path
        r = c.get("/console/sign-in")
        assert r.status_code == 200
        csp = r.headers["content-security-policy"]
        # No inline script or style anywhere: scripts and styles only from the console's own files.
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "'unsafe-inline'" not in csp
        assert r.headers["x-frame-options"] == "DENY" and r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["cache-control"] == "no-store"
        assert '<label for="email">' in r.text and '<label for="password">' in r.text
        css = c.get("/console/static/console.css")
        assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
        assert c.get("/console/static/../app.py").status_code == 404
        assert c.get("/console/static/nothing.css").status_code == 404


def test_sign_in_sets_a_strict_session_cookie_and_sign_out_ends_it(server: LevyServer, tenant: Tenant) -> None:
    address, password = create_user(server.database_url, tenant.organization_id)
    c = ConsoleClient(server.http_url)
    r = c.sign_in(address.upper(), password)  # emails compare without case
    assert (r.status_code, r.headers["location"]) == (303, "/console/")
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("levy_session=")
    for flag in ("HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=43200"):  # 12 h default
        assert flag in cookie, cookie
    assert "Secure" not in cookie  # only with LEVY_CONSOLE_SECURE_COOKIES (test_console_servers.py)
    page = c.get("/customers")
    assert page.status_code == 200 and address in page.text
    session = c.http.cookies["levy_session"]

    r = c.post("/sign-out")
    assert (r.status_code, r.headers["location"]) == (303, "/console/sign-in")
    assert "Max-Age=0" in r.headers["set-cookie"]
    # The old cookie is dead on the server, not only dropped by the browser.
    with httpx.Client(base_url=server.http_url, cookies={"levy_session": session}) as stale:
        assert stale.get("/console/customers").status_code == 303
    c.close()


def test_wrong_password_and_unknown_email_get_the_same_answer(server: LevyServer, tenant: Tenant) -> None:
    address, _ = create_user(server.database_url, tenant.organization_id)
    c = ConsoleClient(server.http_url)
    wrong = c.sign_in(address, "not the password at all")
    unknown = c.sign_in("nobody-" + address, "not the password at all")
    for r in (wrong, unknown):
        assert r.status_code == 401
        assert "The email or password is wrong." in r.text
        assert "levy_session" not in r.headers.get("set-cookie", "")
    c.close()


def test_sign_in_without_its_csrf_token_is_refused(server: LevyServer, tenant: Tenant) -> None:
    address, password = create_user(server.database_url, tenant.organization_id)
    with httpx.Client(base_url=server.http_url) as c:
        c.get("/console/sign-in")  # the double-submit cookie is set, but the form lacks its token
        r = c.post("/console/sign-in", data={"email": address, "password": password})
        assert r.status_code == 403 and "levy_session" not in r.headers.get("set-cookie", "")
        r = c.post("/console/sign-in", data={"email": address, "password": password, "csrf_token": "forged"})
        assert r.status_code == 403


def test_one_time_password_must_be_changed_then_the_old_one_fails(server: LevyServer, tenant: Tenant) -> None:
    address, one_time = create_user(server.database_url, tenant.organization_id, password=None)
    assert len(one_time) == 20
    other_device = ConsoleClient(server.http_url)
    assert other_device.sign_in(address, one_time).status_code == 303
    c = ConsoleClient(server.http_url)
    r = c.sign_in(address, one_time)
    assert (r.status_code, r.headers["location"]) == (303, "/console/password")
    # Every other page sends the user to the password form until it is changed.
    assert c.get("/keys").headers["location"] == "/console/password"
    page = c.get("/password")
    assert "one-time password" in page.text

    r = c.post("/password", {"current_password": one_time, "new_password": "short", "confirm_password": "short"})
    assert r.status_code == 422 and "at least 12 characters" in r.text
    r = c.post("/password", {"current_password": "wrong" * 3, "new_password": PASSWORD, "confirm_password": PASSWORD})
    assert r.status_code == 422 and "The current password is wrong." in r.text
    r = c.post("/password", {"current_password": one_time, "new_password": PASSWORD,
                             "confirm_password": PASSWORD + "x"})
    assert r.status_code == 422 and "The two new passwords differ." in r.text
    r = c.post("/password", {"current_password": one_time, "new_password": PASSWORD, "confirm_password": PASSWORD})
    assert r.status_code == 200 and "Your password was changed" in r.text
    assert c.get("/keys").status_code == 200  # no longer sent to the password form
    # The session on the other device ended; the one-time password no longer signs in.
    assert other_device.get("/customers").status_code == 303
    assert other_device.sign_in(address, one_time).status_code == 401
    assert other_device.sign_in(address, PASSWORD).status_code == 303
    c.close()
    other_device.close()


# ------------------------------------------------------------------ developer page


def test_a_key_is_shown_once_works_and_is_refused_once_revoked(server: LevyServer, admin: ConsoleClient) -> None:
    r = admin.post("/keys", {"name": "checkout service", "role": "plain"})
    assert r.status_code == 201
    secret = re.search(r'id="new-secret" readonly value="([^"]+)"', r.text).group(1)
    assert secret.startswith("levy_sk_")
    key_id = re.search(r'<tr id="(key_[0-9A-Z]+)">\s*<td>checkout service</td>', r.text).group(1)
    prefix = re.search(rf'id="{key_id}">\s*<td>checkout service</td><td><code>([^<]+)…</code>', r.text).group(1)
    assert secret.startswith(prefix)

    listing = admin.get("/keys")
    assert secret not in listing.text and prefix in listing.text  # shown once, listed by its prefix
    # Revoke asks first (issue 36): the button GETs a page that names the key and POSTs the revocation.
    assert f'<form method="get" action="/console/keys/{key_id}/revoke">' in listing.text
    ask = admin.get(f"/keys/{key_id}/revoke", params={"label": "checkout service"})
    assert ask.status_code == 200 and f"Revoke the API key “checkout service” ({key_id})?" in ask.text
    assert f'<form method="post" action="/console/keys/{key_id}/revoke"' in ask.text
    assert 'name="csrf_token"' in ask.text and '<a href="/console/keys">Cancel</a>' in ask.text
    # The label is only displayed, escaped like everything else.
    assert "&lt;b&gt;" in admin.get(f"/keys/{key_id}/revoke", params={"label": "<b>"}).text

    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": secret}) as api:
        assert api.get("/customers").status_code == 200
        assert api.get("/api-keys").status_code == 403  # a plain key, as chosen (asking revoked nothing)
        r = admin.post(f"/keys/{key_id}/revoke")
        assert r.status_code == 303
        refused = api.get("/customers")
        assert refused.status_code == 401 and "revoked" in refused.text
    listing = admin.get("/keys")
    assert re.search(rf'id="{key_id}">.*?revoked \d{{4}}-', listing.text, re.S)
    assert audit_actions(admin)[:2] == ["api_key.revoked", "api_key.created"]


def test_an_admin_key_made_in_the_console_reaches_the_admin_api(server: LevyServer, admin: ConsoleClient) -> None:
    r = admin.post("/keys", {"name": "ops", "role": "admin"})
    secret = re.search(r'id="new-secret" readonly value="([^"]+)"', r.text).group(1)
    assert httpx.get(server.http_url + "/api-keys", headers={"X-API-Key": secret}).status_code == 200


def test_a_key_without_a_name_is_refused_with_the_apis_message(admin: ConsoleClient) -> None:
    r = admin.post("/keys", {"name": "", "role": "plain"})
    assert r.status_code == 422
    assert 'aria-invalid="true"' in r.text and 'id="key-name-error"' in r.text
    assert 'id="new-secret"' not in r.text


def test_forms_without_the_csrf_token_change_nothing(admin: ConsoleClient, admin_http: httpx.Client) -> None:
    before = admin.get("/keys").text.count('<tr id="key_')
    for data in ({}, {"csrf_token": "forged"}):
        r = admin.post("/keys", {"name": "sneaky", "role": "admin", **data}, token=False)
        assert r.status_code == 403 and "security token" in r.text
    assert admin.get("/keys").text.count('<tr id="key_') == before
    cust = new_customer(admin_http)
    assert admin_http.delete(f"/customers/{cust['id']}").status_code == 204
    assert admin.post(f"/customers/{cust['id']}/restore", token=False).status_code == 403
    assert admin_http.get(f"/customers/{cust['id']}").status_code == 404  # still deleted


# ------------------------------------------------------------------ customers


def test_customer_search_detail_and_restore(admin: ConsoleClient, admin_http: httpx.Client) -> None:
    tag = uuid.uuid4().hex[:8]
    ada = new_customer(admin_http, name=f"Ada {tag}", email=f"ada-{tag}@example.com")
    bob = new_customer(admin_http, name=f"Bob {tag}", email=f"bob-{tag}@example.org")
    page = admin.get("/customers", params={"q": tag})
    assert ada["id"] in page.text and bob["id"] in page.text
    page = admin.get("/customers", params={"q": f"ADA-{tag}@"})  # email, any case
    assert ada["id"] in page.text and bob["id"] not in page.text
    page = admin.get("/customers", params={"q": bob["source_id"]})
    assert bob["id"] in page.text and ada["id"] not in page.text
    assert "No customers match" in admin.get("/customers", params={"q": "%_" + tag}).text  # LIKE wildcards are text

    detail = admin.get(f"/customers/{ada['id']}")
    assert detail.status_code == 200 and f"Ada {tag}" in detail.text and "No exemption." in detail.text

    assert admin_http.delete(f"/customers/{bob['id']}").status_code == 204
    assert bob["id"] not in admin.get("/customers", params={"q": tag}).text
    deleted = admin.get("/customers", params={"q": tag, "deleted": "1"})
    assert bob["id"] in deleted.text and ada["id"] not in deleted.text
    r = admin.post(f"/customers/{bob['id']}/restore")
    assert (r.status_code, r.headers["location"]) == (303, f"/console/customers/{bob['id']}")
    assert admin_http.get(f"/customers/{bob['id']}").status_code == 200  # the API sees it again
    assert bob["id"] not in admin.get("/customers", params={"q": tag, "deleted": "1"}).text
    # Restoring what is not deleted is the API's refusal, shown as a page.
    again = admin.post(f"/customers/{bob['id']}/restore")
    assert again.status_code == 422 and "nothing to restore" in again.text
    assert "customer.restored" in audit_actions(admin)
    # A merged customer stays listed, pointing at the customer it was merged into.
    r = admin_http.post(f"/customers/{bob['id']}/merge", json={"into_customer_id": ada["id"]})
    assert r.status_code == 200, r.text
    row = re.search(rf'<tr id="{bob["id"]}">.*?</tr>', admin.get("/customers", params={"q": tag}).text, re.S)
    assert f'href="/console/customers/{ada["id"]}"' in row.group(0)
    assert f"<dt>Merged into</dt><dd><a href=\"/console/customers/{ada['id']}\">" in admin.get(
        f"/customers/{bob['id']}").text


def calculate_for(http: httpx.Client, source_id: str) -> dict:
    """$100.00 of goods to Texas (no postal code) for the customer with this source id."""
    r = http.post("/calculations", json={"currency": "USD", "line_items": [{
        "id": "1", "quantity": "1", "unit_price": "10000", "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]},
        "customer": {"address": {"state": "TX"}, "preset": {"id": source_id}}}]})
    assert r.status_code == 200, r.text
    return r.json()["line_items"][0]


def test_certificate_attached_and_approved_reaches_the_exemption(admin: ConsoleClient, http: httpx.Client,
                                                                 admin_http: httpx.Client) -> None:
    assert admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX",
                                                                "effective_from": "2020-01-01"}).status_code == 201
    cust = new_customer(admin_http)
    assert calculate_for(http, cust["source_id"])["tax_amount"] == "625"  # registered in TX: 6.25 % of 100.00
    r = admin.post(f"/customers/{cust['id']}/certificates",
                   {"jurisdiction": "US-ST-TX", "exemption_type": "resale", "status": "in_review",
                    "starts_at": "2026-01-01", "expires_at": "2030-12-31"})
    assert r.status_code == 303
    cert_id = r.headers["location"].rsplit("#", 1)[1]
    assert cert_id.startswith("cexc_")
    page = admin.get(f"/customers/{cust['id']}")
    assert "in_review" in page.text and "2030-12-31" in page.text
    assert calculate_for(http, cust["source_id"])["tax_amount"] == "625"  # in review: not yet exempt
    r = admin.post(f"/customers/{cust['id']}/certificates/{cert_id}/review", {"status": "valid"})
    assert r.status_code == 303
    exemption = admin_http.get(f"/customers/{cust['id']}").json()["exemption"]
    assert [(j["jurisdiction"], j["exemption_type"], j["status"]) for j in exemption["jurisdictions"]] == [
        ("US-ST-TX", "resale", "valid")]
    # While in review it exempted nothing; approved in the console, the API's calculation is exempt.
    line = calculate_for(http, cust["source_id"])
    assert line["tax_amount"] == "0" and line["taxes"][0]["rule_name"] == "Exempt: resale exemption certificate"
    bad = admin.post(f"/customers/{cust['id']}/certificates", {"jurisdiction": "Texas", "exemption_type": "resale"})
    assert bad.status_code == 422 and "The certificate was not saved" in bad.text
    assert audit_actions(admin)[:2] == ["certificate.valid", "certificate.attached"]


def test_another_organizations_objects_answer_404(server: LevyServer, admin: ConsoleClient,
                                                  other_tenant: Tenant) -> None:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as other:
        theirs = new_customer(other, name="Not yours")
        assert other.delete(f"/customers/{theirs['id']}").status_code == 204
    assert admin.get(f"/customers/{theirs['id']}").status_code == 404
    assert admin.post(f"/customers/{theirs['id']}/restore").status_code == 404
    assert admin.post(f"/keys/{other_tenant.admin_key_id}/revoke").status_code == 404
    assert theirs["id"] not in admin.get("/customers", params={"deleted": "1"}).text
    assert other_tenant.admin_key_id not in admin.get("/keys").text
    # Their key still works: nothing was revoked.
    assert httpx.get(server.http_url + "/api-keys", headers={"X-API-Key": other_tenant.admin_key}).status_code == 200


# ------------------------------------------------------------------ members, people, audit


def test_a_member_reads_but_cannot_write(member: ConsoleClient, admin_http: httpx.Client, tenant: Tenant) -> None:
    cust = new_customer(admin_http, name="Readable")
    assert member.get(f"/customers/{cust['id']}").status_code == 200
    assert 'action="/console/keys"' not in member.get("/customers").text
    assert member.get("/keys").status_code == 403  # the API's admin-only ListApiKeys
    assert member.get("/audit").status_code == 403 and member.get("/users").status_code == 403
    r = member.post("/keys", {"name": "nope", "role": "admin"})
    assert r.status_code == 403 and "can look but not change" in r.text
    assert admin_http.delete(f"/customers/{cust['id']}").status_code == 204
    assert member.post(f"/customers/{cust['id']}/restore").status_code == 403
    assert member.post(f"/keys/{tenant.key_id}/revoke").status_code == 403
    assert member.get(f"/keys/{tenant.key_id}/revoke").status_code == 403  # not even asked
    assert admin_http.get(f"/customers/{cust['id']}").status_code == 404  # still deleted
    assert httpx.get(admin_http.base_url.join("/customers"), headers={"X-API-Key": tenant.key}).status_code == 200
    assert member.post("/sign-out").status_code == 303  # signing out is no write


def test_an_admin_invites_and_removes_people(server: LevyServer, admin: ConsoleClient) -> None:
    address = f"new-{uuid.uuid4().hex[:8]}@example.com"
    r = admin.post("/users", {"email": address, "role": "member"})
    assert r.status_code == 201
    one_time = re.search(r'id="one-time" readonly value="([^"]+)"', r.text).group(1)
    invited = ConsoleClient(server.http_url)
    assert invited.sign_in(address, one_time).headers["location"] == "/console/password"
    assert admin.post("/users", {"email": address, "role": "member"}).status_code == 422  # exists
    page = admin.get("/users")
    user_id = re.search(rf'{re.escape(address)}</td><td>member</td>.*?/users/(usr_[0-9A-Z]+)/remove', page.text,
                        re.S).group(1)
    # The invitation starts at the non-admin role; the navigation marks the current page.
    assert '<option value="member" selected>' in page.text and '<option value="admin">' in page.text
    assert page.text.count('aria-current="page"') == 1 and 'href="/console/users" aria-current="page"' in page.text
    assert f'<form method="get" action="/console/users/{user_id}/remove">' in page.text
    ask = admin.get(f"/users/{user_id}/remove", params={"label": address})
    assert ask.status_code == 200 and f"Remove “{address}” ({user_id})?" in ask.text
    assert invited.get("/password").status_code == 200  # asking removed nobody
    assert admin.post(f"/users/{user_id}/remove").status_code == 303
    assert invited.get("/password").status_code == 303  # their session ended with them
    assert address not in admin.get("/users").text
    assert audit_actions(admin)[:2] == ["user.removed", "user.invited"]
    invited.close()


def test_unknown_pages_are_404(admin: ConsoleClient) -> None:
    assert admin.get("/nothing-here").status_code == 404
    assert admin.get("/customers/cust_01HZZZZZZZZZZZZZZZZZZZZZZZ").status_code == 404
    assert csrf(admin.get("/customers"))


# ------------------------------------------------------------------ certificate documents

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def test_a_certificate_document_is_stored_and_downloadable(server: LevyServer, admin: ConsoleClient,
                                                           admin_http: httpx.Client, other_tenant: Tenant) -> None:
    cust = new_customer(admin_http)
    form = {"jurisdiction": "US-ST-CA", "exemption_type": "resale", "status": "in_review"}
    r = post_files(admin, f"/customers/{cust['id']}/certificates", form,
                   {"document": ("../../etc/resale cert.PDF", PDF, "text/plain")})  # the bytes decide the type
    assert r.status_code == 303, r.text
    cert_id = r.headers["location"].rsplit("#", 1)[1]
    page = admin.get(f"/customers/{cust['id']}")
    link = f"/console/customers/{cust['id']}/certificates/{cert_id}/document"
    assert f'href="{link}">resale cert.pdf</a>' in page.text
    doc = admin.get(link.removeprefix("/console"))
    assert doc.status_code == 200 and doc.content == PDF
    assert doc.headers["content-type"] == "application/pdf"
    assert doc.headers["content-disposition"] == 'attachment; filename="resale cert.pdf"'
    assert doc.headers["x-content-type-options"] == "nosniff"

    # Not a PDF or image, or empty: refused, and no certificate is created.
    before = admin.get(f"/customers/{cust['id']}").text.count('<tr id="cexc_')
    for name, data in (("notes.pdf", b"<html><script>alert(1)</script>"), ("empty.png", b"")):
        r = post_files(admin, f"/customers/{cust['id']}/certificates", form, {"document": (name, data, "image/png")})
        if data:
            assert r.status_code == 422 and "not a PDF, PNG, JPEG or GIF" in r.text
        else:
            assert r.status_code == 303  # an empty file input is no upload
    assert admin.get(f"/customers/{cust['id']}").text.count('<tr id="cexc_') == before + 1
    # Over the size limit (5 MiB by default): refused.
    big = PNG + b"\x00" * (5 * 1024 * 1024)
    r = post_files(admin, f"/customers/{cust['id']}/certificates", form, {"document": ("big.png", big, "image/png")})
    assert r.status_code == 422 and "larger than 5242880 bytes" in r.text
    # CSRF applies to uploads too.
    r = post_files(admin, f"/customers/{cust['id']}/certificates", form,
                   {"document": ("c.png", PNG, "image/png")}, token=False)
    assert r.status_code == 403

    # Another organization's admin cannot reach it.
    other_address, other_password = create_user(server.database_url, other_tenant.organization_id)
    other = ConsoleClient(server.http_url)
    assert other.sign_in(other_address, other_password).status_code == 303
    assert other.get(link.removeprefix("/console")).status_code == 404
    other.close()
    # A certificate on file gets (or replaces) its document later.
    r = post_files(admin, f"/customers/{cust['id']}/certificates/{cert_id}/document", {},
                   {"document": ("scan.png", PNG, "image/png")})
    assert r.status_code == 303
    doc = admin.get(link.removeprefix("/console"))
    assert (doc.content, doc.headers["content-type"]) == (PNG, "image/png")
    assert doc.headers["content-disposition"] == 'attachment; filename="scan.png"'
    r = post_files(admin, f"/customers/{cust['id']}/certificates/{cert_id}/document", {},
                   {"document": ("x.txt", b"plain text", "text/plain")})
    assert r.status_code == 422
    assert admin.get(link.removeprefix("/console")).content == PNG  # unchanged
    assert "certificate.document_attached" in audit_actions(admin)
    # Deleting the certificate through the API deletes its document.
    assert admin_http.delete(f"/customers/{cust['id']}/exemption-certificates/{cert_id}").status_code == 204
    assert admin.get(link.removeprefix("/console")).status_code == 404


# ------------------------------------------------------------------ organization: settings, registrations


def test_settings_and_registrations_change_through_the_console(admin: ConsoleClient, admin_http: httpx.Client,
                                                               member: ConsoleClient) -> None:
    page = admin.get("/organization")
    assert page.status_code == 200 and "No registrations" in page.text
    r = admin.post("/organization/settings", {"name": "Acme Console", "default_tax_codes": "",
                                               "certificate_treatment": "certificate_only"})
    assert r.status_code == 422 and "default_tax_codes cannot be empty" in r.text  # the API's rule
    r = admin.post("/organization/settings", {"name": "Acme Console", "default_tax_codes": " GENERAL.TANGIBLE.GOODS ",
                                               "certificate_treatment": "certificate_and_product_tax_code"})
    assert r.status_code == 200 and "Settings saved." in r.text
    settings = admin_http.get("/organization/settings").json()
    # An unticked checkbox is sent as nothing: exemption management off.
    assert (settings["name"], settings["exemption_management"], settings["certificate_treatment"],
            settings["default_tax_codes"]) == ("Acme Console", False, "certificate_and_product_tax_code",
                                               ["GENERAL.TANGIBLE.GOODS"])
    r = admin.post("/organization/settings", {"name": "Acme Console", "exemption_management": "on",
                                               "default_tax_codes": "GENERAL.TANGIBLE.GOODS",
                                               "certificate_treatment": "sometimes"})
    assert r.status_code == 422 and "certificate_treatment must be one of" in r.text
    assert admin_http.get("/organization/settings").json()["exemption_management"] is False  # nothing saved
    # Filing currencies (issue 37): shown as "US=USD"; another country may be set, US stays in USD.
    assert 'value="US=USD"' in admin.get("/organization").text
    base = {"name": "Acme Console", "default_tax_codes": "GENERAL.TANGIBLE.GOODS",
            "certificate_treatment": "certificate_only"}
    r = admin.post("/organization/settings", {**base, "filing_currencies": "US=USD, gb=gbp"})
    assert r.status_code == 200 and "Settings saved." in r.text
    assert admin_http.get("/organization/settings").json()["filing_currencies"] == {"GB": "GBP", "US": "USD"}
    r = admin.post("/organization/settings", {**base, "filing_currencies": "US=EUR"})
    assert r.status_code == 422 and "returns in US are in USD" in r.text
    assert admin_http.get("/organization/settings").json()["filing_currencies"] == {"GB": "GBP", "US": "USD"}

    r = admin.post("/organization/registrations", {"jurisdiction": "US-ST-TX", "registration_number": "TX-1",
                                                   "effective_from": "2025-01-01"})
    assert (r.status_code, r.headers["location"]) == (303, "/console/organization#registrations")
    regs = admin_http.get("/organization/registrations").json()["data"]
    assert [(g["jurisdiction"], g["registration_number"], g["effective_from"]) for g in regs] == [
        ("US-ST-TX", "TX-1", "2025-01-01")]
    assert admin.post("/organization/registrations", {"jurisdiction": "Texas", "effective_from": "2025-01-01"}
                      ).status_code == 422
    assert member.get("/organization").status_code == 403
    assert member.post(f"/organization/registrations/{regs[0]['id']}/remove").status_code == 403
    assert f'<form method="get" action="/console/organization/registrations/{regs[0]["id"]}/remove">' in admin.get(
        "/organization").text
    ask = admin.get(f"/organization/registrations/{regs[0]['id']}/remove", params={"label": "US-ST-TX from 2025-01-01"})
    assert ask.status_code == 200 and f"Remove the registration “US-ST-TX from 2025-01-01” ({regs[0]['id']})?" in ask.text
    assert f'<form method="post" action="/console/organization/registrations/{regs[0]["id"]}/remove"' in ask.text
    assert len(admin_http.get("/organization/registrations").json()["data"]) == 1  # asking removed nothing
    assert admin.post(f"/organization/registrations/{regs[0]['id']}/remove").status_code == 303
    assert admin_http.get("/organization/registrations").json()["data"] == []
    assert audit_actions(admin)[:3] == ["registration.removed", "registration.added", "settings.changed"]


# ------------------------------------------------------------------ nexus


def test_nexus_page_shows_progress_against_thresholds(admin: ConsoleClient, http: httpx.Client,
                                                      member: ConsoleClient) -> None:
    # One finalized CA sale of $200,000.00 on Jan 5: California's threshold is $500,000 of sales
    # (docs/filing.md), so as of Feb 1 it is 200,000 / 500,000 = 40 % of the way, not crossed.
    r = http.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-01-05T12:00:00Z",
        "line_items": [{"id": "1", "quantity": "1", "unit_price": "20000000",
                        "customer": {"address": {"state": "CA"}},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200, r.text
    page = admin.get("/nexus", params={"as_of": "2026-02-01"})
    assert page.status_code == 200
    row = re.search(r'<tr id="nexus-CA".*?</tr>', page.text, re.S).group(0)
    assert '<progress max="100" value="40"' in row and "40 %" in row
    assert "$200,000.00" in row and "$500,000.00" in row
    assert re.search(r'<td>1</td>\s*<td>\$500,000.00</td>\s*<td>no</td>\s*<td class="standing">below</td>', row)
    assert admin.get("/nexus", params={"as_of": "2026-13-01"}).status_code == 422  # the API's date check
    assert member.get("/nexus").status_code == 403  # the API's admin-only report


def test_nexus_page_says_which_sales_were_converted(admin: ConsoleClient, http: httpx.Client) -> None:
    # A CA sale of 100.00 EUR at 1.1 USD per EUR: $110.00 counted, one sale in EUR (issue 37).
    r = http.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-01-05T12:00:00Z", "currency": "EUR",
        "exchange_rate": "1.1", "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000",
                                                "customer": {"address": {"state": "CA"}},
                                                "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200, r.text
    page = admin.get("/nexus", params={"as_of": "2026-02-01"})
    row = re.search(r'<tr id="nexus-CA".*?</tr>', page.text, re.S).group(0)
    assert "$110.00" in row and "1 in EUR, converted at their stored rates" in row
    assert "converted" not in re.search(r'<tr id="nexus-TX".*?</tr>', page.text, re.S).group(0)


# ------------------------------------------------------------------ transactions


def test_transactions_list_filters_and_detail(admin: ConsoleClient, member: ConsoleClient,
                                              http: httpx.Client, admin_http: httpx.Client) -> None:
    assert admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX",
                                                                "effective_from": "2020-01-01"}).status_code == 201
    ref = "order-" + uuid.uuid4().hex[:8]
    # A TX sale of $100.00 with no postal code, registered in Texas: state tax only, 6.25 % = $6.25.
    r = http.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z", "reference_id": ref,
        "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000",
                        "customer": {"address": {"state": "TX"}},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200, r.text
    txn_id = r.json()["id"]
    for client in (admin, member):  # reading transactions needs no admin rights
        page = client.get("/transactions", params={"reference": ref})
        assert page.status_code == 200 and txn_id in page.text
        assert txn_id not in client.get("/transactions", params={"reference": ref, "status": "draft"}).text
    detail = admin.get(f"/transactions/{txn_id}")
    assert detail.status_code == 200 and f"Transaction {ref}" in detail.text
    assert "1 × $100.00" in detail.text
    # Texas's state rate 0.0625 shows as a percentage: 0.0625 x 100 = 6.25 %.
    assert "<td>6.25 %</td>" in detail.text and "0.0625" not in detail.text
    # The line's ship-to address (only a state was sent), its tax code, and no stored customer.
    assert '<dd class="ship-to">TX</dd>' in detail.text
    assert '<dd class="tax-code"><code>GENERAL.TANGIBLE.GOODS</code></dd>' in detail.text
    assert '<dd class="customer">—</dd>' in detail.text
    # The registration decides the tax; whatever it is, the page shows the API's figures.
    api = http.get(f"/transactions/{txn_id}").json()
    assert f"Tax {'$%d.%02d' % divmod(int(api['line_items'][0]['tax_amount']), 100)}" in detail.text
    bad = admin.get("/transactions", params={"date_from": "2026-02-30"})
    assert bad.status_code == 422 and 'role="alert"' in bad.text
    assert admin.get("/transactions/txn_01HZZZZZZZZZZZZZZZZZZZZZZZ").status_code == 404


def _listed(client: ConsoleClient, **params: str) -> list[str]:
    """The transaction ids the console's list shows for ``params``, in the page's order."""
    page = client.get("/transactions", params=params)
    assert page.status_code == 200, page.text
    return re.findall(r'<a href="/console/transactions/(txn_[0-9A-Z]+)">', page.text)


def test_transactions_search_partial_any_case_by_customer_state_and_inclusive_dates(
        admin: ConsoleClient, admin_http: httpx.Client, http: httpx.Client) -> None:
    tag = uuid.uuid4().hex[:8]
    cust = new_customer(admin_http, name=f"Acme Supplies {tag}", email=f"ap-{tag}@acme.example")

    def sale(ref: str, day: str, state: str, status: str, **customer: object) -> str:
        r = http.post("/transactions", json={
            "type": "sale", "status": status, "transaction_date": f"2026-03-{day}T12:00:00Z", "reference_id": ref,
            "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000",
                            "customer": {"address": {"state": state}, **customer},
                            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
        assert r.status_code == 200, r.text
        return r.json()["id"]

    # Created in this order, so the second has the greater id, but the first is dated later:
    # "newest first" is by transaction date, so the March 16 draft in CA comes first.
    ca = sale(f"inv-{tag}-0002", "16", "CA", "draft")
    tx = sale(f"inv-{tag}-0001", "15", "TX", "finalized", preset={"id": cust["source_id"]})
    # Part of the reference, in another case, finds both.
    assert _listed(admin, reference=f"INV-{tag.upper()}") == [ca, tx]
    assert _listed(admin, reference=f"{tag}-0001") == [tx]
    # The customer by its cust_ id, its source id, part of its name (any case) or its email.
    for text in (cust["id"], cust["source_id"], f"acme supplies {tag}".upper(), f"ap-{tag}@acme.example"):
        assert _listed(admin, reference=tag, customer=text) == [tx], text
    assert _listed(admin, reference=tag, customer="nobody-" + tag) == []
    # The ship-to state, in any case.
    assert _listed(admin, reference=tag, state="TX") == [tx]
    assert _listed(admin, reference=tag, state="ca") == [ca]
    # The API's statuses: void (not "voided") and filed are offered.
    page = admin.get("/transactions")
    for status in ("draft", "finalized", "filed", "void"):
        assert f'<option value="{status}"' in page.text
    assert "voided" not in page.text
    assert _listed(admin, reference=tag, status="draft") == [ca]
    # "To" is inclusive: From = To = March 15 is that day; March 15..16 includes the 16th.
    assert _listed(admin, reference=tag, date_from="2026-03-15", date_to="2026-03-15") == [tx]
    assert _listed(admin, reference=tag, date_from="2026-03-15", date_to="2026-03-16") == [ca, tx]
    assert _listed(admin, reference=tag, date_to="2026-03-15") == [tx]
    # The transaction page links the line's stored customer.
    detail = admin.get(f"/transactions/{tx}")
    assert f'<dd class="customer"><a href="/console/customers/{cust["id"]}">{cust["source_id"]}</a></dd>' in detail.text
    bad = admin.get("/transactions", params={"state": "Texas"})
    assert bad.status_code == 422 and "state must be a two-letter" in bad.text


def test_transactions_pages_follow_the_transaction_date(admin: ConsoleClient, http: httpx.Client) -> None:
    # 52 sales created in one batch, the first dated latest: sale i is dated 2026-01-01 + (51 - i) days,
    # so by transaction date the order is sale 0, 1, ..., 51, the reverse of creation (ids).
    tag = uuid.uuid4().hex[:8]
    start = date(2026, 1, 1)
    items = [{"type": "sale", "status": "finalized", "reference_id": f"pg-{tag}-{i:02d}",
              "transaction_date": f"{start + timedelta(days=51 - i)}T12:00:00Z",
              "line_items": [{"id": "1", "quantity": "1", "unit_price": "1000",
                              "customer": {"address": {"state": "TX"}},
                              "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]} for i in range(52)]
    r = http.post("/transactions/batch", json={"transactions": items})
    assert r.status_code == 200, r.text
    page = admin.get("/transactions", params={"reference": f"pg-{tag}"})
    refs = re.findall(rf">(pg-{tag}-\d\d)</a>", page.text)
    assert refs == [f"pg-{tag}-{i:02d}" for i in range(50)]  # 50 a page
    older = re.search(r'<a href="/console/transactions\?([^"]+)">Older transactions</a>', page.text).group(1)
    page = admin.get("/transactions?" + older.replace("&amp;", "&"))
    assert re.findall(rf">(pg-{tag}-\d\d)</a>", page.text) == [f"pg-{tag}-50", f"pg-{tag}-51"]
    assert "Older transactions" not in page.text


# ------------------------------------------------------------------ returns


def test_a_return_is_prepared_filed_and_exported(admin: ConsoleClient, member: ConsoleClient,
                                                 http: httpx.Client, admin_http: httpx.Client) -> None:
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX",
                                                             "effective_from": "2020-01-01"})
    assert r.status_code == 201, r.text
    # A registered TX sale of $100.00 without a postal code: Texas 6.25 % only, $6.25.
    r = http.post("/transactions", json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z",
        "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000", "customer": {"address": {"state": "TX"}},
                        "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
    assert r.status_code == 200 and r.json()["tax_amount"] == "625", r.text
    r = admin.post("/returns", {"jurisdiction": "US-ST-TX", "period_start": "2026-03-01",
                                "period_end": "2026-03-31"})
    assert r.status_code == 303, r.text
    fid = r.headers["location"].rsplit("/", 1)[1]
    page = admin.get(f"/returns/{fid}")
    assert page.status_code == 200 and "prepared" in page.text
    assert "<dt>Tax to file</dt><dd>$6.25</dd>" in page.text and "<dt>Transactions</dt><dd>1</dd>" in page.text
    assert member.post(f"/returns/{fid}/file").status_code == 403
    assert member.get(f"/returns/{fid}/file").status_code == 403  # nor is a member asked
    assert f'<form method="get" action="/console/returns/{fid}/file">' in page.text
    ask = admin.get(f"/returns/{fid}/file", params={"label": "US-ST-TX 2026-03-01 to 2026-03-31"})
    assert ask.status_code == 200 and f"Mark the return “US-ST-TX 2026-03-01 to 2026-03-31” ({fid}) as filed?" in ask.text
    assert f'<form method="post" action="/console/returns/{fid}/file"' in ask.text
    assert f'<a href="/console/returns/{fid}">Cancel</a>' in ask.text
    assert "prepared" in admin.get(f"/returns/{fid}").text  # asking filed nothing
    assert admin.post(f"/returns/{fid}/file").status_code == 303
    page = admin.get(f"/returns/{fid}")
    assert "filed 2" in page.text and "Mark as filed" not in page.text
    assert admin.post(f"/returns/{fid}/file").status_code == 303  # the API: filing again is a no-op
    export = admin.get(f"/returns/{fid}/export")
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    assert export.headers["content-disposition"] == f'attachment; filename="{fid}.csv"'
    assert export.text == admin_http.get(f"/filings/{fid}/export").text  # the API's own export
    bad = admin.post("/returns", {"jurisdiction": "US-ST-TX", "period_start": "2026-04-30",
                                  "period_end": "2026-04-01"})
    assert bad.status_code == 422 and "The return was not prepared" in bad.text

    report = admin.get("/returns/liability", params={"from": "2026-03-01", "to": "2026-03-31"})
    assert report.status_code == 200
    # One state, so its bar is the full 100 units long; the table repeats the figure.
    assert re.search(r'<rect x="60" y="4" width="100.0" height="20" class="chart-bar"><title>[^<]*: \$6.25</title>',
                     report.text)
    assert admin.get("/returns/liability", params={"from": "2026-03-31", "to": "2026-03-01"}).status_code == 422
    assert member.get("/returns").status_code == 403
    assert "return.filed" in audit_actions(admin)


def test_the_liability_page_charts_tax_by_month(admin: ConsoleClient, member: ConsoleClient,
                                                http: httpx.Client, admin_http: httpx.Client) -> None:
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX",
                                                             "effective_from": "2020-01-01"})
    assert r.status_code == 201, r.text
    # Registered TX sales without a postal code: Texas 6.25 % state tax only.
    # Jan 15: $100.00 -> 10000 x 0.0625 = 625 cents; Mar 10: $200.00 -> 20000 x 0.0625 = 1250 cents;
    # nothing in February; a draft in February is not liable (only finalized and filed count).
    for day, price, status in (("2026-01-15", "10000", "finalized"), ("2026-03-10", "20000", "finalized"),
                               ("2026-02-10", "50000", "draft")):
        r = http.post("/transactions", json={
            "type": "sale", "status": status, "transaction_date": f"{day}T12:00:00Z",
            "line_items": [{"id": "1", "quantity": "1", "unit_price": price,
                            "customer": {"address": {"state": "TX"}},
                            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
        assert r.status_code == 200, r.text
    page = admin.get("/returns/liability", params={"from": "2026-01-01", "to": "2026-03-31"})
    assert page.status_code == 200
    rows = dict(re.findall(r'<tr id="month-(\d{4}-\d{2})"><th scope="row">[^<]*</th><td>[^<]*</td><td>([^<]*)</td>',
                           page.text))
    assert rows == {"2026-01": "$6.25", "2026-02": "$0.00", "2026-03": "$12.50"}
    svg = re.search(r'<svg id="month-chart".*?</svg>', page.text, re.DOTALL).group(0)
    assert '<title id="month-chart-title">' in svg and "Jan 2026 $6.25; Feb 2026 $0.00; Mar 2026 $12.50." in svg
    # One bar per month, lengths out of 100 against the largest month (March): 625 / 1250 = 50 %.
    assert re.findall(r'<rect x="40" y="\d+" width="([\d.]+)" height="12" class="chart-bar month-bar">', svg) == [
        "50.0", "0.0", "100.0"]
    # A range starting and ending inside months clips them: Jan 16..Mar 10 leaves January empty.
    page = admin.get("/returns/liability", params={"from": "2026-01-16", "to": "2026-03-10"})
    assert re.search(r'<tr id="month-2026-01"><th scope="row">Jan 2026</th><td>2026-01-16 to 2026-01-31</td>'
                     r'<td>\$0.00</td>', page.text)
    assert re.search(r'<tr id="month-2026-03">.*?<td>\$12.50</td>', page.text)
    # By default the last 12 calendar months up to today: 12 bars.
    page = admin.get("/returns/liability")
    assert page.status_code == 200 and page.text.count('class="chart-bar month-bar"') == 12
    # Past 36 months no chart (one report call per month), but the state totals still show.
    page = admin.get("/returns/liability", params={"from": "2020-01-01", "to": "2026-03-31"})
    assert page.status_code == 200 and "month-chart" not in page.text and "$18.75" in page.text
    assert member.get("/returns/liability").status_code == 403  # the API's admin-only report


# ------------------------------------------------------------------ calculator


def test_the_calculator_shows_the_apis_breakdown(admin: ConsoleClient, member: ConsoleClient,
                                                 admin_http: httpx.Client) -> None:
    assert admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-TX",
                                                                "effective_from": "2020-01-01"}).status_code == 201
    # 2 x $49.99 in Texas without a postal code: the state's 6.25 % only, on 9998 cents = 624.875 -> 625.
    form = {"state": "TX", "country": "US", "quantity_1": "2", "price_1": "4999",
            "codes_1": "GENERAL.TANGIBLE.GOODS"}
    for client in (admin, member):  # a calculation stores nothing: members may try rules
        r = client.post("/calculator", form)
        assert r.status_code == 200, r.text
        assert '<h2 id="result-title">Tax $6.25</h2>' in r.text
        assert re.search(r"<td>\$99.98</td><td>\$6.25</td><td>yes</td>", r.text)
    bad = admin.post("/calculator", {**form, "price_1": "12.5x"})
    assert bad.status_code == 422 and "The calculation was refused" in bad.text
    assert admin.post("/calculator", form, token=False).status_code == 403


def test_the_return_page_totals_each_sale_once_and_lists_marketplace_and_converted_sales(
        admin: ConsoleClient, http: httpx.Client, admin_http: httpx.Client) -> None:
    # Issue 37. California: 6 % state + 1.25 % statewide local, so a sale has two rows.
    r = admin_http.post("/organization/registrations", json={"jurisdiction": "US-ST-CA", "effective_from": "2020-01-01"})
    assert r.status_code == 201, r.text

    def sale(price: int, **extra: str) -> dict:
        r = http.post("/transactions", json={
            "type": "sale", "status": "finalized", "transaction_date": "2026-05-15T12:00:00Z", **extra,
            "line_items": [{"id": "1", "quantity": "1", "unit_price": str(price), "customer": {"address": {"state": "CA"}},
                            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
        assert r.status_code == 200, r.text
        return r.json()

    sale(10000)  # $100.00: 600 + 125
    eur = sale(10000, currency="EUR", exchange_rate="1.1")  # 110.00 USD: 660 + 137.5 -> 138 (converted per row)
    mkt = sale(20000, marketplace_facilitator="Etsy")  # off the return: 1200 + 250
    r = admin.post("/returns", {"jurisdiction": "US-ST-CA", "period_start": "2026-05-01", "period_end": "2026-05-31"})
    assert r.status_code == 303, r.text
    page = admin.get(f'/returns/{r.headers["location"].rsplit("/", 1)[1]}').text
    # The total counts each sale once: 10000 + 11000 = $210.00 (not twice that); tax 600 + 125 + 660 + 138 = $15.23.
    total = re.search(r'<tr id="return-total">(.*?)</tr>', page, re.S)
    assert total and "<td>$210.00</td>" in total.group(1) and "<td>$15.23</td>" in total.group(1), page
    assert f'/transactions/{mkt["id"]}' in page and "Etsy" in page and "$200.00" in page
    assert f'/transactions/{eur["id"]}' in page and "<td>EUR</td>" in page and "1.1 (2026-05-15)" in page
    report = admin.get("/returns/liability", params={"from": "2026-05-01", "to": "2026-05-31"}).text
    assert 'id="marketplace"' in report and f'/transactions/{mkt["id"]}' in report
    # The liability page's "Gross sales" counts each sale once too: $210.00 (the state row and the
    # statewide local row would make $420.00), taxable the same, tax to file $15.23.
    states = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>", report)
    assert [s[1:] for s in states] == [("$210.00", "$210.00", "$15.23")], states
