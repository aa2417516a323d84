"""Business locations (issue 19) through both transports against a real server
(SQLite and PostgreSQL): create, list, get, partial update, archive and
unarchive; validation with JSON pointers (a US ZIP must lie in its state);
one default at a time; admin-only access; another organization's location is 404.

ZIP facts used (the ``zipcodes`` directory): 78701 Austin TX, 77002 Houston TX,
90210 Beverly Hills CA, 20001 Washington DC; 99999 is no ZIP code."""

from __future__ import annotations

import grpc
import httpx
import pytest

from levyserver import LevyServer, Tenant
from levytest import call_error, md
from levy.v1 import locations_pb2 as pb
from levy.v1 import locations_pb2_grpc

PATH = "/organization/locations"
MISSING = "loc_01HZZZZZZZZZZZZZZZZZZZZZZZ"
AUSTIN = {"line1": "100 Congress Ave", "line2": "Suite 200", "city": "Austin", "state": "TX",
          "postal_code": "78701", "country": "US"}
HOUSTON = {"line1": "901 Bagby St", "city": "Houston", "state": "TX", "postal_code": "77002"}


@pytest.fixture
def stub(channel: grpc.Channel) -> locations_pb2_grpc.LocationServiceStub:
    return locations_pb2_grpc.LocationServiceStub(channel)


def pointers(r: httpx.Response) -> dict[str, str]:
    return {e["source"]["pointer"]: e["detail"] for e in r.json()["errors"]}


def create(client: httpx.Client, name: str, address: dict, **extra: object) -> dict:
    r = client.post(PATH, json={"name": name, "address": address, "effective_from": "2026-01-01", **extra})
    assert r.status_code == 201, r.text
    return r.json()


# ------------------------------------------------------------ admin only, both transports

REST_CALLS = [
    ("GET", PATH, None),
    ("POST", PATH, {"name": "x", "address": HOUSTON, "effective_from": "2026-01-01"}),
    ("GET", f"{PATH}/{MISSING}", None),
    ("PATCH", f"{PATH}/{MISSING}", {"name": "y"}),
    ("POST", f"{PATH}/{MISSING}/archive", {}),
    ("POST", f"{PATH}/{MISSING}/unarchive", {}),
]

GRPC_CALLS = [
    ("ListLocations", pb.ListLocationsRequest()),
    ("CreateLocation", pb.CreateLocationRequest(location=pb.BusinessLocation(name="x"))),
    ("GetLocation", pb.GetLocationRequest(location_id=MISSING)),
    ("UpdateLocation", pb.UpdateLocationRequest(location_id=MISSING, location=pb.BusinessLocation(name="y"))),
    ("ArchiveLocation", pb.ArchiveLocationRequest(location_id=MISSING)),
    ("UnarchiveLocation", pb.UnarchiveLocationRequest(location_id=MISSING)),
]


@pytest.mark.parametrize("method, path, body", REST_CALLS)
def test_rest_plain_key_is_403_and_no_key_is_401(http: httpx.Client, anon_http: httpx.Client, admin_http: httpx.Client,
                                                 method: str, path: str, body: dict | None) -> None:
    r = http.request(method, path, json=body)
    assert r.status_code == 403, r.text
    assert r.json()["errors"][0]["code"] == "permission_error"
    r = anon_http.request(method, path, json=body)
    assert r.status_code == 401, r.text
    assert r.json()["errors"][0]["code"] == "authentication_error"
    assert admin_http.get(PATH).json() == {"data": [], "has_more": False}  # nothing was written


@pytest.mark.parametrize("rpc, req", GRPC_CALLS, ids=[c[0] for c in GRPC_CALLS])
def test_grpc_plain_key_is_permission_denied_and_no_key_unauthenticated(stub, tenant: Tenant, rpc: str, req) -> None:
    err = call_error(getattr(stub, rpc), req, md(tenant.key))
    assert err.code == grpc.StatusCode.PERMISSION_DENIED and err.reason == "permission_error"
    err = call_error(getattr(stub, rpc), req, [])
    assert err.code == grpc.StatusCode.UNAUTHENTICATED


