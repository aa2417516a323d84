"""The Python client package (clients/python, ``levy_client``) against real servers:
every kind of operation over REST (sync and async) and the gRPC helper, on SQLite
and PostgreSQL; the retry rules proven against real failures: a 429 storm (a server
with a tiny rate limit), a response lost after the server wrote (the
Idempotency-Key makes the retry safe), a server restarted in the middle of a list.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from levyserver import ROOT, LevyServer, Tenant, create_tenant, start_server
from levy_client import (
    NO_RETRIES,
    SERVICE_VERSION,
    ApiError,
    AsyncLevyClient,
    AuthenticationError,
    ConflictError,
    LevyClient,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RetryPolicy,
    ValidationError,
)
from levy_client.grpc_stubs import (
    customers_pb2,
    customers_pb2_grpc,
    events_pb2,
    events_pb2_grpc,
    organization_pb2,
    organization_pb2_grpc,
    reference_pb2,
    reference_pb2_grpc,
)
from levy_client.rpc import channel

# No postal code: state-level tax only, whatever local rates other tests imported into the shared server.
CA_ADDRESS = {"line1": "1 Main St", "city": "Los Angeles", "state": "CA", "country": "US"}
SALE_LINE: Any = {"id": "l1", "quantity": "1", "unit_price": "10000", "customer": {"address": CA_ADDRESS}}
# California, registered: 6% state + 1.25% statewide local (Bradley-Burns 1% +
# transportation 0.25%) of 10000 cents: 600 + 125 = 725.
CA_TAX_ON_10000 = "725"


class Recorder(httpx.BaseTransport):
    """A real HTTP transport that notes every attempt (time, method, path, status or
    error, headers both ways) and can lose the response of chosen requests after the
    server has answered them, as a dropped connection would."""

    def __init__(self, lose: set[tuple[str, str]] | None = None) -> None:
        self.inner = httpx.HTTPTransport()
        self.lose = set(lose or ())
        self.events: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        event: dict[str, Any] = {"at": time.monotonic(), "method": request.method, "path": request.url.path,
                                 "sent": dict(request.headers)}
        self.events.append(event)
        try:
            response = self.inner.handle_request(request)
        except httpx.TransportError as exc:
            event["error"] = type(exc).__name__
            raise
        event["status"], event["headers"] = response.status_code, dict(response.headers)
        if (request.method, request.url.path) in self.lose:
            self.lose.discard((request.method, request.url.path))
            response.read()
            response.close()
            event["lost"] = True
            raise httpx.ReadError("connection lost before the response arrived", request=request)
        return response

    def to(self, method: str, path: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["method"] == method and e["path"] == path]


def test_rest_client_covers_the_spec_operations(server: LevyServer, tenant: Tenant) -> None:
    recorder = Recorder()
    with LevyClient(server.http_url, tenant.admin_key, transport=recorder) as c:
        assert c.create_registration({"jurisdiction": "US-ST-CA", "effective_from": "2020-01-01"})["id"].startswith("reg_")

        calc = c.create_calculation({"line_items": [SALE_LINE]})
        assert calc["tax_amount"] == CA_TAX_ON_10000

        draft = c.create_transaction({"type": "sale", "status": "draft", "line_items": [SALE_LINE]})
        assert (draft["status"], draft["calculated_tax_amount"]) == ("draft", CA_TAX_ON_10000)
        final = c.update_transaction(draft["id"], {"status": "finalized", "reference_id": f"inv-{draft['id']}"})
        assert final["status"] == "finalized"
        assert c.get_transaction(draft["id"])["reference_id"] == f"inv-{draft['id']}"
        second = c.create_transaction({"type": "sale", "status": "finalized", "line_items": [SALE_LINE]})
        # newest first, one per page
        assert [t["id"] for t in c.iter_transactions(page_size=1)] == [second["id"], draft["id"]]
        assert [t["id"] for t in c.iter_transactions(page_size=1, status="draft")] == []

        ann = c.create_customer({"source_id": "ann", "name": "Ann"})
        with pytest.raises(ApiError) as dup:
            c.create_customer({"source_id": "ann"})
        assert (dup.value.status, dup.value.code) == (409, "duplicate_customer")
        assert dup.value.errors[0]["meta"]["existing_customer_id"] == ann["id"]  # type: ignore[index]
        assert dup.value.request_id and dup.value.request_id.startswith("req_")
        assert c.update_customer(ann["id"], {"email": "ann@example.com"})["email"] == "ann@example.com"
        assert c.get_customer(ann["id"])["name"] == "Ann"

        batch = c.batch_upsert_customers([{"source_id": "ann", "name": "Ann B"}, {"name": "no source_id"}])
        assert batch["summary"] == {"created": 0, "updated": 1, "stale": 0, "deleted": 0, "failed": 1}
        failed = batch["data"][1]["errors"]
        assert failed and failed[0]["code"] == "validation_required_field"
        assert failed[0]["source"]["pointer"] == "/data/1/source_id"
        assert [x["id"] for x in c.iter_customers(page_size=1)] == [ann["id"]]
        c.delete_customer(ann["id"])
        with pytest.raises(ApiError) as gone:
            c.get_customer(ann["id"])
        assert (gone.value.status, gone.value.code) == (404, "not_found")

        widget = c.create_product({"source_id": "w-1", "name": "Widget", "tax_codes": ["GENERAL.TANGIBLE.GOODS"]})
        assert c.update_product(widget["id"], {"description": "blue"})["description"] == "blue"
        assert c.get_product(widget["id"])["resolved_tax_codes"] == ["GENERAL.TANGIBLE.GOODS"]
        assert [p["id"] for p in c.iter_products()] == [widget["id"]]

        everything = c.list_product_tax_codes(limit=1000)
        assert not everything["has_more"] and len(everything["data"]) > 40
        # the iterator pages by `code` (spec 4.4) and meets every code once, in order
        assert [x["code"] for x in c.iter_product_tax_codes(page_size=40)] == [x["code"] for x in everything["data"]]
        assert all(a["code"].startswith("_") for a in c.iter_product_attributes(page_size=5))

        with pytest.raises(ApiError) as bad:
            c.create_calculation({"line_items": [{"id": "x", "quantity": "a", "unit_price": "1"}]})
        assert bad.value.status == 422 and bad.value.pointers() == ["/line_items/0/quantity"]

    # every request carried the pinned version, and the writes that honour it a key
    assert all(e["sent"]["service-version"] == SERVICE_VERSION for e in recorder.events)
    assert all(e["headers"]["service-version"] == SERVICE_VERSION for e in recorder.events)
    keyed = {(e["method"], e["path"]) for e in recorder.events if "idempotency-key" in e["sent"]}
    assert keyed == {("POST", "/transactions"), ("POST", f"/transactions/{draft['id']}"), ("POST", "/customers"),
                     ("POST", "/customers/batch")}
    with LevyClient(server.http_url, tenant.key, service_version="hydrogen.1999-01-01") as old:
        with pytest.raises(ApiError) as version:
            old.list_customers()
    assert (version.value.status, version.value.code) == (400, "invalid_service_version")


def test_async_client(server: LevyServer, tenant: Tenant) -> None:
    async def scenario() -> None:
        async with AsyncLevyClient(server.http_url, tenant.key) as c:
            made = [await c.create_customer({"source_id": f"a-{i}"}) for i in range(3)]
            seen = [x["id"] async for x in c.iter_customers(page_size=2)]
            assert seen == [m["id"] for m in reversed(made)]  # newest first, over two pages
            calc = await c.create_calculation({"line_items": [SALE_LINE]})
            assert calc["tax_amount"] == "0"  # not registered in California: no tax
            with pytest.raises(ConflictError) as err:  # typed, as in the sync client
                await c.create_customer({"source_id": "a-0"})
            assert err.value.code == "duplicate_customer"
            with pytest.raises(NotFoundError):
                await c.get_customer("cust_00000000000000000000000000")

    asyncio.run(scenario())


def test_a_lost_response_is_retried_with_the_same_idempotency_key(server: LevyServer, tenant: Tenant) -> None:
    recorder = Recorder(lose={("POST", "/transactions"), ("POST", "/products")})
    with LevyClient(server.http_url, tenant.key, transport=recorder, retry=RetryPolicy(base_backoff=0.01)) as c:
        created = c.create_transaction({"type": "sale", "status": "finalized", "line_items": [SALE_LINE]})
        posts = recorder.to("POST", "/transactions")
        assert len(posts) == 2 and posts[0].get("lost") and posts[0]["status"] == 200
        assert posts[0]["sent"]["idempotency-key"] == posts[1]["sent"]["idempotency-key"]
        assert posts[1]["headers"]["idempotent-replayed"] == "true"
        assert [t["id"] for t in c.iter_transactions()] == [created["id"]]  # written once

        # POST /products takes no key: once it may have arrived it is not sent again
        with pytest.raises(httpx.ReadError):
            c.create_product({"source_id": "p-1", "name": "P"})
        assert len(recorder.to("POST", "/products")) == 1


@pytest.fixture
def limited_server(database_url: str, tmp_path: Path) -> Iterator[LevyServer]:
    """A server allowing 4 requests a second per key, bursts of 2."""
    srv = start_server(database_url, tmp_path, extra_env={"LEVY_RATE_LIMIT_PER_SECOND": "4",
                                                          "LEVY_RATE_LIMIT_BURST": "2"})
    try:
        yield srv
    finally:
        srv.stop()


def test_429_storm_is_ridden_out_honouring_retry_after(limited_server: LevyServer) -> None:
    tenant = create_tenant(limited_server.database_url)
    recorder = Recorder()
    with LevyClient(limited_server.http_url, tenant.key, transport=recorder, retry=RetryPolicy(max_attempts=6)) as c:
        pages = [c.list_product_tax_codes(limit=1) for _ in range(6)]
    assert all(len(p["data"]) == 1 for p in pages)
    events = recorder.events
    limited = [i for i, e in enumerate(events) if e["status"] == 429]
    assert limited, "6 requests at once against a burst of 2 must meet 429s"
    for i in limited:
        wait = float(events[i]["headers"]["retry-after"])
        assert wait >= 1
        assert events[i + 1]["at"] - events[i]["at"] >= wait - 0.05  # the client waited Retry-After
    assert len(events) == 6 + len(limited)

    statuses: list[int] = []

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await super().handle_async_request(request)
            statuses.append(response.status_code)
            return response

    async def storm() -> list[int]:
        async with AsyncLevyClient(limited_server.http_url, tenant.key, retry=RetryPolicy(max_attempts=6),
                                   transport=Counting()) as ac:
            return [len((await ac.list_product_tax_codes(limit=1))["data"]) for _ in range(4)]

    assert asyncio.run(storm()) == [1, 1, 1, 1]  # the async client rides it out too
    assert 429 in statuses and statuses.count(200) == 4

    # gRPC: the helper's channel retries RESOURCE_EXHAUSTED by its service config,
    # waiting the server's pushback (Retry-After x 1000 ms, at least 1 s) each time:
    # the bucket is empty after the storm above, so 6 calls wait at least once.
    started = time.monotonic()
    with channel(limited_server.grpc_target, tenant.key) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        for _ in range(6):
            assert len(stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1)).data) == 1
    assert time.monotonic() - started >= 0.95
    # ...where a channel without it fails, and a client without retries gets the error object
    with grpc.insecure_channel(limited_server.grpc_target, options=[("grpc.enable_retries", 0)]) as plain:
        stub = reference_pb2_grpc.ReferenceServiceStub(plain)
        refused: list[grpc.RpcError] = []
        for _ in range(4):
            try:
                stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1),
                                         metadata=[("x-api-key", tenant.key)])
            except grpc.RpcError as exc:
                refused.append(exc)
    assert refused and {e.code() for e in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
    trailers = dict(refused[0].trailing_metadata())
    assert int(trailers["grpc-retry-pushback-ms"]) == int(trailers["retry-after"]) * 1000 >= 1000
    with LevyClient(limited_server.http_url, tenant.key, retry=NO_RETRIES) as c:
        with pytest.raises(RateLimitError) as err:  # an ApiError, typed
            for _ in range(4):
                c.list_product_tax_codes(limit=1)
    assert (err.value.status, err.value.code) == (429, "rate_limit_error")
    assert int(err.value.headers["retry-after"]) >= 1
    # the wait asked for: the Retry-After header, the same as the error's meta.retry_after
    assert err.value.retry_after == float(err.value.headers["retry-after"]) == err.value.errors[0]["meta"]["retry_after"]  # type: ignore[index]

    # the helper's channel without retries: the typed error
    with channel(limited_server.grpc_target, tenant.key, retry=NO_RETRIES) as ch:
        stub = reference_pb2_grpc.ReferenceServiceStub(ch)
        with pytest.raises(RateLimitError) as rpc_err:
            for _ in range(4):
                stub.ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest(limit=1))
    assert isinstance(rpc_err.value, grpc.RpcError) and rpc_err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (rpc_err.value.status, rpc_err.value.code) == (429, "rate_limit_error")
    assert rpc_err.value.retry_after == float(rpc_err.value.headers["retry-after"]) >= 1
    assert rpc_err.value.errors[0]["meta"] == {"retry_after": int(rpc_err.value.headers["retry-after"])}


def test_a_list_continues_across_a_server_restart(database_url: str, tmp_path: Path) -> None:
    srv = start_server(database_url, tmp_path)
    tenant = create_tenant(database_url)
    recorder = Recorder()
    retry = RetryPolicy(max_attempts=200, base_backoff=0.05, max_backoff=0.25)
    restarted: list[LevyServer] = []
    try:
        with LevyClient(srv.http_url, tenant.key, transport=recorder, retry=retry) as c:
            made = [c.create_customer({"source_id": f"r-{i}"})["id"] for i in range(5)]
            items = c.iter_customers(page_size=2)
            seen = [next(items)["id"], next(items)["id"]]  # the first page
            assert srv.stop() == 0
            ports = (int(srv.http_url.rsplit(":", 1)[1]), int(srv.grpc_target.rsplit(":", 1)[1]))
            (tmp_path / "restarted").mkdir()
            starter = threading.Thread(target=lambda: restarted.append(
                start_server(database_url, tmp_path / "restarted", ports=ports)))
            starter.start()
            seen += [x["id"] for x in items]  # the next pages wait for the new server
            starter.join()
        assert seen == made[::-1]
        assert any(e.get("error") == "ConnectError" for e in recorder.events)
    finally:
        srv.stop()
        for s in restarted:
            s.stop()


def test_grpc_helper_sends_the_key_and_version(server: LevyServer, tenant: Tenant) -> None:
    with channel(server.grpc_target, tenant.key) as ch:
        page, call = reference_pb2_grpc.ReferenceServiceStub(ch).ListProductTaxCodes.with_call(
            reference_pb2.ListProductTaxCodesRequest(limit=3))
        assert len(page.data) == 3 and page.has_more
        assert dict(call.trailing_metadata())["service-version"] == SERVICE_VERSION
        made = customers_pb2_grpc.CustomerServiceStub(ch).CreateCustomer(
            customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id="g-1")))
        assert made.id.startswith("cust_")
    with channel(server.grpc_target, "levy_sk_" + "x" * 43) as ch:
        with pytest.raises(grpc.RpcError) as err:
            reference_pb2_grpc.ReferenceServiceStub(ch).ListProductTaxCodes(reference_pb2.ListProductTaxCodesRequest())
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_grpc_helper_watches_events_with_the_key(server: LevyServer, tenant: Tenant) -> None:
    """The server-streaming WatchEvents through the helper's channel: the admin key goes with it."""
    with channel(server.grpc_target, tenant.admin_key) as ch:
        call = events_pb2_grpc.EventServiceStub(ch).WatchEvents(events_pb2.WatchEventsRequest(), timeout=120)
        try:
            call.initial_metadata()  # the stream's cursor is fixed: what is committed now is sent
            made = customers_pb2_grpc.CustomerServiceStub(ch).CreateCustomer(
                customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id="w-1")))
            event = next(iter(call))
            assert (event.type, event.object_id) == ("customer.created", made.id)
        finally:
            call.cancel()


