"""The console's audit log shows changes from every transport (issue 36): REST and gRPC calls of an
API key and CLI commands, each recorded in the transaction of its change (levy.app.audit); reads,
calculations and refused writes leave no entry. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import grpc
import httpx

from consolekit import ConsoleClient
from levyserver import ROOT, LevyServer, Tenant, levy_env
from test_console import admin  # noqa: F401  (fixture)


def entries(admin: ConsoleClient) -> list[tuple[str, str, str, str]]:  # noqa: F811
    """(who, action, object, detail) of the audit page's rows, newest first."""
    page = admin.get("/audit")
    assert page.status_code == 200
    return re.findall(r"<tr><td>[^<]*</td><td>([^<]*)</td><td><code>([^<]*)</code></td><td><code>([^<]*)</code></td>"
                      r"<td>([^<]*)</td></tr>", page.text)


def test_api_and_cli_changes_appear_in_the_audit_log(server: LevyServer, tenant: Tenant, admin: ConsoleClient,  # noqa: F811
                                                     admin_http: httpx.Client, http: httpx.Client,
                                                     channel: grpc.Channel) -> None:
    from levy.v1 import customers_pb2, customers_pb2_grpc

    source_id = "aud-" + uuid.uuid4().hex[:8]
    # REST: a create (its id is made in the transaction: the entry names its source id) and an update.
    r = http.post("/customers", json={"source_id": source_id, "name": "Audited"})
    assert r.status_code == 201, r.text
    cust = r.json()["id"]
    assert http.patch(f"/customers/{cust}", json={"name": "Audited again"}).status_code == 200
    # Reads, a calculation and a refused write leave nothing.
    http.get(f"/customers/{cust}")
    http.post("/calculations", json={"currency": "USD", "line_items": [
        {"id": "1", "quantity": "1", "unit_price": "100", "customer": {"address": {"state": "TX"}}}]})
    assert http.post("/customers", json={"source_id": ""}).status_code == 422
    # gRPC, with the admin key.
    stub = customers_pb2_grpc.CustomerServiceStub(channel)
    stub.DeleteCustomer(customers_pb2.DeleteCustomerRequest(customer_id=cust),
                        metadata=(("x-api-key", tenant.admin_key),))
    # The CLI, on the server's database.
    r = subprocess.run([sys.executable, "-m", "levy", "registrations", "add", "--jurisdiction", "US-ST-TX",
                        "--effective-from", "2020-01-01", "--organization", tenant.organization_id,
                        "--database-url", server.database_url], cwd=ROOT, capture_output=True, text=True,
                       env=levy_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    reg_id = r.stdout.strip()
    got = entries(admin)
    plain = next(k for k in admin_http.get("/api-keys").json()["data"] if k["id"] == tenant.key_id)
    admin_key = next(k for k in admin_http.get("/api-keys").json()["data"]
                     if k["id"] == tenant.admin_key_id)
    assert got[:4] == [
        ("levy CLI", "cli.registrations.add", reg_id, ""),
        (f"API key {admin_key['name']} ({admin_key['prefix']})", "customer.delete", cust, "via grpc"),
        (f"API key {plain['name']} ({plain['prefix']})", "customer.update", cust, "via rest; name=Audited again"),
        (f"API key {plain['name']} ({plain['prefix']})", "customer.create", cust, f"via rest; source_id={source_id}"),
    ], got
    assert len(got) == 4  # nothing else: no entry for the reads, the calculation or the refused create


def _created(r: httpx.Response, status: int = 201) -> str:
    assert r.status_code == status, r.text
    return str(r.json()["id"])


def _sale(http: httpx.Client, ref: str, headers: dict[str, str] | None = None) -> str:
    return _created(http.post("/transactions", headers=headers or {}, json={
        "type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z", "reference_id": ref,
        "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000",
                        "customer": {"address": {"state": "TX"}}}]}), 200)


