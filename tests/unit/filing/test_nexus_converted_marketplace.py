"""Issue 37 in the nexus domain: the transactions in another currency each state's report lists,
and the marketplace rule of the nexus data as its primary sources say. Figures worked by hand."""

from __future__ import annotations

from datetime import date
from functools import partial
from types import SimpleNamespace

from filing_helpers import ST, line, row, txn

from levy.domain import nexus, nexus_report as report
from levy.domain.nexus_report import (
    converted_by_state,
    nexus_report,
)
from levy.domain.transactions.records import in_filing_currency
from levy.store.reference_data import nexus_thresholds

threshold_for = partial(nexus.threshold_for, nexus_thresholds())
counts_marketplace = partial(report.counts_marketplace, nexus_thresholds())

AS_OF = date(2026, 3, 31)


def _in(currency: str, rate: str, t):
    return in_filing_currency(t, SimpleNamespace(currency=currency, exchange_rate=rate,
                                                 exchange_rate_date=t.transaction_date), "USD")


def test_each_state_lists_the_converted_transactions_of_its_period():
    # 10000 JPY at 0.0066: 6600 cents; 100.00 EUR at 1.1 in 2024 (before CA's periods 2025 and 2026): not listed.
    jpy = _in("JPY", "0.0066", txn("J", [line("L", 10000, [row(ST, 600, 10000)])], on=date(2026, 2, 1)))
    old = _in("EUR", "1.1", txn("E", [line("L", 10000, [row(ST, 600, 10000)])], on=date(2024, 6, 1)))
    usd = txn("U", [line("L", 5000, [row(ST, 300, 5000)])], on=date(2026, 2, 2))
    txns = [jpy, old, usd]
    conv = converted_by_state(txns)
    assert [(on, c.transaction_id) for on, c in conv["CA"]] == [(date(2026, 2, 1), "J"), (date(2024, 6, 1), "E")]
    sales = {"CA": []}  # the amounts do not matter to the list
    (ca,) = [r for r in nexus_report(AS_OF, sales, set(), nexus.thresholds_in_force(nexus_thresholds(), AS_OF),
                                          converted=conv) if r.state == "CA"]
    (c,) = ca.converted
    assert (c.transaction_id, c.currency, c.original_gross_sales, c.gross_sales) == ("J", "JPY", 10000, 6600)
    # A marketplace sale in a state that does not count them is not listed either.
    mkt = type(jpy)(**{**{f: getattr(jpy, f) for f in jpy.__dataclass_fields__}, "marketplace_facilitator": "Etsy"})
    assert converted_by_state([mkt], lambda state: False) == {}


def test_marketplace_rule_from_primary_sources():
    # Cal. Rev. & Tax. Code 6044(b): a marketplace seller includes its sales through a facilitator.
    ca = threshold_for("CA", AS_OF)
    assert ca.counts_marketplace_sales is True and "6044" in ca.marketplace_source
    # Colorado DOR, multichannel sellers: marketplace sales are not included in the $100,000.
    co = threshold_for("CO", AS_OF)
    assert co.counts_marketplace_sales is False and "colorado.gov" in co.marketplace_source
    # The other primary-sourced rows: WA and NC count them (DOR pages); AZ (R15-5-2009(D)) and FL (12A-1.103) do not.
    assert [threshold_for(s, AS_OF).counts_marketplace_sales for s in ("WA", "NC", "AZ", "FL")] == [
        True, True, False, False]
    # Michigan's Treasury FAQ and Missouri's DOR FAQ count them; 36 M.R.S. 1951-C(3)(A) has Maine's seller exclude them.
    assert [(threshold_for(s, AS_OF).counts_marketplace_sales, host in threshold_for(s, AS_OF).marketplace_source)
            for s, host in (("MI", "michigan.gov"), ("MO", "dor.mo.gov"), ("ME", "1951-C"))] == [
        (True, True), (True, True), (False, True)]
    counts = counts_marketplace(AS_OF)
    # Unconfirmed (null) states count marketplace sales, so that a threshold is never missed.
    assert threshold_for("GA", AS_OF).counts_marketplace_sales is None
    assert (counts("CA"), counts("WA"), counts("CO"), counts("GA")) == (True, True, False, True)