# ------------------------------------------------------------ REST


def test_rest_create_get_list_update_archive(admin_http: httpx.Client) -> None:
    r = admin_http.post(PATH, json={"name": " Austin HQ ", "address": {**AUSTIN, "state": "tx", "postal_code": "78701-1234"},
                                    "is_default": True, "effective_from": "2026-01-01", "effective_to": "2026-12-31"})
    assert r.status_code == 201, r.text
    hq = r.json()
    assert set(hq) == {"id", "name", "address", "is_default", "effective_from", "effective_to", "archived_at",
                       "created_at", "updated_at"}
    assert hq["id"].startswith("loc_") and hq["name"] == "Austin HQ"
    # Normalised: the state upper-case, the name trimmed; the ZIP+4 kept.
    assert hq["address"] == {**AUSTIN, "postal_code": "78701-1234"}
    assert hq["is_default"] is True and hq["effective_from"] == "2026-01-01" and hq["effective_to"] == "2026-12-31"
    assert hq["archived_at"] is None and hq["created_at"] == hq["updated_at"]
    assert admin_http.get(f"{PATH}/{hq['id']}").json() == hq

    # Optional fields: no line2, country defaults to US, not the default, open-ended.
    houston = create(admin_http, "Houston", HOUSTON)
    assert houston["address"] == {**HOUSTON, "line2": None, "country": "US"}
    assert houston["is_default"] is False and houston["effective_to"] is None
    dc = create(admin_http, "DC office", {"line1": "1 Main St", "city": "Washington", "state": "DC",
                                          "postal_code": "20001"})

    listed = admin_http.get(PATH).json()
    assert [x["id"] for x in listed["data"]] == [dc["id"], houston["id"], hq["id"]] and listed["has_more"] is False
    page1 = admin_http.get(PATH, params={"limit": 2}).json()
    assert [x["id"] for x in page1["data"]] == [dc["id"], houston["id"]] and page1["has_more"] is True
    page2 = admin_http.get(PATH, params={"limit": 2, "starting_after": houston["id"]}).json()
    assert page2 == {"data": [hq], "has_more": False}
    assert admin_http.get(PATH, params={"limit": 0}).status_code == 422

    # Partial update: only the keys sent change; read-only fields are refused.
    r = admin_http.patch(f"{PATH}/{houston['id']}", json={"name": "Houston DC", "effective_to": "2027-06-30"})
    assert r.status_code == 200, r.text
    changed = r.json()
    assert changed == {**houston, "name": "Houston DC", "effective_to": "2027-06-30",
                       "updated_at": changed["updated_at"]}
    assert changed["updated_at"] > houston["updated_at"]
    r = admin_http.patch(f"{PATH}/{houston['id']}", json={"effective_to": None})
    assert r.status_code == 200 and r.json()["effective_to"] is None
    r = admin_http.patch(f"{PATH}/{houston['id']}", json={"id": "loc_x", "created_at": "2020-01-01T00:00:00Z"})
    assert r.status_code == 422 and set(pointers(r)) == {"/id", "/created_at"}
    # An address sent replaces the whole address (line2 not sent: none).
    r = admin_http.patch(f"{PATH}/{hq['id']}", json={"address": {**HOUSTON, "line1": "1000 Main St"}})
    assert r.status_code == 200, r.text
    assert r.json()["address"] == {**HOUSTON, "line1": "1000 Main St", "line2": None, "country": "US"}
    assert r.json()["name"] == "Austin HQ" and r.json()["is_default"] is True

    # Archive: not listed by default, no longer the default; again changes nothing.
    r = admin_http.post(f"{PATH}/{hq['id']}/archive")
    assert r.status_code == 200, r.text
    archived = r.json()
    assert archived["archived_at"] is not None and archived["is_default"] is False
    assert admin_http.post(f"{PATH}/{hq['id']}/archive").json() == archived
    assert [x["id"] for x in admin_http.get(PATH).json()["data"]] == [dc["id"], houston["id"]]
    assert [x["id"] for x in admin_http.get(PATH, params={"include_archived": "true"}).json()["data"]] == [
        dc["id"], houston["id"], hq["id"]]
    assert admin_http.get(f"{PATH}/{hq['id']}").json() == archived
    # An archived location cannot be changed until it is unarchived.
    r = admin_http.patch(f"{PATH}/{hq['id']}", json={"name": "Back"})
    assert r.status_code == 422 and r.json()["errors"][0]["code"] == "invalid_state"
    r = admin_http.post(f"{PATH}/{hq['id']}/unarchive")
    assert r.status_code == 200
    assert r.json()["archived_at"] is None and r.json()["is_default"] is False
    assert admin_http.patch(f"{PATH}/{hq['id']}", json={"name": "Back"}).json()["name"] == "Back"

    for method, path in (("GET", f"{PATH}/{MISSING}"), ("PATCH", f"{PATH}/{MISSING}"),
                         ("POST", f"{PATH}/{MISSING}/archive"), ("POST", f"{PATH}/{MISSING}/unarchive")):
        r = admin_http.request(method, path, json={"name": "x"} if method == "PATCH" else None)
        assert r.status_code == 404, (method, path, r.text)
        assert r.json()["errors"][0]["code"] == "not_found" and MISSING in r.json()["errors"][0]["detail"]


