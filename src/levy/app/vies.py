"""The optional online check of EU VAT numbers against the European Commission's VIES service.

Off unless ``LEVY_VIES_URL`` is set (``Config.vies_url``, for example
``https://ec.europa.eu/taxation_customs/vies/rest-api/check-vat-number``). A calculation or
transaction whose line carries a well-formed ``eu_vat`` id for a customer in a member state asks
VIES about it (``POST {"countryCode", "vatNumber"}``, with the requester's own number when
``LEVY_VIES_REQUESTER_VAT`` is set, so that VIES returns a consultation number) within
``LEVY_VIES_TIMEOUT_SECONDS``. The answer (:class:`~levy.domain.tax.model.VatCheck`) goes on the
tax id for the engine (:func:`levy.domain.tax.international.reverse_charge`) and on the line.

Answers (valid or invalid) are kept per number and day in this process; an unavailable service is
asked again by the next request. An error, a timeout or an answer VIES marks as not given
(``userError`` other than ``VALID``/``INVALID``) reads as ``unavailable`` and never fails the request.
See docs/international.md, "VIES".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any

import httpx

from levy.domain.tax.international import eu_vat_number
from levy.domain.tax.model import LineInput, TaxId, VatCheck

log = logging.getLogger("levy.vies")

# Answers kept at most (per process); the oldest day goes first when full.
CACHE_ENTRIES = 10_000


class ViesClient:
    """Asks VIES about VAT numbers, one answer per number and day (:data:`CACHE_ENTRIES` at most)."""

    def __init__(self, url: str, timeout_seconds: float, requester_vat: str = "",
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url
        self.timeout = timeout_seconds
        self.requester = requester_vat.replace(" ", "").upper()
        self._client = httpx.AsyncClient(timeout=timeout_seconds, transport=transport)
        self._cache: dict[tuple[str, date], VatCheck] = {}
        self._pending: dict[tuple[str, date], asyncio.Future[VatCheck]] = {}

    async def close(self) -> None:
        await self._client.aclose()

    async def check(self, number: str, today: date | None = None) -> VatCheck:
        """VIES's answer about ``number`` (``DE136695976``; Greece ``EL...``) today: from the cache,
        from a request already under way for it, or asked now."""
        today = today or datetime.now(UTC).date()
        key = (number, today)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[VatCheck] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            answer = await self._ask(number, today)
            if answer.result != "unavailable":
                if len(self._cache) >= CACHE_ENTRIES:
                    oldest = min(day for _, day in self._cache)
                    self._cache = {k: v for k, v in self._cache.items() if k[1] != oldest} \
                        if oldest != today else {}
                self._cache[key] = answer
            future.set_result(answer)
            return answer
        except BaseException as e:  # cancelled: whoever waits on the same number asks again
            future.set_exception(e)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            del self._pending[key]

    async def _ask(self, number: str, today: date) -> VatCheck:
        body: dict[str, str] = {"countryCode": number[:2], "vatNumber": number[2:]}
        if self.requester:
            body |= {"requesterMemberStateCode": self.requester[:2], "requesterNumber": self.requester[2:]}
        try:
            async with asyncio.timeout(self.timeout):  # the whole exchange, not each read
                response = await self._client.post(self.url, json=body)
        except (TimeoutError, httpx.TimeoutException):
            return VatCheck(number, "unavailable", today, detail=f"no answer within {self.timeout:g} s")
        except Exception as e:  # never fails the calculation: the format check decides
            log.info("VIES request for %s failed: %r", number, e)
            return VatCheck(number, "unavailable", today, detail=f"request failed: {type(e).__name__}")
        return parse_answer(number, today, response.status_code, response)


def parse_answer(number: str, today: date, status: int, response: httpx.Response) -> VatCheck:
    """A VIES REST answer -> VatCheck: ``valid`` true/false with ``requestDate`` and
    ``requestIdentifier``; anything else (an HTTP error, ``errorWrappers``, a ``userError`` such as
    ``MS_UNAVAILABLE``, a body that is not the answer) is ``unavailable`` with VIES's error code."""
    try:
        data: Any = response.json()
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return VatCheck(number, "unavailable", today, detail=f"HTTP {status}, not a VIES answer")
    errors = data.get("errorWrappers")
    user_error = str(data.get("userError") or "")
    if status != 200 or errors or user_error not in ("", "VALID", "INVALID") or not isinstance(data.get("valid"), bool):
        code = user_error or (str(errors[0].get("error", "")) if errors and isinstance(errors[0], dict) else "")
        return VatCheck(number, "unavailable", today, detail=f"HTTP {status}{', ' + code if code else ''}")
    checked = today
    raw_date = str(data.get("requestDate") or "")
    try:
        checked = date.fromisoformat(raw_date[:10]) if raw_date else today
    except ValueError:
        pass
    return VatCheck(number, "valid" if data["valid"] else "invalid", checked,
                    str(data.get("requestIdentifier") or "")[:64])


def vies_number(tax_id: TaxId) -> str | None:
    """The number VIES is asked about: the compact id with Greece's prefix ``EL``."""
    number = eu_vat_number(tax_id)
    if number is None:
        return None
    return "EL" + number[2:] if number.startswith("GR") else number


async def check_lines(client: ViesClient, lines: Mapping[int, LineInput], member_states: frozenset[str],
                      known: dict[str, VatCheck] | None = None) -> dict[int, LineInput]:
    """The lines (by position) whose ``eu_vat`` ids were checked, with each answer on its tax id.

    Only lines to a member state (``member_states``) and well-formed ids are asked about, all at
    once; the same number is asked once. ``known``: the request's answers so far (asked before its
    write transaction, :func:`ask`), used first and completed with those asked here."""
    known = {} if known is None else known
    wanted: dict[str, None] = {}
    todo: list[tuple[int, LineInput]] = []
    for i, line in lines.items():
        country = (line.address.country or "").upper() if line.address is not None else ""
        if not line.tax_ids or country not in member_states:
            continue
        numbers = [vies_number(t) for t in line.tax_ids]
        if any(numbers):
            todo.append((i, line))
            wanted.update((n, None) for n in numbers if n)
    if not todo:
        return {}
    await ask(client, wanted, known)
    out: dict[int, LineInput] = {}
    for i, line in todo:
        ids = tuple(replace(t, online=known[n]) if (n := vies_number(t)) else t for t in line.tax_ids)
        out[i] = replace(line, tax_ids=ids)
    return out


async def ask(client: ViesClient, numbers: Iterable[str], known: dict[str, VatCheck]) -> None:
    """Ask VIES about each of ``numbers`` not in ``known`` yet, all at once, and add the answers to it."""
    todo = [n for n in dict.fromkeys(numbers) if n not in known]
    if todo:
        known.update(zip(todo, await asyncio.gather(*(client.check(n) for n in todo)), strict=True))
