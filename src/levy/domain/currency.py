"""Currencies on returns: the filing currency, exchange rates and exact conversion.

Plain Python, no I/O. A return is in its country's filing currency: the organization's setting
``filing_currencies`` (:func:`validate_filing_currencies`), over the defaults of
``levy/data/currency/filing_currencies.json`` (:func:`parse_filing_currency_defaults`, passed in as
``defaults``: USD for the US, which no organization can change); callers pass the currency in. A
transaction in another currency carries ``exchange_rate``: units of the
filing currency per unit of the transaction currency (a decimal string, as given by the caller
or worked out from the imported daily reference rates, :func:`cross_rate`). Amounts convert
exactly: ``amount x rate``, scaled between the two currencies' exponents (JPY 0, USD 2), rounded
half up once per figure (:func:`convert`). See docs/transactions.md, "Currency".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import pycountry

from levy.domain.errors import LevyError, ValidationFailed
from levy.domain.money import currency_exponent, mul_round

#: How far back a transaction date looks for a published reference rate: the ECB publishes on
#: TARGET business days only, so a Saturday, Sunday or holiday (Easter: four days) takes the
#: latest rate published before it, never one older than this.
RATE_LOOKBACK_DAYS = 7

#: Places kept of a rate worked out from two published rates (JPY -> USD: USD/EUR / JPY/EUR).
CROSS_RATE_PLACES = 10

_RATE_RE = re.compile(r"[0-9]{1,20}(\.[0-9]{1,18})?\Z")


#: The country of the returns Levy prepares from this module's US rules (the returns outside the US
#: are :mod:`levy.domain.filing_international`'s).
RETURNS_COUNTRY = "US"


@dataclass(frozen=True, slots=True)
class FilingCurrencyDefault:
    """A country's default filing currency; ``fixed``: its returns are only in that currency."""

    country: str
    currency: str
    fixed: bool
    source: str


#: The default filing currency of each country that has one.
FilingCurrencyDefaults = Mapping[str, FilingCurrencyDefault]


def parse_filing_currency_defaults(doc: Mapping[str, Any]) -> dict[str, FilingCurrencyDefault]:
    """The defaults by country, from ``filing_currencies.json`` (its parsed document)."""
    return {e["country"]: FilingCurrencyDefault(e["country"], e["currency"], bool(e["fixed"]), e["source"])
            for e in doc["countries"]}


def filing_currency_map(defaults: FilingCurrencyDefaults, chosen: Mapping[str, str] | None = None) -> dict[str, str]:
    """Country -> filing currency: the ``defaults`` with the organization's ``chosen`` currencies over them."""
    out = {country: d.currency for country, d in defaults.items()}
    out.update(chosen or {})
    return dict(sorted(out.items()))


def validate_filing_currencies(sent: object, pointer: str = "/filing_currencies", *,
                               defaults: FilingCurrencyDefaults) -> tuple[tuple[str, str], ...]:
    """The organization's own filing currencies from a PATCH: an object of ISO 3166-1 alpha-2
    country -> ISO 4217 currency (``{"GB": "GBP"}``). A country whose default is fixed (the US:
    USD) takes no other currency. Only the choices that differ from the defaults are kept, sorted.
    Every problem is reported (pointer ``/filing_currencies/<country>``)."""
    if not isinstance(sent, Mapping):
        raise ValidationFailed("filing_currencies must be an object of country -> currency, for example "
                               "{\"US\": \"USD\", \"GB\": \"GBP\"}.", pointer=pointer)
    errors: list[LevyError] = []
    kept: dict[str, str] = {}
    for country, currency in sent.items():
        at = f"{pointer}/{country}"
        if (not isinstance(country, str) or len(country) != 2 or not country.isupper()
                or pycountry.countries.get(alpha_2=country) is None):
            errors.append(ValidationFailed(f"'{country}' is not an ISO 3166-1 alpha-2 country code (for example "
                                           "US, GB, CA).", pointer=at, input=country))
            continue
        try:
            currency_exponent(currency, pointer=at)  # type: ignore[arg-type]
        except ValidationFailed as e:
            errors.append(e)
            continue
        default = defaults.get(country)
        if default is not None and default.fixed and currency != default.currency:
            errors.append(ValidationFailed(
                f"returns in {country} are in {default.currency}: its filing currency cannot be {currency}.",
                pointer=at, input=currency, meta={"country": country, "filing_currency": default.currency}))
        elif default is None or currency != default.currency:
            kept[country] = currency  # type: ignore[assignment]
    if errors:
        raise ValidationFailed.many(errors)  # type: ignore[arg-type]
    return tuple(sorted(kept.items()))


def parse_exchange_rate(text: object, pointer: str = "/exchange_rate") -> Decimal:
    """A positive decimal string (``"1.1"``, ``"0.0067"``): units of the filing currency per unit."""
    if not isinstance(text, str) or not _RATE_RE.match(text) or Decimal(text) <= 0:
        raise ValidationFailed(
            "exchange_rate must be a positive decimal string: units of the filing currency per unit of the "
            "transaction currency, for example \"1.1\".", pointer=pointer, input=text,
        )
    return Decimal(text)