def test_rest_one_default_at_a_time(admin_http: httpx.Client) -> None:
    def defaults() -> list[str]:
        return [x["name"] for x in admin_http.get(PATH, params={"include_archived": "true"}).json()["data"]
                if x["is_default"]]

    a = create(admin_http, "A", AUSTIN, is_default=True)
    b = create(admin_http, "B", HOUSTON, is_default=True)
    assert defaults() == ["B"]
    assert admin_http.get(f"{PATH}/{a['id']}").json()["is_default"] is False
    r = admin_http.patch(f"{PATH}/{a['id']}", json={"is_default": True})
    assert r.status_code == 200 and r.json()["is_default"] is True
    assert defaults() == ["A"]
    # Setting it again changes nothing (not even updated_at).
    again = admin_http.patch(f"{PATH}/{a['id']}", json={"is_default": True}).json()
    assert again == r.json()
    # A new non-default location leaves the default alone; unsetting leaves none.
    create(admin_http, "C", HOUSTON)
    assert defaults() == ["A"]
    assert admin_http.patch(f"{PATH}/{a['id']}", json={"is_default": False}).json()["is_default"] is False
    assert defaults() == []
    assert admin_http.get(f"{PATH}/{b['id']}").json()["is_default"] is False


@pytest.mark.parametrize("body, pointer, fragment", [
    ({"address": {**AUSTIN, "postal_code": "90210"}}, "/address/postal_code", "does not lie in Texas (TX)"),
    ({"address": {**AUSTIN, "state": "CA"}}, "/address/postal_code", "does not lie in California (CA)"),
    ({"address": {**AUSTIN, "postal_code": "99999"}}, "/address/postal_code", "not a known US ZIP code"),
    ({"address": {**AUSTIN, "postal_code": "7870"}}, "/address/postal_code", "not a US ZIP code"),
    ({"address": {**AUSTIN, "postal_code": None}}, "/address/postal_code", "required for a US address"),
    ({"address": {**AUSTIN, "state": "XX"}}, "/address/state", "not a US state code"),
    ({"address": {**AUSTIN, "state": None}}, "/address/state", "required for a US address"),
    ({"address": {**AUSTIN, "line1": "  "}}, "/address/line1", "required"),
    ({"address": {**AUSTIN, "city": None}}, "/address/city", "required"),
    ({"address": {**AUSTIN, "country": "U1"}}, "/address/country", "two-letter country code"),
    ({"address": None}, "/address/line1", "required"),
    ({"name": ""}, "/name", "required"),
    ({"effective_from": None}, "/effective_from", "required"),
    ({"effective_from": "2026-02-30"}, "/effective_from", "YYYY-MM-DD"),
    ({"effective_to": "2025-12-31"}, "/effective_to", "before effective_from"),
    ({"name": "x" * 201}, "/name", "200"),
])
def test_rest_validation_with_pointers(admin_http: httpx.Client, body: dict, pointer: str, fragment: str) -> None:
    full = {"name": "Austin", "address": AUSTIN, "effective_from": "2026-01-01", **body}
    r = admin_http.post(PATH, json=full)
    assert r.status_code == 422, r.text
    assert fragment in pointers(r)[pointer], r.text
    assert admin_http.get(PATH).json()["data"] == []
    # The same rules on update, over an existing location; nothing changes.
    loc = create(admin_http, "Austin", AUSTIN)
    r = admin_http.patch(f"{PATH}/{loc['id']}", json=body)
    assert r.status_code == 422, r.text
    assert fragment in pointers(r)[pointer]
    assert admin_http.get(f"{PATH}/{loc['id']}").json() == loc


