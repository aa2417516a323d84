"""levy.app.vies.ViesClient against httpx's MockTransport: what each kind of answer reads as, the cache per
number and day, one request for callers asking about the same number at once, and errors that never raise."""

from __future__ import annotations

import asyncio
import json
from datetime import date
from typing import Any

import httpx

from levy.app.vies import ViesClient

TODAY = date(2026, 6, 1)


def run(answer: Any, *numbers: str, requester: str = "") -> tuple[list[Any], list[dict[str, Any]]]:
    """Each number's check (asked at once) and the request bodies the stub received."""
    bodies: list[dict[str, Any]] = []

    async def handler(req: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(req.content))
        await asyncio.sleep(0.01)
        return answer(req) if callable(answer) else answer

    async def main() -> list[Any]:
        client = ViesClient("http://vies.test/check-vat-number", 0.2, requester, transport=httpx.MockTransport(handler))
        try:
            return list(await asyncio.gather(*(client.check(n, TODAY) for n in numbers)))
        finally:
            await client.close()

    return asyncio.run(main()), bodies


def test_valid_and_invalid_answers_with_the_consultation() -> None:
    ok = httpx.Response(200, json={"valid": True, "requestDate": "2026-05-31T23:59:00.000+02:00",
                                   "requestIdentifier": "WAPIAAAAX", "userError": "VALID"})
    (check,), bodies = run(ok, "DE136695976", requester="DE 312345671")
    assert (check.result, check.checked_on, check.request_identifier) == ("valid", date(2026, 5, 31), "WAPIAAAAX")
    assert bodies == [{"countryCode": "DE", "vatNumber": "136695976", "requesterMemberStateCode": "DE",
                       "requesterNumber": "312345671"}]
    no = httpx.Response(200, json={"valid": False, "requestDate": "2026-06-01"})
    (check,), _ = run(no, "EL094259216")
    assert (check.result, check.vat_number, check.request_identifier) == ("invalid", "EL094259216", "")


def test_what_reads_as_unavailable() -> None:
    cases = [
        (httpx.Response(500, json={"actionSucceed": False, "errorWrappers": [{"error": "MS_UNAVAILABLE"}]}),
         "HTTP 500, MS_UNAVAILABLE"),
        (httpx.Response(200, json={"valid": False, "userError": "TIMEOUT"}), "HTTP 200, TIMEOUT"),
        (httpx.Response(200, text="<html>maintenance</html>"), "HTTP 200, not a VIES answer"),
        (httpx.Response(200, json={"requestDate": "2026-06-01"}), "HTTP 200"),  # no `valid`
    ]
    for answer, why in cases:
        (check,), _ = run(answer, "DE136695976")
        assert (check.result, check.detail, check.checked_on) == ("unavailable", why, TODAY), answer

    def broken(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=req)

    (check,), _ = run(broken, "DE136695976")
    assert (check.result, check.detail) == ("unavailable", "request failed: ConnectError")

    def bug(req: httpx.Request) -> httpx.Response:
        raise RuntimeError("anything else")

    (check,), _ = run(bug, "DE136695976")
    assert (check.result, check.detail) == ("unavailable", "request failed: RuntimeError")


def test_one_request_per_number_and_day_unavailable_not_kept() -> None:
    ok = httpx.Response(200, json={"valid": True, "requestDate": "2026-06-01"})
    checks, bodies = run(ok, *["DE136695976"] * 20, "FR40303265045")
    assert len(bodies) == 2 and {c.result for c in checks} == {"valid"}
    down = httpx.Response(503, json={"errorWrappers": [{"error": "SERVICE_UNAVAILABLE"}]})

    async def twice() -> int:
        sent = 0

        async def handler(req: httpx.Request) -> httpx.Response:
            nonlocal sent
            sent += 1
            return down

        client = ViesClient("http://vies.test/c", 0.2, transport=httpx.MockTransport(handler))
        await client.check("DE136695976", TODAY)
        await client.check("DE136695976", TODAY)
        await client.close()
        return sent

    assert asyncio.run(twice()) == 2


def test_the_timeout_bounds_the_whole_request() -> None:
    async def slow(req: httpx.Request) -> httpx.Response:
        await asyncio.sleep(2)
        return httpx.Response(200, json={"valid": True})

    async def main() -> tuple[Any, float]:
        client = ViesClient("http://vies.test/c", 0.2, transport=httpx.MockTransport(slow))
        loop = asyncio.get_running_loop()
        started = loop.time()
        check = await client.check("DE136695976", TODAY)
        took = loop.time() - started
        await client.close()
        return check, took

    check, took = asyncio.run(main())
    assert check.result == "unavailable" and check.detail == "no answer within 0.2 s"
    assert took < 1.0, took
