"""Children's clothing in Canada (issue 34) through REST and gRPC on SQLite and PostgreSQL, against a real server.

Every line is 100.00 CAD (10000 minor units, quantity 1, tax-exclusive); the rows are the
`CLOTHING.APPAREL.CHILDRENS` categories of src/levy/data/tax/international/other.json (sources there and in
docs/international.md, "Canada: children's clothing"). Figures worked by hand:

* HST point-of-sale rebate of the provincial part (ON, NS, PE, from 2010-07-01, 2010-07-01, 2013-04-01): only
  the 5 % federal part is charged: 10000 x 0.05 = 500 (instead of ON 13 % = 1300; NS 15 % = 1500 to
  2025-03-31, 14 % = 1400 from 2025-04-01; PE 15 % = 1500). Adult clothing (`CLOTHING.APPAREL.GENERAL`) and
  footwear (`CLOTHING.APPAREL.FOOTWEAR`, which has no children's code) keep the full HST.
* NB and NL rebate no children's clothing: 15 % = 1500.
* BC: children's clothing exempt from PST (B.C. Reg. 97/2013 s. 9): GST 500 and a PST row of 0; adult
  clothing GST 500 + PST 7 % 700 = 1200.
* SK: exempt until 2017-03-31 (GST 500 + PST 0 on 2017-03-28); taxed since 2017-04-01: GST 500 + PST 6 % 600
  = 1100 on 2026-06-01.
* MB: the RST exemption holds only up to a price per item, which the data cannot express: no row, RST 7 % 700.
* QC: taxable under the QST: GST 500 + QST 9.975 % 997.5 -> 998 (half up) = 1498.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from levyserver import LevyServer, Tenant, create_tenant
from levytest import md
from rates_servers import caller
from test_calculations import Caller, assert_consistent
from test_international_api import MONTREAL, TORONTO, VANCOUVER, item, rows

from levy.v1 import organization_pb2 as opb
from levy.v1 import organization_pb2_grpc

CHILD = ["CLOTHING.APPAREL.CHILDRENS"]
ADULT = ["CLOTHING.APPAREL.GENERAL"]
FOOTWEAR = ["CLOTHING.APPAREL.FOOTWEAR"]
HALIFAX = {"city": "Halifax", "state": "NS", "country": "CA", "postal_code": "B3J 1S9"}
CHARLOTTETOWN = {"city": "Charlottetown", "state": "PE", "country": "CA", "postal_code": "C1A 4P3"}
MONCTON = {"city": "Moncton", "state": "NB", "country": "CA", "postal_code": "E1C 4M3"}
ST_JOHNS = {"city": "St. John's", "state": "NL", "country": "CA", "postal_code": "A1C 5M2"}
REGINA = {"city": "Regina", "state": "SK", "country": "CA", "postal_code": "S4P 3V7"}
WINNIPEG = {"city": "Winnipeg", "state": "MB", "country": "CA", "postal_code": "R3C 4T3"}
REBATE = "HST point-of-sale rebate of the provincial part: children's clothing and footwear"


def register(server: LevyServer, tenant: Tenant, since: str, rest: tuple[str, ...], grpc_codes: tuple[str, ...]) -> None:
    """Registrations from ``since``: ``rest`` through REST, ``grpc_codes`` through gRPC."""
    with httpx.Client(base_url=server.http_url, timeout=30, headers={"X-API-Key": tenant.admin_key}) as http:
        for code in rest:
            r = http.post("/organization/registrations", json={"jurisdiction": code, "effective_from": since})
            assert r.status_code == 201, r.text
    with grpc.insecure_channel(server.grpc_target) as ch:
        stub = organization_pb2_grpc.OrganizationServiceStub(ch)
        for code in grpc_codes:
            reg = stub.CreateRegistration(opb.CreateRegistrationRequest(registration=opb.Registration(
                jurisdiction=code, effective_from=since)), metadata=md(tenant.admin_key))
            assert reg.jurisdiction == code


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, server: LevyServer) -> Iterator[Caller]:
    yield from caller(request.param, server)


@pytest.fixture(scope="module")
def canada(server: LevyServer) -> Tenant:
    """Registered from 2017-01-01 for the GST/HST (gRPC) and every provincial tax (BC and QC through gRPC,
    SK and MB through REST)."""
    t = create_tenant(server.database_url)
    register(server, t, "2017-01-01", ("CA-PR-SK", "CA-PR-MB"), ("CA", "CA-PR-BC", "CA-PR-QC"))
    return t


def on(day: str, *lines: dict[str, Any]) -> dict[str, Any]:
    return {"transaction_date": f"{day}T12:00:00Z", "currency": "CAD", "line_items": list(lines)}


def one(calc: Caller, tenant: Tenant, day: str, address: dict[str, str], codes: list[str]) -> dict[str, Any]:
    out = calc(tenant.key, on(day, item(address, codes)))
    assert_consistent(out)
    (li,) = out["line_items"]
    assert out["tax_amount"] == li["tax_amount"]
    return li


def test_toronto_children_at_the_federal_part_adults_at_13_percent(calc: Caller, canada: Tenant) -> None:
    out = calc(canada.key, on("2026-06-01", item(TORONTO, CHILD, "child"), item(TORONTO, ADULT, "adult"),
                              item(TORONTO, FOOTWEAR, "shoes")))
    assert_consistent(out)
    child, adult, shoes = out["line_items"]
    assert rows(child) == [("Canada (HST, Ontario)", "hst", "0.05", "500")]
    row = child["taxes"][0]
    assert row["is_registered"] is True and row["rule_name"].startswith(REBATE), row
    assert "SOR/2001-65" in row["detail"] and "GI-063" in row["detail"] and "O. Reg. 262/10" in row["detail"], row
    assert rows(adult) == [("Canada (HST, Ontario)", "hst", "0.13", "1300")]
    assert adult["taxes"][0]["rule_name"] == "HST standard rate"
    # Footwear has no children's code: the full HST.
    assert rows(shoes) == [("Canada (HST, Ontario)", "hst", "0.13", "1300")]
    assert out["tax_amount"] == str(500 + 1300 + 1300)


@pytest.mark.parametrize(("address", "day", "name", "child", "adult"), [
    (HALIFAX, "2025-03-31", "Canada (HST, Nova Scotia)", ("0.05", "500"), ("0.15", "1500")),
    (HALIFAX, "2026-06-01", "Canada (HST, Nova Scotia)", ("0.05", "500"), ("0.14", "1400")),
    (CHARLOTTETOWN, "2026-06-01", "Canada (HST, Prince Edward Island)", ("0.05", "500"), ("0.15", "1500")),
    (MONCTON, "2026-06-01", "Canada (HST, New Brunswick)", ("0.15", "1500"), ("0.15", "1500")),
    (ST_JOHNS, "2026-06-01", "Canada (HST, Newfoundland and Labrador)", ("0.15", "1500"), ("0.15", "1500")),
], ids=["NS-15", "NS-14", "PE", "NB", "NL"])
def test_the_other_hst_provinces(calc: Caller, canada: Tenant, address: dict[str, str], day: str, name: str,
                                 child: tuple[str, str], adult: tuple[str, str]) -> None:
    li = one(calc, canada, day, address, CHILD)
    assert rows(li) == [(name, "hst", *child)], li["taxes"]
    assert li["taxes"][0]["rule_name"].startswith(REBATE) == (child[0] == "0.05"), li["taxes"][0]
    li = one(calc, canada, day, address, ADULT)
    assert rows(li) == [(name, "hst", *adult)], li["taxes"]


def test_vancouver_children_exempt_from_pst_adults_taxed(calc: Caller, canada: Tenant) -> None:
    li = one(calc, canada, "2026-06-01", VANCOUVER, CHILD)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("British Columbia", "pst", "0", "0")]
    pst = li["taxes"][1]
    assert pst["is_registered"] is True, pst
    assert pst["rule_name"] == "PST exempt: exempt from PST: children's clothing and footwear", pst
    assert "B.C. Reg. 97/2013" in pst["detail"] and "s. 9" in pst["detail"], pst
    assert li["tax_amount"] == "500"
    li = one(calc, canada, "2026-06-01", VANCOUVER, ADULT)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("British Columbia", "pst", "0.07", "700")]
    assert li["tax_amount"] == "1200"


def test_saskatchewan_exempt_until_march_2017_taxed_since(calc: Caller, canada: Tenant) -> None:
    li = one(calc, canada, "2017-03-28", REGINA, CHILD)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("Saskatchewan", "pst", "0", "0")]
    assert "IN 2017-06" in li["taxes"][1]["detail"], li["taxes"][1]
    li = one(calc, canada, "2026-06-01", REGINA, CHILD)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("Saskatchewan", "pst", "0.06", "600")]
    assert li["taxes"][1]["rule_name"] == "PST standard rate"
    assert li["tax_amount"] == "1100"


def test_manitoba_and_quebec_tax_children_at_the_standard_rates(calc: Caller, canada: Tenant) -> None:
    li = one(calc, canada, "2026-06-01", WINNIPEG, CHILD)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("Manitoba", "pst", "0.07", "700")]
    assert li["tax_amount"] == "1200"
    li = one(calc, canada, "2026-06-01", MONTREAL, CHILD)
    assert rows(li) == [("Canada", "gst", "0.05", "500"), ("Quebec", "qst", "0.09975", "998")]
    assert li["tax_amount"] == "1498"
