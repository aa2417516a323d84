"""Issue 37: the organization's filing currency per country (``filing_currencies`` of
GET/PATCH /organization/settings and the gRPC OrganizationService), through REST and gRPC
against a real server on SQLite and PostgreSQL; and the reports, the filing, its exports and
/nexus in the currency the setting gives US returns. Expected figures are worked out by hand in
the comments.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from levyserver import LevyServer, Tenant, own_server
from levytest import call_error, md
from test_filing_transactions import export_transactions
from test_filings import Filings
from txn_api import Txn, line, register

from levy.v1 import organization_pb2 as pb
from levy.v1 import organization_pb2_grpc


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("i37fc"), {}) as srv:
        yield srv


@pytest.fixture(scope="module")
def channel(server: LevyServer) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.grpc_target) as ch:
        yield ch


class Settings:
    """GET/PATCH of the organization's settings through one transport: (status, JSON body)."""

    def __init__(self, transport: str, admin_http: httpx.Client, channel: grpc.Channel, tenant: Tenant) -> None:
        self.transport, self.http, self.key = transport, admin_http, tenant.admin_key
        self.stub = organization_pb2_grpc.OrganizationServiceStub(channel)

    def get(self) -> tuple[int, Any]:
        if self.transport == "rest":
            r = self.http.get("/organization/settings")
            return r.status_code, r.json()
        resp = self.stub.GetOrganizationSettings(pb.GetOrganizationSettingsRequest(), metadata=md(self.key))
        return 200, json_format.MessageToDict(resp, preserving_proto_field_name=True)

    def patch(self, body: dict[str, Any]) -> tuple[int, Any]:
        if self.transport == "rest":
            r = self.http.patch("/organization/settings", json=body)
            return r.status_code, r.json()
        req = pb.UpdateOrganizationSettingsRequest(settings=json_format.ParseDict(body, pb.OrganizationSettings()))
        req.update_mask.paths.extend(body)
        try:
            resp = self.stub.UpdateOrganizationSettings(req, metadata=md(self.key))
        except grpc.RpcError:
            err = call_error(self.stub.UpdateOrganizationSettings, req, md(self.key))
            assert err.code == grpc.StatusCode.INVALID_ARGUMENT
            return int(err.errors[0]["status"]), {"errors": err.errors}
        return 200, json_format.MessageToDict(resp, preserving_proto_field_name=True)


@pytest.fixture(params=["rest", "grpc"])
def settings(request: pytest.FixtureRequest, admin_http: httpx.Client, channel: grpc.Channel,
             tenant: Tenant) -> Settings:
    return Settings(request.param, admin_http, channel, tenant)


def pointers(body: dict[str, Any]) -> dict[str, str]:
    return {e["source"]["pointer"]: e["detail"] for e in body["errors"]}


def test_the_default_is_us_dollars_for_the_us(settings: Settings) -> None:
    status, body = settings.get()
    assert status == 200
    assert body["filing_currencies"] == {"US": "USD"}


def test_other_countries_may_be_set_and_a_patch_replaces_the_choices(settings: Settings) -> None:
    status, body = settings.patch({"filing_currencies": {"GB": "GBP", "CA": "CAD", "US": "USD"}})
    assert status == 200, body
    assert body["filing_currencies"] == {"CA": "CAD", "GB": "GBP", "US": "USD"}
    assert settings.get()[1]["filing_currencies"] == {"CA": "CAD", "GB": "GBP", "US": "USD"}
    # A PATCH replaces the organization's choices: CA left out goes back to no currency; the US
    # default stays whatever is sent.
    status, body = settings.patch({"filing_currencies": {"GB": "EUR"}})
    assert status == 200, body
    assert body["filing_currencies"] == {"GB": "EUR", "US": "USD"}
    # A PATCH of another setting keeps them.
    status, body = settings.patch({"exemption_management": False})
    assert (status, body["filing_currencies"]) == (200, {"GB": "EUR", "US": "USD"})
    # {} drops every choice: the defaults only.
    status, body = settings.patch({"filing_currencies": {}})
    assert (status, body["filing_currencies"]) == (200, {"US": "USD"})


