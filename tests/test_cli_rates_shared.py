"""``levy rates import`` on the shared real rate files (issue 31), on SQLite and PostgreSQL: the report lists
every per-ZIP row with no state rate and every lower-ranked component an official level replaced, one a line, and
``--strict`` refuses a file with anomalies. The files are read by path at run time (``tests/shared_data.py``) and
never committed; the tests skip, saying which file is missing, without them. Every expected figure is counted here
from the files themselves with the csv module (and the ``zipcodes`` package for a ZIP's county), not by Levy."""

from __future__ import annotations

import csv
import re
from decimal import Decimal
from pathlib import Path

import grpc
import httpx
import pytest
import zipcodes
from fresh_db import fresh_database_url  # noqa: F401 (fixture)
from google.protobuf import json_format
from levyserver import ROOT, start_server
from shared_data import SST_DIR, ZIP5_DIR
from test_cli_rates import levy

from levy.v1 import calculations_pb2 as pb
from levy.v1 import calculations_pb2_grpc as pbg

NM = ZIP5_DIR / "TAXRATES_ZIP5_NM202603.csv"
SD = ZIP5_DIR / "TAXRATES_ZIP5_SD202603.csv"
GA = ZIP5_DIR / "TAXRATES_ZIP5_GA202603.csv"
GAR = SST_DIR / "GAR2026Q2FEB19.csv"
COUNTY_FIPS = ROOT / "src" / "levy" / "data" / "tax" / "county_fips.csv"  # the Census list, plain data


def need(*files: Path) -> None:
    for f in files:
        if not f.is_file():
            pytest.skip(f"shared rate file not present: {f} (see tests/shared_data.py)")


def rows_without_state_rate(path: Path) -> list[tuple[int, str]]:
    """(line number, ZIP) of every row whose StateRate is 0, line 1 being the header."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return [(reader.line_num, r["ZipCode"]) for r in reader if Decimal(r["StateRate"]) == 0]


def test_every_row_with_no_state_rate_is_listed_and_strict_refuses_them(
    fresh_database_url: str  # noqa: F811
) -> None:
    need(NM, SD)
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    expected = {"NM": rows_without_state_rate(NM), "SD": rows_without_state_rate(SD)}
    # Counted from the files: 18 NM rows (pueblos, Cibola's 8% in the city column) and 37 SD rows (reservations).
    assert (len(expected["NM"]), len(expected["SD"])) == (18, 37)

    refused = levy(url, "rates", "import", "--no-progress", "--strict", str(NM), str(SD))
    assert refused.returncode != 0, refused.stdout
    assert "--strict: anomalies in TAXRATES_ZIP5_NM202603.csv, TAXRATES_ZIP5_SD202603.csv" in refused.stderr
    assert "nothing imported" in refused.stderr and "Traceback" not in refused.stderr
    assert levy(url, "rates", "list").stdout.strip() == "no rate imports"  # nothing written

    done = levy(url, "rates", "import", "--no-progress", str(NM), str(SD))
    assert done.returncode == 0, done.stderr
    listed = re.findall(r"^    no_state_rate: line (\d+): (NM|SD) ZIP (\d{5}): .* row not applied", done.stdout, re.MULTILINE)
    for state in ("NM", "SD"):
        assert sorted((int(n), z) for n, s, z in listed if s == state) == sorted(expected[state]), state
    assert "  anomalies: 18" in done.stdout and "  anomalies: 37" in done.stdout
    assert "55 anomalies need attention (listed above)" in done.stdout
    assert not re.search(r"^ *\.\.\. and \d+ more", done.stdout, re.MULTILINE)  # nothing cut short
    # levy rates list shows each of them again, one a line.
    shown = levy(url, "rates", "list").stdout
    assert len(re.findall(r"^  anomaly no_state_rate: line \d+: (?:NM|SD) ZIP \d{5}: ", shown, re.MULTILINE)) == 55


def ga_county_rates(on: str) -> dict[str, Decimal]:
    """County name key -> the county rate GAR2026Q2FEB19.csv gives on ``on`` (YYYYMMDD): rows of type 00
    (county), jurisdiction = the county's FIPS code, rate in column 4, dates in columns 8 and 9."""
    with COUNTY_FIPS.open(newline="") as f:
        names = {r["county_fips"]: r["name"] for r in csv.DictReader(f) if r["state_fips"] == "13"}
    with GAR.open(newline="") as f:
        return {county_key(names[r[2]]): Decimal(r[3]) for r in csv.reader(f)
                if r[1] == "00" and r[7] <= on <= r[8]}


