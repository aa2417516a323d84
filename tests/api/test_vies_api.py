"""The optional online check of EU VAT ids against VIES, with a real local HTTP server playing VIES.

A Levy server of this module's own (SQLite and PostgreSQL) has ``LEVY_VIES_URL`` pointing at the stub,
a timeout of 0.5 s and a requester VAT number. The stub answers by the first digit of the German number
asked about: 1 valid, 2 invalid, 3 slow (2.5 s, past the timeout), 4 down (HTTP 500 with VIES's error
body), 5 a member state unavailable (200 with ``userError`` ``MS_UNAVAILABLE``), 6 valid after looking whether
the Levy server has a write transaction open while it waits for the answer (:func:`open_write_transactions`).
Each test uses numbers
of its own (valid check digits, python-stdnum's ISO 7064 Mod 11,10), so the requests it counts are its own.

Figures (a line of 100.00 = 10000 minor units on 2026-06-01, seller registered in DE): German VAT 19 %:
10000 x 0.19 = 1900; reverse charged: 0.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import asyncpg
import grpc
import httpx
import pytest
from levyserver import LevyServer, create_tenant, own_server
from rates_servers import caller
from stdnum.iso7064 import mod_11_10
from test_calculations import Caller, assert_consistent
from test_international_api import BERLIN, LONDON, calc_body, item, register_rest, rows
from txn_api import Txn

VIES_DATE = "2026-06-01T09:30:00.000Z"  # the stub's consultation date (Levy keeps VIES's, not its own)
REQUESTER = "DE136695976"
_serial = itertools.count(1_000_000 + int(time.time() * 1000) % 1_000_000)


def de_vat(behaviour: int) -> str:
    """A German VAT number with a valid check digit whose first digit tells the stub how to answer."""
    base = f"{behaviour}{next(_serial) % 10_000_000:07d}"
    return f"DE{base}{mod_11_10.calc_check_digit(base)}"


class Vies:
    """The stub: keeps every request body; answers like the VIES REST service's check-vat-number."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: list[dict[str, Any]] = []
        # Kind 6: the database whose open write transactions are counted, and the counts seen, by number.
        self.probe_url = ""
        self.open_writes: dict[str, int] = {}
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
                with stub.lock:
                    stub.bodies.append(body)
                number = str(body.get("vatNumber", ""))
                status, out = 200, {"countryCode": body.get("countryCode"), "vatNumber": number,
                                    "requestDate": VIES_DATE, "name": "---", "address": "---"}
                kind = number[:1]
                if kind == "1":
                    out |= {"valid": True, "requestIdentifier": f"WAPIAAAA{number}", "userError": "VALID"}
                elif kind == "2":
                    out |= {"valid": False, "requestIdentifier": f"WAPIAAAA{number}", "userError": "INVALID"}
                elif kind == "3":
                    time.sleep(2.5)
                    out |= {"valid": True}
                elif kind == "6":
                    seen = open_write_transactions(stub.probe_url)
                    with stub.lock:
                        stub.open_writes[body.get("countryCode", "") + number] = seen
                    out |= {"valid": True, "requestIdentifier": f"WAPIAAAA{number}", "userError": "VALID"}
                elif kind == "4":
                    status, out = 500, {"actionSucceed": False, "errorWrappers": [{"error": "MS_UNAVAILABLE"}]}
                else:
                    out |= {"valid": False, "userError": "MS_UNAVAILABLE"}
                data = json.dumps(out).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the slow answer: Levy stopped waiting
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/taxation_customs/vies/rest-api/check-vat-number"

    def asked(self, number: str) -> int:
        with self.lock:
            return sum(1 for b in self.bodies if b.get("countryCode", "") + b.get("vatNumber", "") == number)


def open_write_transactions(database_url: str) -> int:
    """Write transactions open in the Levy server's database now: on SQLite 1 when a writer holds the
    database (``BEGIN IMMEDIATE`` refused at once), on PostgreSQL the sessions idle inside a transaction
    that has read or locked the ``transactions`` table (waiting for something between two statements, as
    a transaction waiting for VIES would; the server's background jobs read other tables)."""
    if database_url.startswith("sqlite"):
        # Held through five tries over 0.1 s: a request waiting for this answer holds it all along; the
        # server's background jobs write for a moment, and one try may meet them.
        db = sqlite3.connect(database_url.split("///", 1)[1], timeout=0, isolation_level=None)
        try:
            for _ in range(5):
                try:
                    db.execute("BEGIN IMMEDIATE")
                    db.execute("ROLLBACK")
                    return 0
                except sqlite3.OperationalError:
                    time.sleep(0.02)
            return 1
        finally:
            db.close()

    async def count() -> int:
        conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
        try:
            return int(await conn.fetchval(
                "SELECT count(DISTINCT a.pid) FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid "
                "JOIN pg_class c ON c.oid = l.relation WHERE a.datname = current_database() "
                "AND a.pid <> pg_backend_pid() AND a.state LIKE 'idle in transaction%' AND c.relname = 'transactions'"))
        finally:
            await conn.close()

    return asyncio.run(count())