def test_us_returns_are_in_us_dollars_and_bad_codes_are_refused_together(settings: Settings) -> None:
    settings.patch({"filing_currencies": {"GB": "GBP"}})
    status, body = settings.patch({"filing_currencies": {"US": "EUR", "XX": "EUR", "FR": "EURO", "DE": "eur",
                                                         "CA": "CAD"}})
    assert status == 422, body
    problems = pointers(body)
    assert set(problems) == {"/filing_currencies/US", "/filing_currencies/XX", "/filing_currencies/FR",
                             "/filing_currencies/DE"}
    assert "USD" in problems["/filing_currencies/US"]
    assert "ISO 3166-1" in problems["/filing_currencies/XX"]
    assert "ISO 4217" in problems["/filing_currencies/FR"]
    # Nothing was stored: the earlier choice stands, CA is not added.
    assert settings.get()[1]["filing_currencies"] == {"GB": "GBP", "US": "USD"}


def test_a_value_that_is_not_a_string_is_refused_at_its_country(admin_http: httpx.Client) -> None:
    r = admin_http.patch("/organization/settings", json={"filing_currencies": {"GB": 826}})
    assert r.status_code == 422, r.text
    assert [e["source"]["pointer"] for e in r.json()["errors"]] == ["/filing_currencies/GB"]
    r = admin_http.patch("/organization/settings", json={"filing_currencies": ["GB", "GBP"]})
    assert r.status_code == 422, r.text
    assert [e["source"]["pointer"] for e in r.json()["errors"]] == ["/filing_currencies"]


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_returns_reports_exports_and_nexus_are_in_the_us_filing_currency(
        transport: str, server: LevyServer, channel: grpc.Channel, tenant: Tenant, admin_http: httpx.Client) -> None:
    """Another country's choice changes nothing on US returns: they are in USD, the setting's US value."""
    register(admin_http, "TX")
    assert admin_http.patch("/organization/settings",
                            json={"filing_currencies": {"GB": "GBP"}}).status_code == 200
    tx, fil = Txn(transport, server, channel, tenant.key), Filings(transport, server, channel, tenant.admin_key)
    try:
        # 100.00 EUR at 1.1 USD per EUR = 110.00 USD = 11000 cents gross; tax 6.25 % of 10000 EUR cents =
        # 625 EUR cents, x 1.1 = 687.5 -> 688 cents (half up).
        tx.create({"type": "sale", "status": "finalized", "transaction_date": "2025-04-10T12:00:00Z",
                   "currency": "EUR", "exchange_rate": "1.1", "line_items": [line("1", 10000, "TX")]})
        report = fil.ok(fil.liability(**{"from": "2025-04-01", "to": "2025-04-30"}))
        assert report["currency"] == "USD"
        (state,) = report["state_totals"]
        assert (state["gross_sales"], state["filing_tax_amount"]) == ("11000", "688")
        filing = fil.ok(fil.create({"jurisdiction": "US-ST-TX", "period_start": "2025-04-01",
                                    "period_end": "2025-04-30"}), 201)
        assert filing["currency"] == "USD"
        total = fil.ok(fil.export(filing["id"])).splitlines()[-1].split(",")
        # TOTAL row: gross 11000 in the third amount column, the currency last.
        assert (total[0], total[3], total[-1]) == ("TOTAL", "11000", "USD")
        rows = fil.ok(export_transactions(fil, filing["id"])).splitlines()
        assert rows[1].split(",")[4] == "EUR" and rows[1].split(",")[-1] == "USD"
        tx_state = {s["state"]: s for s in fil.ok(fil.nexus(as_of="2025-04-30"))["states"]}["TX"]
        assert tx_state["sales_amount"] == "11000"
    finally:
        tx.close()
        fil.close()