def rate_string(rate: Decimal) -> str:
    """``Decimal('1.1000')`` -> ``"1.1"``: the plain decimal, never exponent notation."""
    text = format(rate.normalize(), "f")
    return text


def convert(amount: int, from_currency: str, to_currency: str, rate: Decimal) -> int:
    """``amount`` (minor units of ``from_currency``) in minor units of ``to_currency``, half up.

    ``rate`` is units of ``to_currency`` per unit of ``from_currency``; the exponents scale it:
    1000 JPY (exponent 0) at 0.0066 USD is 6.6 USD = 660 cents.
    """
    scale = currency_exponent(to_currency) - currency_exponent(from_currency)
    return mul_round(amount, rate.scaleb(scale))


def cross_rate(published: Mapping[str, Decimal], base: str, from_currency: str, to_currency: str) -> Decimal | None:
    """Units of ``to_currency`` per unit of ``from_currency`` from rates published against ``base``
    (``published[q]`` = units of ``q`` per unit of ``base``, the ECB's layout with base EUR).

    Exact when one side is the base; otherwise ``published[to] / published[from]`` rounded half up
    to :data:`CROSS_RATE_PLACES` places. None when a currency is not published.
    """
    if from_currency == to_currency:
        return Decimal(1)
    rates = {**published, base: Decimal(1)}
    if from_currency not in rates or to_currency not in rates:
        return None
    if from_currency == base:
        return rates[to_currency]
    value = rates[to_currency] / rates[from_currency]
    return value.quantize(Decimal(1).scaleb(-CROSS_RATE_PLACES), rounding=ROUND_HALF_UP).normalize()


def lookup_window(on: date) -> tuple[date, date]:
    """The published dates a transaction dated ``on`` may take its rate from (latest first wins)."""
    return on - timedelta(days=RATE_LOOKBACK_DAYS), on


#: Statuses that put a transaction on returns: it needs its rate by then.
_NEEDS_RATE = frozenset({"finalized", "filed"})


def _parse_rate_date(text: str | None, default: date) -> date:
    if text is None:
        return default
    try:
        if len(text) == 10:
            return date.fromisoformat(text)
    except ValueError:
        pass
    raise ValidationFailed("exchange_rate_date must be a date in the form YYYY-MM-DD.", pointer="/exchange_rate_date",
                           input=text)


def choose_exchange_rate(
    *,
    currency: str,
    status: str,
    transaction_day: date,
    sent_rate: str | None,
    sent_date: str | None,
    parent_rate: tuple[str | None, date | None] | None = None,
    published: tuple[Decimal, date] | None = None,
    filing_currency: str,
) -> tuple[str | None, date | None]:
    """The ``(exchange_rate, exchange_rate_date)`` a transaction stores (docs/transactions.md, "Currency").

    ``filing_currency``: the currency of the returns the transaction goes on (the organization's
    setting for its country).

    * In the filing currency: none; a rate sent is 422 at ``/exchange_rate``.
    * A credit of a sale (``parent_rate``): its sale's rate, whatever the credit's date; a different
      rate sent is 422.
    * A rate sent: that rate (a positive decimal string), for ``sent_date`` or the transaction's day.
    * Otherwise the imported reference rate ``published`` (rate, publication date) for its day.
    * Finalized or filed with none of these: 422 at ``/exchange_rate``. A draft may wait.
    """
    if currency == filing_currency:
        if sent_rate is not None:
            raise ValidationFailed(
                f"exchange_rate is only for a transaction in another currency than the filing currency "
                f"{currency}: leave it out.", pointer="/exchange_rate", input=sent_rate)
        return None, None
    if parent_rate is not None and parent_rate[0] is not None:
        rate, on = parent_rate
        if sent_rate is not None and parse_exchange_rate(sent_rate) != Decimal(rate):
            raise ValidationFailed(
                f"a credit uses its sale's exchange rate ({rate}): leave exchange_rate out or send that rate.",
                pointer="/exchange_rate", input=sent_rate, meta={"parent_exchange_rate": rate})
        return rate, on
    if sent_rate is not None:
        rate = parse_exchange_rate(sent_rate)
        return rate_string(rate), _parse_rate_date(sent_date, transaction_day)
    if published is not None:
        return rate_string(published[0]), published[1]
    if status in _NEEDS_RATE:
        raise ValidationFailed(
            f"the transaction is in {currency} and returns are in {filing_currency}: send exchange_rate "
            f"(units of {filing_currency} per {currency}, a decimal string) or import the reference rates "
            f"for {transaction_day.isoformat()} (levy rates import).",
            pointer="/exchange_rate", meta={"currency": currency, "filing_currency": filing_currency,
                                             "transaction_date": transaction_day.isoformat()})
    return None, None