@pytest.fixture(scope="module")
def vies() -> Iterator[Vies]:
    stub = Vies()
    threading.Thread(target=stub.server.serve_forever, daemon=True).start()
    yield stub
    stub.server.shutdown()
    stub.server.server_close()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def vies_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                vies: Vies) -> Iterator[LevyServer]:
    env = {"LEVY_VIES_URL": vies.url, "LEVY_VIES_TIMEOUT_SECONDS": "0.5", "LEVY_VIES_REQUESTER_VAT": REQUESTER}
    with own_server(request.param, tmp_path_factory.mktemp("vies"), env, timeout=180) as srv:
        vies.probe_url = srv.database_url
        yield srv


@pytest.fixture(scope="module")
def seller(vies_server: LevyServer) -> str:
    """The plain key of a tenant registered in Germany."""
    t = create_tenant(vies_server.database_url)
    register_rest(vies_server, t, "DE")
    return t.key


@pytest.fixture(params=["rest", "grpc"])
def calc(request: pytest.FixtureRequest, vies_server: LevyServer) -> Iterator[Caller]:
    yield from caller(request.param, vies_server)


def b2b(number: str, id: str = "1", address: dict[str, str] = BERLIN) -> dict[str, Any]:
    return item(address, id=id, tax_ids=[{"country": "DE", "type": "eu_vat", "value": number}])


def test_valid_answer_reverse_charges_and_names_the_id_and_the_consultation(calc: Caller, seller: str,
                                                                            vies: Vies) -> None:
    number = de_vat(1)
    out = calc(seller, calc_body(b2b(number)))
    assert_consistent(out)
    (li,) = out["line_items"]
    assert rows(li) == [("Germany", "vat", "0", "0")] and out["tax_amount"] == "0"
    row = li["taxes"][0]
    assert row["rule_name"].startswith(f"Reverse charge: customer's DE VAT id {number}, VAT Directive "
                                       "2006/112/EC Art. 196"), row["rule_name"]
    assert f"VIES: valid on 2026-06-01, request identifier WAPIAAAA{number[2:]}" in row["detail"], row["detail"]
    assert li["vat_checks"] == [{"vat_number": number, "result": "valid", "checked_on": "2026-06-01",
                                 "request_identifier": f"WAPIAAAA{number[2:]}", "detail": ""}]
    # The requester's own number went with the question (so that VIES gives a consultation number).
    body = next(b for b in vies.bodies if b["vatNumber"] == number[2:])
    assert body == {"countryCode": "DE", "vatNumber": number[2:], "requesterMemberStateCode": "DE",
                    "requesterNumber": REQUESTER[2:]}


def test_invalid_answer_means_no_reverse_charge_with_the_reason(calc: Caller, seller: str) -> None:
    number = de_vat(2)  # well formed: python-stdnum alone would reverse charge it
    out = calc(seller, calc_body(b2b(number)))
    (li,) = out["line_items"]
    # Taxed as a sale to a consumer: 10000 x 0.19 = 1900.
    assert rows(li) == [("Germany", "vat", "0.19", "1900")] and out["tax_amount"] == "1900"
    row = li["taxes"][0]
    assert row["rule_name"] == "VAT standard rate"
    assert (f"tax id eu_vat '{number}' is not valid according to VIES (checked 2026-06-01, request identifier "
            f"WAPIAAAA{number[2:]}): no reverse charge") in row["detail"], row["detail"]
    assert [c["result"] for c in li["vat_checks"]] == ["invalid"]


@pytest.mark.parametrize(("behaviour", "why"), [(3, "no answer within 0.5 s"), (4, "HTTP 500, MS_UNAVAILABLE"),
                                                (5, "HTTP 200, MS_UNAVAILABLE")], ids=["slow", "down", "ms-unavailable"])
