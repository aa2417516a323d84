"""The console's products and business-locations pages (issue 36): list, create and edit through the
API's own methods (their validation and messages), archive behind a confirmation page, each change
in the audit log; what the API then reports. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
import uuid

import httpx

from consolekit import ConsoleClient
from test_console import admin, audit_actions, member  # noqa: F401  (fixtures)


def test_products_are_listed_created_edited_and_archived(admin: ConsoleClient, member: ConsoleClient,  # noqa: F811
                                                         http: httpx.Client) -> None:
    source_id = "sku-" + uuid.uuid4().hex[:8]
    r = admin.post("/products", {"source_id": source_id, "name": "Kettle", "tax_codes": "GENERAL.TANGIBLE.GOODS"})
    assert r.status_code == 303, r.text
    pid = r.headers["location"].rsplit("/", 1)[1]
    assert http.get(f"/products/{pid}").json()["tax_codes"] == ["GENERAL.TANGIBLE.GOODS"]
    listing = member.get("/products")  # members read products, as a plain API key does
    assert listing.status_code == 200 and f'<a href="/console/products/{pid}">Kettle</a>' in listing.text
    assert 'action="/console/products"' not in listing.text  # no form for a role that cannot write
    assert member.post("/products", {"source_id": "x"}).status_code == 403
    # An edit goes through the API's PATCH: the name and codes change.
    page = admin.get(f"/products/{pid}")
    assert page.status_code == 200 and 'value="GENERAL.TANGIBLE.GOODS"' in page.text
    r = admin.post(f"/products/{pid}", {"name": "Electric kettle", "tax_codes": "GENERAL.TANGIBLE.GOODS"})
    assert (r.status_code, r.headers["location"]) == (303, f"/console/products/{pid}")
    assert http.get(f"/products/{pid}").json()["name"] == "Electric kettle"
    # A duplicate source id is the API's 409/422, shown on the page, nothing created.
    dup = admin.post("/products", {"source_id": source_id, "name": "Again"})
    assert dup.status_code == 422 and 'role="alert"' in dup.text
    # Archiving asks first: the button opens a page naming the product and its consequence.
    confirm = admin.get(f"/products/{pid}/archive", params={"label": "Electric kettle"})
    assert confirm.status_code == 200 and "Archive the product “Electric kettle”" in confirm.text
    assert http.get(f"/products/{pid}").json().get("archived_at") is None  # opening it changed nothing
    assert member.get(f"/products/{pid}/archive").status_code == 403
    r = admin.post(f"/products/{pid}/archive")
    assert r.status_code == 303
    assert http.get(f"/products/{pid}").json()["archived_at"]
    assert "Save product" not in admin.get(f"/products/{pid}").text  # an archived product cannot be edited
    assert audit_actions(admin)[:3] == ["product.archived", "product.updated", "product.created"]


def test_locations_are_listed_created_edited_archived_and_unarchived(
        admin: ConsoleClient, member: ConsoleClient, admin_http: httpx.Client) -> None:  # noqa: F811
    form = {"name": "Austin warehouse", "line1": "100 Congress Ave", "city": "Austin", "state": "TX",
            "postal_code": "78701", "country": "US", "effective_from": "2026-01-01", "is_default": "on"}
    # A ZIP outside its state is the API's 422 at the field, nothing stored.
    bad = admin.post("/locations", {**form, "postal_code": "10001"})
    assert bad.status_code == 422 and "postal_code" in bad.text
    assert admin_http.get("/organization/locations").json()["data"] == []
    r = admin.post("/locations", form)
    assert (r.status_code, r.headers["location"]) == (303, "/console/locations")
    [loc] = admin_http.get("/organization/locations").json()["data"]
    assert loc["is_default"] and loc["address"]["postal_code"] == "78701"
    page = admin.get("/locations")
    assert f'<a href="/console/locations/{loc["id"]}">Austin warehouse</a>' in page.text
    assert "100 Congress Ave, Austin, TX, 78701, US" in page.text
    assert member.get("/locations").status_code == 403  # the API's admin-only methods
    # Edit: a new name and an end date; then clear the end date (open-ended again).
    detail = admin.get(f"/locations/{loc['id']}")
    assert detail.status_code == 200 and 'value="100 Congress Ave"' in detail.text and "checked" in detail.text
    r = admin.post(f"/locations/{loc['id']}", {**form, "name": "Austin DC", "effective_to": "2026-12-31"})
    assert r.status_code == 303, r.text
    got = admin_http.get(f"/organization/locations/{loc['id']}").json()
    assert (got["name"], got["effective_to"]) == ("Austin DC", "2026-12-31")
    assert admin.post(f"/locations/{loc['id']}", {**form, "name": "Austin DC"}).status_code == 303
    assert admin_http.get(f"/organization/locations/{loc['id']}").json().get("effective_to") is None
    # Archive asks first, then archives (and it stops being the default); unarchive.
    confirm = admin.get(f"/locations/{loc['id']}/archive", params={"label": "Austin DC"})
    assert confirm.status_code == 200 and "Archive the location “Austin DC”" in confirm.text
    assert admin.post(f"/locations/{loc['id']}/archive").status_code == 303
    got = admin_http.get(f"/organization/locations/{loc['id']}").json()
    assert got["archived_at"] and not got["is_default"]
    assert "Unarchive location" in admin.get(f"/locations/{loc['id']}").text
    assert loc["id"] not in admin.get("/locations").text and loc["id"] in admin.get("/locations?archived=1").text
    assert admin.post(f"/locations/{loc['id']}/unarchive").status_code == 303
    assert admin_http.get(f"/organization/locations/{loc['id']}").json().get("archived_at") is None
    assert re.findall(r"location\.\w+", " ".join(audit_actions(admin)[:5])) == [
        "location.unarchived", "location.archived", "location.updated", "location.updated", "location.created"]
