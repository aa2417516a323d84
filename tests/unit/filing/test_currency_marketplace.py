"""Issue 37 part A in the domain: exact conversion to the filing currency, the rate a transaction
stores, the ECB reference-rate layout, and marketplace sales on returns and nexus. Every figure is
worked by hand in the comments."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from types import SimpleNamespace

import pytest
from filing_helpers import ST, line, row, txn

from levy.domain.currency import choose_exchange_rate, convert, cross_rate
from levy.domain.errors import ValidationFailed
from levy.domain.filing import (
    ExemptSales,
    MarketplaceEntry,
    liability_report,
    prepare_return,
)
from levy.domain.nexus_report import counts_marketplace, dated_sales_by_state
from levy.store.reference_data import nexus_thresholds
from levy.domain.transactions.records import in_filing_currency
from levy.ratefiles.ecb import looks_like_ecb, parse_ecb

Q1 = (date(2026, 1, 1), date(2026, 3, 31))
D = date(2026, 2, 2)


def test_convert_is_exact_and_minds_the_exponents():
    assert convert(10000, "EUR", "USD", Decimal("1.1")) == 11000  # 100.00 EUR -> 110.00 USD
    assert convert(10000, "JPY", "USD", Decimal("0.0066")) == 6600  # 10000 JPY -> 66.00 USD
    assert convert(625, "JPY", "USD", Decimal("0.0066")) == 413  # 4.125 USD = 412.5 cents -> 413 (half up)
    assert convert(1000, "BHD", "USD", Decimal("2.65")) == 265  # 1.000 BHD (exponent 3) -> 2.65 USD
    assert convert(5, "EUR", "USD", Decimal("1.1")) == 6  # 5.5 -> 6


def test_cross_rate_from_euro_reference_rates():
    published = {"USD": Decimal("1.2"), "JPY": Decimal(160)}
    assert cross_rate(published, "EUR", "EUR", "USD") == Decimal("1.2")  # exact: the published figure
    assert cross_rate(published, "EUR", "JPY", "USD") == Decimal("0.0075")  # 1.2 / 160
    # 1.1 / 165 = 0.00666666..., kept to 10 places half up.
    assert cross_rate({"USD": Decimal("1.1"), "JPY": Decimal(165)}, "EUR", "JPY", "USD") == Decimal("0.0066666667")
    assert cross_rate(published, "EUR", "CHF", "USD") is None


def test_the_rate_a_transaction_stores():
    kw = {"currency": "EUR", "status": "finalized", "transaction_day": D, "filing_currency": "USD"}
    assert choose_exchange_rate(**kw, sent_rate="1.10", sent_date=None) == ("1.1", D)
    assert choose_exchange_rate(**kw, sent_rate="1.1", sent_date="2026-02-01") == ("1.1", date(2026, 2, 1))
    assert choose_exchange_rate(**kw, sent_rate=None, sent_date=None,
                                published=(Decimal("1.2"), date(2026, 1, 30))) == ("1.2", date(2026, 1, 30))
    # A credit takes its sale's rate; another one is refused.
    parent = ("0.0066", date(2026, 1, 12))
    assert choose_exchange_rate(**kw, sent_rate=None, sent_date=None, parent_rate=parent) == parent
    with pytest.raises(ValidationFailed) as e:
        choose_exchange_rate(**kw, sent_rate="0.007", sent_date=None, parent_rate=parent)
    assert e.value.items[0].pointer == "/exchange_rate"
    # Finalized without any rate: 422 at /exchange_rate; a draft may wait; USD needs none and takes none.
    for bad in ({"sent_rate": None}, {"sent_rate": "0"}, {"sent_rate": "1,1"}, {"sent_rate": "1e3"}):
        with pytest.raises(ValidationFailed) as e:
            choose_exchange_rate(**kw, sent_date=None, **bad)
        assert e.value.items[0].pointer == "/exchange_rate"
    assert choose_exchange_rate(currency="EUR", status="draft", transaction_day=D, sent_rate=None,
                                sent_date=None, filing_currency="USD") == (None, None)
    assert choose_exchange_rate(currency="USD", status="finalized", transaction_day=D, sent_rate=None,
                                sent_date=None, filing_currency="USD") == (None, None)
    with pytest.raises(ValidationFailed):
        choose_exchange_rate(currency="USD", status="finalized", transaction_day=D, sent_rate="1", sent_date=None,
                             filing_currency="USD")
    # The filing currency is passed in: a return in GBP takes a USD sale's rate like any other currency's.
    assert choose_exchange_rate(currency="USD", status="finalized", transaction_day=D, sent_rate="0.79",
                                sent_date=None, filing_currency="GBP") == ("0.79", D)


def test_ecb_layout_both_files():
    hist = "Date,USD,JPY,BGN,\n2026-01-09,1.2000,160.00,N/A,\n2026-01-08,1.1900,159.00,N/A,\n"
    assert looks_like_ecb(hist.splitlines()[0]) and not looks_like_ecb("State,ZipCode,TaxRegionName")
    rates = parse_ecb(hist)
    assert [(r.on, r.base, r.quote, r.rate) for r in rates] == [
        (date(2026, 1, 9), "EUR", "USD", "1.2000"), (date(2026, 1, 9), "EUR", "JPY", "160.00"),
        (date(2026, 1, 8), "EUR", "USD", "1.1900"), (date(2026, 1, 8), "EUR", "JPY", "159.00")]
    day = "Date, USD, JPY, \n09 January 2026, 1.2000, 160.00, \n"
    assert [(r.on, r.quote, r.rate) for r in parse_ecb(day)] == [
        (date(2026, 1, 9), "USD", "1.2000"), (date(2026, 1, 9), "JPY", "160.00")]
    with pytest.raises(ValidationFailed) as e:
        parse_ecb("Date,USD,\nsoon,1.2,\n2026-01-09,abc,\n", "bad.csv")
    assert len(e.value.items) == 2 and "bad.csv:2" in e.value.items[0].detail


def _rec(currency, rate, on=None):
    return SimpleNamespace(currency=currency, exchange_rate=rate, exchange_rate_date=on)


def test_a_transaction_in_filing_currency_figures():
    # 10000 JPY, net 9000 after a discount, CA state 6 % of 9000 = 540 JPY; at 0.0066 USD per JPY:
    # gross 6600 cents, net 5940, tax 540 x 0.66 = 356.4 -> 356.
    t = txn("J", [line("L", 10000, [row(ST, 540, 9000)], net=9000)])
    c = in_filing_currency(t, _rec("JPY", "0.0066", D), "USD")
    (ln,) = c.lines
    assert (ln.amount, ln.net_amount, ln.rows[0].taxable_base, ln.rows[0].tax_amount) == (6600, 5940, 5940, 356)
    assert (c.filing_tax_amount, c.currency, c.original_gross) == (356, "JPY", 10000)
    ret = prepare_return("US-ST-CA", *Q1, [c])
    assert (ret.totals.gross_sales, ret.totals.discounts, ret.totals.taxable_sales) == (6600, 660, 5940)
    (conv,) = ret.converted
    assert (conv.currency, conv.original_gross_sales, conv.gross_sales) == ("JPY", 10000, 6600)
    # A provided tax converts as one figure: 600 JPY -> 3.96 USD = 396 cents.
    p = in_filing_currency(txn("P", [line("L", 10000, [row(ST, 540, 9000)], net=9000)], filing=600,
                               source="provided"), _rec("JPY", "0.0066", D), "USD")
    assert (p.filing_tax_amount, p.tax_provided) == (396, 396)
    # Without a rate (stored before rates existed): held off, never counted.
    held = in_filing_currency(t, _rec("JPY", None), "USD")
    assert held.held_off_reason == "no_exchange_rate"
    assert prepare_return("US-ST-CA", *Q1, [held]).held_off[0].reason == "no_exchange_rate"
    # The same JPY sale on a return in EUR at 0.0061 EUR per JPY: gross 10000 x 0.0061 = 61.00 EUR = 6100
    # cents, tax 540 x 0.61 = 329.4 -> 329; and a transaction already in the filing currency is as it is.
    e = in_filing_currency(t, _rec("JPY", "0.0061", D), "EUR")
    assert (e.lines[0].amount, e.filing_tax_amount) == (6100, 329)
    assert in_filing_currency(t, _rec("EUR", None), "EUR") is t
    assert dated_sales_by_state([held]) == {}


def test_a_marketplace_sale_is_listed_apart_and_counted_toward_nexus_by_the_state_rule():
    own = txn("OWN", [line("L", 10000, [row(ST, 600, 10000)])], on=D)
    mkt = txn("MKT", [line("L", 20000, [row(ST, 1200, 20000)])], on=D)
    mkt = type(mkt)(**{**{f: getattr(mkt, f) for f in mkt.__dataclass_fields__}, "marketplace_facilitator": "Etsy"})
    ret = prepare_return("US-ST-CA", *Q1, [own, mkt])
    assert ret.transaction_ids == ("OWN",) and ret.totals.gross_sales == 10000 and ret.filing_tax_amount == 600
    assert ret.totals.exempt_sales == ExemptSales()
    assert ret.marketplace == (MarketplaceEntry("MKT", "Etsy", 20000, 1200),)
    rep = liability_report(*Q1, [own, mkt])
    assert rep.states[0].totals.filing_tax_amount == 600 and rep.states[0].marketplace[0].transaction_id == "MKT"
    # Nexus: counted where the state's rule counts marketplace sales (CA: yes, CO: no, per the data).
    counts = counts_marketplace(nexus_thresholds(), D)
    assert counts("CA") is True and counts("CO") is False
    sales = dated_sales_by_state([own, mkt], counts)
    assert sum(s.amount for s in sales["CA"]) == 30000 and sum(s.count for s in sales["CA"]) == 2
    sales = dated_sales_by_state([own, mkt], lambda state: False)
    assert sum(s.amount for s in sales["CA"]) == 10000