def test_rest_every_problem_at_once_and_non_us_addresses(admin_http: httpx.Client) -> None:
    r = admin_http.post(PATH, json={"address": {"state": "TX", "postal_code": "90210"}, "effective_from": "soon",
                                    "effective_to": "later"})
    assert r.status_code == 422
    assert set(pointers(r)) == {"/name", "/address/line1", "/address/city", "/address/postal_code",
                                "/effective_from", "/effective_to"}
    # A location outside the US: state and postal code are free-form and optional.
    loc = create(admin_http, "Toronto", {"line1": "100 King St W", "city": "Toronto", "state": "ON",
                                         "postal_code": "M5X 1A9", "country": "ca"})
    assert loc["address"] == {"line1": "100 King St W", "line2": None, "city": "Toronto", "state": "ON",
                              "postal_code": "M5X 1A9", "country": "CA"}


def test_locations_are_isolated_between_organizations(server: LevyServer, stub, tenant: Tenant,
                                                      other_tenant: Tenant) -> None:
    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}) as a, \
            httpx.Client(base_url=server.http_url, headers={"X-API-Key": other_tenant.admin_key}) as b:
        mine = create(a, "Mine", AUSTIN, is_default=True)
        theirs = create(b, "Theirs", HOUSTON, is_default=True)
        # Each organization has its own default.
        assert a.get(f"{PATH}/{mine['id']}").json()["is_default"] is True
        assert [x["id"] for x in b.get(PATH).json()["data"]] == [theirs["id"]]
        for method, path in (("GET", f"{PATH}/{mine['id']}"), ("PATCH", f"{PATH}/{mine['id']}"),
                             ("POST", f"{PATH}/{mine['id']}/archive"), ("POST", f"{PATH}/{mine['id']}/unarchive")):
            r = b.request(method, path, json={"name": "stolen"} if method == "PATCH" else None)
            assert r.status_code == 404, (method, path, r.text)
        for rpc, req in (("GetLocation", pb.GetLocationRequest(location_id=mine["id"])),
                         ("UpdateLocation", pb.UpdateLocationRequest(location_id=mine["id"],
                                                                     location=pb.BusinessLocation(name="stolen"))),
                         ("ArchiveLocation", pb.ArchiveLocationRequest(location_id=mine["id"]))):
            err = call_error(getattr(stub, rpc), req, md(other_tenant.admin_key))
            assert err.code == grpc.StatusCode.NOT_FOUND and err.reason == "not_found"
        assert a.get(f"{PATH}/{mine['id']}").json() == mine


# ------------------------------------------------------------ gRPC


