"""The console's audit log shows changes from every transport (issue 36): REST and gRPC calls of an
API key and CLI commands, each recorded in the transaction of its change (levy.app.audit); reads,
calculations and refused writes leave no entry. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid

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
    got = entries(admin)
    plain = next(k for k in admin_http.get("/api-keys").json()["data"] if k["id"] == tenant.key_id)
    admin_key = next(k for k in admin_http.get("/api-keys").json()["data"]
                     if k["id"] == tenant.admin_key_id)
    assert got[:4] == [
        ("levy CLI", "cli.registrations.add", "", ""),
        (f"API key {admin_key['name']} ({admin_key['prefix']})", "customer.delete", cust, "via grpc"),
        (f"API key {plain['name']} ({plain['prefix']})", "customer.update", cust, "via rest; name=Audited again"),
        (f"API key {plain['name']} ({plain['prefix']})", "customer.create", "", f"via rest; source_id={source_id}"),
    ], got
    assert len(got) == 4  # nothing else: no entry for the reads, the calculation or the refused create