def county_key(name: str) -> str:
    return name.casefold().removesuffix(" county").replace(".", "").replace(" ", "")  # DeKalb / Dekalb


def ga_replacements() -> set[str]:
    """GA ZIPs where the official county rate on the table's date (2026-03-01) equals the table's county rate plus
    its special district: the county rate contains the district (the regional TSPLOST), so both are replaced."""
    official = ga_county_rates("20260301")
    out = set()
    with GA.open(newline="") as f:
        for r in csv.DictReader(f):
            county, special = Decimal(r["EstimatedCountyRate"]), Decimal(r["EstimatedSpecialRate"])
            place = [z for z in zipcodes.matching(r["ZipCode"]) if z["state"] == "GA"]
            if special > 0 and place and place[0]["county"] \
                    and official.get(county_key(place[0]["county"])) == county + special:
                out.add(r["ZipCode"])
    return out


def test_ga_official_file_lists_every_replacement_and_augusta_is_850(
    fresh_database_url: str, tmp_path: Path  # noqa: F811
) -> None:
    need(GA, GAR)
    url = fresh_database_url
    assert levy(url, "migrate").returncode == 0
    assert levy(url, "rates", "import", "--no-progress", "--strict", str(GA)).returncode == 0
    done = levy(url, "rates", "import", "--no-progress", "--strict", str(GAR))
    assert done.returncode == 0, done.stdout + done.stderr
    expected = ga_replacements()
    assert len(expected) == 205  # counted from the two files
    count = re.search(r"^  replaced \(an official level includes what the lower-ranked record lists apart\): "
                      r"(\d+) ZIPs$", done.stdout, re.MULTILINE)
    assert count is not None and int(count.group(1)) == len(expected)
    listed = re.findall(r"^    ZIP (\d{5}): county .* \(GAR2026Q2FEB19\.csv line \d+\) replaces county .* \+ "
                        r"special .* \(TAXRATES_ZIP5_GA202603\.csv line \d+; equal on 2026-03-01\)$", done.stdout, re.MULTILINE)
    assert sorted(listed) == sorted(expected)
    # GAR line 334: 13,00,245,0.045 (Richmond County, from 2024-04-01); GA table line 534:
    # GA,30901,AUGUSTA,0.085,0.04,0.035,0,0.01: 3.5% + 1% = 4.5%.
    assert ("    ZIP 30901: county Richmond County 4.5% (GAR2026Q2FEB19.csv line 334) replaces county Richmond County "
            "3.5% + special Augusta special district 1% (TAXRATES_ZIP5_GA202603.csv line 534; equal on 2026-03-01)"
            ) in done.stdout.splitlines()
    assert not re.search(r"^ *\.\.\. and \d+ more", done.stdout, re.MULTILINE)  # nothing cut short

    # Augusta through a real server on those imports, as a user sets it up: a key, a GA registration. State 4% of
    # 10000 = 400, Richmond County 4.5% = 450 (the table's 1% special not stacked on it): 850, 8.5%.
    key = levy(url, "keys", "create", "--name", "shared", "--admin").stdout.strip()
    assert levy(url, "registrations", "add", "--jurisdiction", "US-ST-GA", "--effective-from", "2020-01-01"
                ).returncode == 0
    body = {"transaction_date": "2026-04-15T12:00:00Z", "currency": "USD", "line_items": [
        {"id": "1", "quantity": "1", "unit_price": "10000", "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]},
         "customer": {"address": {"state": "GA", "postal_code": "30901", "country": "US"}}}]}
    server = start_server(url, tmp_path)
    try:
        with httpx.Client(base_url=server.http_url, timeout=30) as http:
            r = http.post("/calculations", json=body, headers={"X-API-Key": key})
            assert r.status_code == 200, r.text
            rest = r.json()["line_items"][0]
        with grpc.insecure_channel(server.grpc_target) as channel:
            answer = pbg.CalculationServiceStub(channel).CreateCalculation(
                json_format.ParseDict(body, pb.CreateCalculationRequest()), metadata=[("x-api-key", key)])
            rpc = json_format.MessageToDict(answer, preserving_proto_field_name=True)["line_items"][0]
    finally:
        assert server.stop() == 0, server.log()
    for li in (rest, rpc):
        assert li["tax_amount"] == "850"
        assert [(t["jurisdiction_name"], t["tax_amount"]) for t in li["taxes"]] == [
            ("Georgia", "400"), ("Richmond County", "450")]