def test_unavailable_never_blocks_the_format_check_decides(calc: Caller, seller: str, vies: Vies,
                                                           behaviour: int, why: str) -> None:
    number = de_vat(behaviour)
    started = time.monotonic()
    out = calc(seller, calc_body(b2b(number)))
    took = time.monotonic() - started
    assert took < 2.4, took  # the slow stub answers after 2.5 s: Levy did not wait for it
    (li,) = out["line_items"]
    assert rows(li) == [("Germany", "vat", "0", "0")]  # valid check digits: reverse charged
    row = li["taxes"][0]
    assert f"customer's DE VAT id {number}" in row["rule_name"]
    assert f"VIES online check unavailable ({why}): the format check decides" in row["detail"], row["detail"]
    (check,) = li["vat_checks"]
    assert check["result"] == "unavailable" and check["detail"] == why and check["request_identifier"] == ""
    # An unavailable answer is not kept: the next calculation asks again.
    calc(seller, calc_body(b2b(number)))
    assert vies.asked(number) == 2


def test_answers_are_kept_per_number_and_day(vies_server: LevyServer, seller: str, vies: Vies) -> None:
    valid, invalid = de_vat(1), de_vat(2)
    for transport in ("rest", "grpc", "rest"):
        for calc in caller(transport, vies_server):
            out = calc(seller, calc_body(b2b(valid, "a"), b2b(invalid, "b"), b2b(valid, "c")))
            assert out["tax_amount"] == "1900"  # 0 + 1900 + 0
    assert vies.asked(valid) == 1 and vies.asked(invalid) == 1


def test_not_asked_for_a_malformed_id_or_outside_the_union(calc: Caller, seller: str, vies: Vies) -> None:
    good = de_vat(1)
    malformed = good[:-1] + str((int(good[-1]) + 1) % 10)
    out = calc(seller, calc_body(b2b(malformed, "bad"), b2b(good, "london", LONDON)))
    bad, london = out["line_items"]
    assert rows(bad) == [("Germany", "vat", "0.19", "1900")] and "check digit" in bad["taxes"][0]["detail"]
    assert "vat_checks" not in bad or bad["vat_checks"] == []
    assert "vat_checks" not in london or london["vat_checks"] == []
    assert vies.asked(malformed) == 0 and vies.asked(good) == 0


@pytest.fixture(params=["rest", "grpc"])
def tx(request: pytest.FixtureRequest, vies_server: LevyServer, seller: str) -> Iterator[Txn]:
    with grpc.insecure_channel(vies_server.grpc_target) as ch:
        t = Txn(request.param, vies_server, ch, seller)
        yield t
        t.close()


def test_a_transaction_stores_the_checks_and_shows_them(tx: Txn, vies_server: LevyServer, seller: str) -> None:
    valid, invalid, down = de_vat(1), de_vat(2), de_vat(4)
    sale = tx.create({"type": "sale", "status": "finalized", "transaction_date": "2026-06-01T12:00:00Z",
                      "currency": "EUR", "exchange_rate": "1.08", "reference_id": f"vies-{valid}",
                      "line_items": [b2b(valid, "v"), b2b(invalid, "i"), b2b(down, "d")]})
    # 0 (reverse charged, VIES valid) + 1900 (VIES invalid) + 0 (VIES down, the check digits decide).
    assert sale["tax_amount"] == "1900"
    again = tx.get(sale["id"])
    for got in (sale, again):
        v, i, d = got["line_items"]
        assert v["vat_checks"] == [{"vat_number": valid, "result": "valid", "checked_on": "2026-06-01",
                                    "request_identifier": f"WAPIAAAA{valid[2:]}", "detail": ""}]
        assert [(c["result"], c["request_identifier"]) for c in i["vat_checks"]] == [("invalid",
                                                                                      f"WAPIAAAA{invalid[2:]}")]
        assert [(c["result"], c["detail"]) for c in d["vat_checks"]] == [("unavailable", "HTTP 500, MS_UNAVAILABLE")]
        assert [rows(li) for li in (v, i, d)] == [[("Germany", "vat", "0", "0")],
                                                  [("Germany", "vat", "0.19", "1900")],
                                                  [("Germany", "vat", "0", "0")]]
        assert f"customer's DE VAT id {valid}" in v["taxes"][0]["rule_name"]


def test_a_full_credit_carries_its_sales_checks(tx: Txn, vies: Vies) -> None:
    valid, invalid = de_vat(1), de_vat(2)
    sale = tx.create({"type": "sale", "status": "finalized", "transaction_date": "2026-06-01T12:00:00Z",
                      "currency": "EUR", "exchange_rate": "1.08", "line_items": [b2b(valid, "v"), b2b(invalid, "i")]})
    credit = tx.create({"type": "credit", "status": "finalized", "transaction_date": "2026-06-02T12:00:00Z",
                        "currency": "EUR", "exchange_rate": "1.08", "parent_transaction_id": sale["id"]})
    # The credit copies the sale's lines: 0 (reverse charged) + 1900 (VIES invalid), the checks the sale made.
    assert credit["tax_amount"] == "1900"
    assert [li["vat_checks"] for li in credit["line_items"]] == [li["vat_checks"] for li in sale["line_items"]]
    assert vies.asked(valid) == 1 and vies.asked(invalid) == 1  # not asked again