def test_a_create_names_its_new_object_from_rest_grpc_and_the_console(
        tenant: Tenant, admin: ConsoleClient, admin_http: httpx.Client, http: httpx.Client,  # noqa: F811
        channel: grpc.Channel) -> None:
    from levy.v1 import products_pb2, products_pb2_grpc

    tag = uuid.uuid4().hex[:8]
    # REST creates: each entry's object is the id the response gave (after the path's ids).
    cust = _created(http.post("/customers", json={"source_id": f"c-{tag}", "name": "Named"}))
    cert = _created(admin_http.post(f"/customers/{cust}/exemption-certificates",
                                    json={"jurisdiction": "US-ST-TX", "exemption_type": "resale"}))
    product = _created(http.post("/products", json={"source_id": f"p-{tag}", "name": "Kettle"}))
    sale = _sale(http, f"s-{tag}")  # a sale: stored in one statement with its entry
    credit = _created(http.post("/transactions", json={  # a credit of it: in a unit of work
        "type": "credit", "status": "finalized", "parent_transaction_id": sale}), 200)
    # With an Idempotency-Key the call runs in the request's transaction, which carries the entry.
    again = _sale(http, f"i-{tag}", headers={"Idempotency-Key": uuid.uuid4().hex})
    reg = _created(admin_http.post("/organization/registrations",
                                   json={"jurisdiction": "US-ST-TX", "effective_from": "2025-01-01"}))
    loc = _created(admin_http.post("/organization/locations", json={
        "name": "Houston", "effective_from": "2026-01-01",
        "address": {"line1": "901 Bagby St", "city": "Houston", "state": "TX", "postal_code": "77002"}}))
    key = _created(admin_http.post("/api-keys", json={"name": f"k-{tag}"}))
    # gRPC.
    made = products_pb2_grpc.ProductServiceStub(channel).CreateProduct(
        products_pb2.CreateProductRequest(product=products_pb2.Product(source_id=f"g-{tag}", name="Grpc")),
        metadata=(("x-api-key", tenant.key),))
    # The console (its own words; the id from the API's answer).
    r = admin.post("/products", {"source_id": f"con-{tag}", "name": "Console kettle"})
    assert r.status_code == 303, r.text
    console_product = r.headers["location"].rsplit("/", 1)[1]

    got = [(action, obj) for _, action, obj, _ in entries(admin)]
    assert got == [
        ("product.created", console_product),
        ("product.create", made.id),
        ("api_key.create", key),
        ("location.create", loc),
        ("registration.create", reg),
        ("transaction.create", again),
        ("transaction.create", credit),
        ("transaction.create", sale),
        ("product.create", product),
        ("exemption_certificate.create", f"{cust}/{cert}"),
        ("customer.create", cust),
    ], got
    assert all(re.fullmatch(r"[a-z]+_\w+", obj.rsplit("/", 1)[-1]) for _, obj in got)


def _cli(server: LevyServer, *argv: str) -> str:
    r = subprocess.run([sys.executable, "-m", "levy", *argv, "--database-url", server.database_url], cwd=ROOT,
                       capture_output=True, text=True, env=levy_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_every_cli_command_that_changes_data_is_in_the_audit_log(
        server: LevyServer, tenant: Tenant, admin: ConsoleClient, http: httpx.Client,  # noqa: F811
        tmp_path: Path) -> None:
    org = ("--organization", tenant.organization_id)
    cust = _created(http.post("/customers", json={"source_id": "cli-" + uuid.uuid4().hex[:8]}))
    # Certificates: add, set-status, remove (they run outside run_in_organization).
    out = _cli(server, "certificates", "add", cust, "--jurisdiction", "US-ST-TX", "--type", "resale", *org)
    cert = out.splitlines()[1].split("\t")[0]
    _cli(server, "certificates", "set-status", cust, cert, "valid", *org)
    _cli(server, "certificates", "list", cust, *org)  # a read: no entry
    _cli(server, "certificates", "remove", cust, cert, *org)
    # Keys: create and revoke.
    _cli(server, "keys", "create", "--name", "cli key", *org)
    key, prefix = next(line.split("\t")[0:4:3] for line in _cli(server, "keys", "list", *org).splitlines()
                       if "\tcli key\t" in line)
    _cli(server, "keys", "revoke", key)
    # A registration, with its new id.
    reg = _cli(server, "registrations", "add", "--jurisdiction", "US-ST-TX", "--effective-from", "2020-01-01",
               *org).strip()
    # An import of three transactions (one already stored: only the two new ones are named), then
    # the same file again, which changes nothing and leaves no entry.
    stored = _sale(http, "imp-1")
    history = tmp_path / "history.csv"
    history.write_text("reference_id,transaction_date,line_id,quantity,unit_price,state\n"
                       "imp-1,2026-02-01,1,1,1000,TX\nimp-2,2026-02-02,1,1,2000,TX\nimp-3,2026-02-03,1,1,3000,TX\n")
    _cli(server, "transactions", "import", str(history), "--planners", "0", *org)
    _cli(server, "transactions", "import", str(history), "--planners", "0", *org)
    listed = http.get("/transactions", params={"limit": 10}).json()["data"]
    imported = {t["reference_id"]: t["id"] for t in listed}
    assert imported["imp-1"] == stored

    got = entries(admin)
    assert [row for row in got if row[0] == "levy CLI"] == [
        ("levy CLI", "cli.transactions.import", "", f"2 created: {imported['imp-2']} {imported['imp-3']}"),
        ("levy CLI", "cli.registrations.add", reg, ""),
        ("levy CLI", "cli.keys.revoke", key, f"cli key ({prefix})"),
        ("levy CLI", "cli.keys.create", key, "cli key (plain)"),
        ("levy CLI", "cli.certificates.remove", f"{cust}/{cert}", ""),
        ("levy CLI", "cli.certificates.set-status", f"{cust}/{cert}", ""),
        ("levy CLI", "cli.certificates.add", f"{cust}/{cert}", ""),
    ], got