def test_grpc_create_get_list_update_archive(stub, tenant: Tenant) -> None:
    meta = md(tenant.admin_key)
    loc = stub.CreateLocation(pb.CreateLocationRequest(location=pb.BusinessLocation(
        name="Austin", is_default=True, effective_from="2026-01-01",
        address=pb.LocationAddress(line1="100 Congress Ave", city="Austin", state="TX", postal_code="78701"))),
        metadata=meta)
    assert loc.id.startswith("loc_") and loc.is_default and loc.address.country == "US"
    assert not loc.address.HasField("line2") and not loc.HasField("effective_to")
    assert not loc.HasField("archived_at") and loc.HasField("created_at") and loc.HasField("updated_at")
    assert stub.GetLocation(pb.GetLocationRequest(location_id=loc.id), metadata=meta) == loc
    listed = stub.ListLocations(pb.ListLocationsRequest(limit=10), metadata=meta)
    assert list(listed.data) == [loc] and not listed.has_more

    # Without a mask only the fields set change; a second default replaces the first.
    other = stub.CreateLocation(pb.CreateLocationRequest(location=pb.BusinessLocation(
        name="Houston", effective_from="2026-01-01",
        address=pb.LocationAddress(line1="901 Bagby St", city="Houston", state="TX", postal_code="77002"))),
        metadata=meta)
    out = stub.UpdateLocation(pb.UpdateLocationRequest(location_id=other.id, location=pb.BusinessLocation(
        is_default=True)), metadata=meta)
    assert out.is_default and out.name == "Houston" and out.address == other.address
    assert not stub.GetLocation(pb.GetLocationRequest(location_id=loc.id), metadata=meta).is_default

    err = call_error(stub.CreateLocation, pb.CreateLocationRequest(location=pb.BusinessLocation(
        name="Bad", effective_from="2026-01-01",
        address=pb.LocationAddress(line1="1 Main St", city="Austin", state="TX", postal_code="90210"))), meta)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and err.reason == "validation_error"
    assert [v[0] for v in err.violations] == ["/address/postal_code"]
    err = call_error(stub.GetLocation, pb.GetLocationRequest(location_id=MISSING), meta)
    assert err.code == grpc.StatusCode.NOT_FOUND

    archived = stub.ArchiveLocation(pb.ArchiveLocationRequest(location_id=other.id), metadata=meta)
    assert archived.HasField("archived_at") and not archived.is_default
    assert [x.id for x in stub.ListLocations(pb.ListLocationsRequest(), metadata=meta).data] == [loc.id]
    assert [x.id for x in stub.ListLocations(pb.ListLocationsRequest(include_archived=True), metadata=meta).data] == [
        other.id, loc.id]
    err = call_error(stub.UpdateLocation, pb.UpdateLocationRequest(location_id=other.id, location=pb.BusinessLocation(
        name="x")), meta)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    back = stub.UnarchiveLocation(pb.UnarchiveLocationRequest(location_id=other.id), metadata=meta)
    assert not back.HasField("archived_at")


def test_concurrent_defaults_leave_exactly_one(server: LevyServer, tenant: Tenant) -> None:
    """Eight creates and eight PATCHes, each making its location the default, all at once: the organization
    row lock serialises them, so exactly one location is the default afterwards (without the lock, two
    PostgreSQL transactions could each clear the other defaults before either inserted)."""
    from concurrent.futures import ThreadPoolExecutor

    with httpx.Client(base_url=server.http_url, headers={"X-API-Key": tenant.admin_key}, timeout=60) as c:
        existing = [create(c, f"L{i}", HOUSTON)["id"] for i in range(8)]

        def make(i: int) -> int:
            body = {"name": f"N{i}", "address": AUSTIN, "is_default": True, "effective_from": "2026-01-01"}
            return c.post(PATH, json=body).status_code

        def promote(location_id: str) -> int:
            return c.patch(f"{PATH}/{location_id}", json={"is_default": True}).status_code

        with ThreadPoolExecutor(16) as pool:
            futures = [pool.submit(make, i) for i in range(8)] + [pool.submit(promote, x) for x in existing]
            statuses = [f.result() for f in futures]
        assert statuses == [201] * 8 + [200] * 8
        listed = c.get(PATH).json()["data"]
        assert len(listed) == 16 and sum(x["is_default"] for x in listed) == 1