def test_checks_of_a_credit_an_update_and_a_batch_are_made_before_the_write_transaction(tx: Txn, vies: Vies) -> None:
    """A credit with lines of its own, an update of a transaction's lines and a batch item calculate
    inside their write transaction; VIES is asked before it opens, so a slow VIES never holds it (on
    SQLite the database's one writer). The stub looks at the database while it is asked (kind 6)."""
    plain = {"type": "sale", "status": "draft", "transaction_date": "2026-06-01T12:00:00Z",
             "currency": "EUR", "exchange_rate": "1.08"}
    sale = tx.create(plain | {"line_items": [item(BERLIN, id="a")]})
    assert sale["tax_amount"] == "1900"  # 10000 x 0.19, a consumer
    on_update, on_credit, on_batch = de_vat(6), de_vat(6), de_vat(6)
    updated = tx.update(sale["id"], {"currency": "EUR", "exchange_rate": "1.08", "line_items": [b2b(on_update, "a")]})
    assert updated["tax_amount"] == "0"  # reverse charged
    tx.update(sale["id"], {"status": "finalized"})
    credit = tx.create(plain | {"type": "credit", "status": "finalized", "parent_transaction_id": sale["id"],
                                "line_items": [b2b(on_credit, "a")]})
    assert credit["tax_amount"] == "0"
    if tx.transport == "rest":  # the batch RPC is the same service call over gRPC
        r = tx.http.post("/transactions/batch", json={"transactions": [plain | {"line_items": [b2b(on_batch, "b")]}]})
        assert r.status_code == 200, r.text
        assert r.json()["data"][0]["transaction"]["tax_amount"] == "0"
        asked = (on_update, on_credit, on_batch)
    else:
        asked = (on_update, on_credit)
    with vies.lock:
        seen = {n: vies.open_writes.get(n) for n in asked}
    assert seen == dict.fromkeys(asked, 0)  # asked, and no write transaction open while it was
    assert [vies.asked(n) for n in asked] == [1] * len(asked)


def test_checks_of_a_request_with_an_idempotency_key_are_made_before_its_transaction(tx: Txn, vies: Vies) -> None:
    """A call with an Idempotency-Key runs its handler inside the request's own write transaction
    (levy.app.idempotency): VIES is asked before that transaction opens, and the replay of the key
    asks nothing again. Create, update and (REST) a batch."""
    plain = {"type": "sale", "status": "draft", "transaction_date": "2026-06-01T12:00:00Z",
             "currency": "EUR", "exchange_rate": "1.08"}
    on_create, on_update, on_batch = de_vat(6), de_vat(6), de_vat(6)
    key = f"vies-{on_create}"
    body = plain | {"line_items": [b2b(on_create, "a")]}
    status, sale = tx.create_raw(body, headers={"Idempotency-Key": key})
    assert status in (200, 201), sale
    assert sale["tax_amount"] == "0"  # reverse charged (a consumer would pay 10000 x 0.19 = 1900)
    status, again = tx.create_raw(body, headers={"Idempotency-Key": key})
    assert (status, again["id"]) == (201 if status == 201 else 200, sale["id"])  # the replay
    status, updated = tx.update_raw(sale["id"], {"currency": "EUR", "exchange_rate": "1.08",
                                                 "line_items": [b2b(on_update, "a")]},
                                    headers={"Idempotency-Key": f"vies-{on_update}"})
    assert status == 200 and updated["tax_amount"] == "0", updated
    asked = [on_create, on_update]
    if tx.transport == "rest":
        r = tx.http.post("/transactions/batch", json={"transactions": [plain | {"line_items": [b2b(on_batch, "b")]}]},
                         headers={"Idempotency-Key": f"vies-{on_batch}"})
        assert r.status_code == 200, r.text
        assert r.json()["data"][0]["transaction"]["tax_amount"] == "0"
        asked.append(on_batch)
    with vies.lock:
        seen = {n: vies.open_writes.get(n) for n in asked}
    assert seen == dict.fromkeys(asked, 0)  # asked, and no write transaction open while it was
    assert [vies.asked(n) for n in asked] == [1] * len(asked)