def test_the_package_needs_neither_the_server_nor_sqlalchemy() -> None:
    code = ("import sys, levy_client, levy_client.rpc, levy_client.grpc_stubs.transactions_pb2_grpc\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'levy', 'sqlalchemy'}))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", check=True)
    assert out.stdout.strip() == "[]"
    project = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())["project"]
    requirements = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    assert not [r for r in requirements if r.lower().startswith(("levy", "sqlalchemy"))]


def test_grpc_stubs_are_current() -> None:
    out = subprocess.run([str(ROOT / "clients" / "python" / "scripts" / "gen-stubs"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_retry_rules() -> None:
    from email.utils import formatdate

    from levy_client._core import Attempts, Call, parse_retry_after

    assert parse_retry_after("3") == 3.0
    assert 8 < parse_retry_after(formatdate(time.time() + 10, usegmt=True)) <= 10  # type: ignore[operator]
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None

    request = httpx.Request("GET", "http://levy.invalid/customers")

    def answer(status: int, **headers: str) -> httpx.Response:
        return httpx.Response(status, headers=headers, request=request)

    policy = RetryPolicy(max_attempts=3, base_backoff=0.5, max_backoff=1.0, max_retry_after=30)
    read, write = Call("GET", "/customers"), Call("POST", "/products", repeatable=False)
    assert Attempts(policy, read).wait_after(answer(429, **{"Retry-After": "7"})) == 7.0
    assert Attempts(policy, read).wait_after(answer(429, **{"Retry-After": "31"})) is None  # past the cap: raise
    assert 0 <= Attempts(policy, read).wait_after(answer(503)) < 0.5  # type: ignore[operator]  # jitter in [0, 0.5)
    assert Attempts(policy, read).wait_after(answer(501)) is None  # permanent
    assert Attempts(policy, read).wait_after(answer(422)) is None
    assert Attempts(policy, write).wait_after(answer(500)) is None  # may have been written: not repeated
    assert Attempts(policy, write).wait_after(answer(429, **{"Retry-After": "1"})) == 1.0  # refused: repeated
    lost = httpx.ReadError("lost", request=request)
    assert Attempts(policy, write).wait_after(lost) is None
    assert Attempts(policy, write).wait_after(httpx.ConnectError("refused", request=request)) is not None
    bounded = Attempts(policy, read)
    assert [bounded.wait_after(answer(429, **{"Retry-After": "0"})) for _ in range(3)] == [0.0, 0.0, None]
    with pytest.raises(ApiError) as err:
        bounded.outcome(answer(429, **{"Retry-After": "0"}))
    assert err.value.status == 429


def test_grpc_helper_adds_an_idempotency_key_to_the_writes_that_take_one(server: LevyServer, tenant: Tenant) -> None:
    from levy_client.rpc import _Metadata

    seen: dict[str, list[tuple[str, str]]] = {}

    class Details:
        timeout = credentials = wait_for_ready = compression = None

        def __init__(self, method: str, metadata: list[tuple[str, str]] | None = None) -> None:
            self.method, self.metadata = method, metadata

    def continuation(details: Any, request: Any) -> None:
        seen[details.method] = list(details.metadata)

    interceptor = _Metadata([("x-api-key", "k"), ("service-version", SERVICE_VERSION)])
    interceptor.intercept_unary_unary(continuation, Details("/levy.v1.CustomerService/CreateCustomer"), None)
    interceptor.intercept_unary_unary(continuation, Details("/levy.v1.ProductService/CreateProduct"), None)
    interceptor.intercept_unary_unary(continuation, Details("/levy.v1.TransactionService/CreateTransaction",
                                                            [("idempotency-key", "mine")]), None)
    assert [k for k, _ in seen["/levy.v1.CustomerService/CreateCustomer"]] == \
        ["x-api-key", "service-version", "idempotency-key"]
    assert "idempotency-key" not in dict(seen["/levy.v1.ProductService/CreateProduct"])
    assert dict(seen["/levy.v1.TransactionService/CreateTransaction"])["idempotency-key"] == "mine"

    # a key the caller chooses reaches the server: the same key replays the same customer
    with channel(server.grpc_target, tenant.key) as ch:
        stub = customers_pb2_grpc.CustomerServiceStub(ch)
        request = customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id="g-idem"))
        first = stub.CreateCustomer(request, metadata=[("idempotency-key", "k-1")])
        again = stub.CreateCustomer(request, metadata=[("idempotency-key", "k-1")])
    assert first.id == again.id


def test_errors_are_typed_by_family_over_rest_and_grpc(server: LevyServer, tenant: Tenant) -> None:
    """Each error family raises its ApiError subclass, the same over REST and over the
    gRPC helper's channel (there also a grpc.RpcError with its status code), with the
    error objects a REST caller gets: validation 422, not found 404, conflict 409,
    authentication 401 and permission 403 (a kind of AuthenticationError). The rate
    limit (429, retry_after) is in test_429_storm_is_ridden_out_honouring_retry_after."""
    bad_key = "levy_sk_" + "x" * 43
    with LevyClient(server.http_url, tenant.key) as c, channel(server.grpc_target, tenant.key) as ch:
        customers = customers_pb2_grpc.CustomerServiceStub(ch)

        # validation (422): a limit out of 1..1000, named by its parameter
        with pytest.raises(ValidationError) as rest:
            c.list_customers(limit=0)
        with pytest.raises(ValidationError) as rpc:
            customers.ListCustomers(customers_pb2.ListCustomersRequest(limit=0))
        assert rpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        for err in (rest.value, rpc.value):
            assert (err.status, err.code) == (422, "validation_error")
            assert err.errors[0]["source"] == {"pointer": None, "parameter": "limit"}
        assert rest.value.errors == rpc.value.errors
        # the calculation's own 422 shape is a ValidationError too, pointing at the field
        with pytest.raises(ValidationError) as calc:
            c.create_calculation({"line_items": [{"id": "x", "quantity": "a", "unit_price": "1"}]})
        assert calc.value.pointers() == ["/line_items/0/quantity"]

        # not found (404)
        with pytest.raises(NotFoundError) as rest:
            c.get_customer("cust_00000000000000000000000000")
        with pytest.raises(NotFoundError) as rpc:
            customers.GetCustomer(customers_pb2.GetCustomerRequest(customer_id="cust_00000000000000000000000000"))
        assert rpc.value.code() == grpc.StatusCode.NOT_FOUND
        assert [(e.status, e.code) for e in (rest.value, rpc.value)] == [(404, "not_found")] * 2

        # conflict (409): a second customer with a source_id taken, naming the first
        first = c.create_customer({"source_id": "typed-1"})
        with pytest.raises(ConflictError) as rest:
            c.create_customer({"source_id": "typed-1"})
        with pytest.raises(ConflictError) as rpc:
            customers.CreateCustomer(customers_pb2.CreateCustomerRequest(
                customer=customers_pb2.Customer(source_id="typed-1")))
        assert rpc.value.code() == grpc.StatusCode.ALREADY_EXISTS
        for err in (rest.value, rpc.value):
            assert (err.status, err.code) == (409, "duplicate_customer")
            assert err.errors[0]["meta"]["existing_customer_id"] == first["id"]  # type: ignore[index]
        assert rpc.value.request_id and rpc.value.request_id.startswith("req_")

        # permission (403): a plain key on an admin operation; an AuthenticationError too
        with pytest.raises(PermissionDeniedError) as rest:
            c.get_organization_settings()
        with pytest.raises(PermissionDeniedError) as rpc:
            organization_pb2_grpc.OrganizationServiceStub(ch).GetOrganizationSettings(
                organization_pb2.GetOrganizationSettingsRequest())
        assert rpc.value.code() == grpc.StatusCode.PERMISSION_DENIED
        for err in (rest.value, rpc.value):
            assert (err.status, err.code) == (403, "permission_error") and isinstance(err, AuthenticationError)

    # authentication (401): a key the server does not know
    with LevyClient(server.http_url, bad_key) as c, channel(server.grpc_target, bad_key) as ch:
        with pytest.raises(AuthenticationError) as rest:
            c.list_customers()
        with pytest.raises(AuthenticationError) as rpc:
            customers_pb2_grpc.CustomerServiceStub(ch).ListCustomers(customers_pb2.ListCustomersRequest())
    assert rpc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    for err in (rest.value, rpc.value):
        assert (err.status, err.code) == (401, "authentication_error")
        assert not isinstance(err, PermissionDeniedError)
        # every family is an ApiError (and a LevyError): the except clauses written before still catch them
        assert isinstance(err, ApiError)


def test_an_error_without_levy_details_stays_grpcs_own() -> None:
    """No server there: UNAVAILABLE without Levy's details is gRPC's own error, not an ApiError."""
    from levyserver import free_port

    with channel(f"127.0.0.1:{free_port()}", "k", retry=RetryPolicy(max_attempts=2, base_backoff=0.01)) as ch:
        with pytest.raises(grpc.RpcError) as err:
            reference_pb2_grpc.ReferenceServiceStub(ch).ListProductTaxCodes(
                reference_pb2.ListProductTaxCodesRequest(), timeout=5)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE and not isinstance(err.value, ApiError)


def test_error_classes_by_status() -> None:
    """The class of each status (REST), its gRPC twin a subclass of it and of grpc.RpcError."""
    from levy_client.errors import api_error
    from levy_client.rpc import RPC_ERROR_CLASSES, RpcApiError

    expected = {401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError, 409: ConflictError,
                422: ValidationError, 429: RateLimitError, 400: ApiError, 500: ApiError}
    for status, cls in expected.items():
        assert type(api_error(status, [], None, {})) is cls
    for status, cls in RPC_ERROR_CLASSES.items():
        assert issubclass(cls, expected[status]) and issubclass(cls, grpc.RpcError)
    assert issubclass(RpcApiError, ApiError) and issubclass(RpcApiError, grpc.RpcError)
    # without a Retry-After header, the wait comes from meta.retry_after
    assert RateLimitError(429, [{"status": "429", "code": "rate_limit_error", "title": "", "detail": "",
                                 "meta": {"retry_after": 3}}], None, {}).retry_after == 3.0
