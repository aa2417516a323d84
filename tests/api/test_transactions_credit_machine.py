"""Credits never exceed their sale (issue 16): a stateful property test on a real server, on SQLite
and PostgreSQL, through REST and gRPC (each step picks one).

Random sequences of: create a sale (one or two lines, in CA and/or TX, draft or finalized, with or
without a provided tax), finalize it, move it back to draft, edit its lines, void it, change its
``tax_amount``; partial credits (lines naming the sale's lines, or a line of their own) and full credits, draft or
finalized, with or without a provided tax; finalize, void, re-line and re-tax the credits. Any step
may be refused (422), never anything else. After every step, from what the API returns:

- for every sale, its credits that are not void stay within it: in its currency, in total (net
  amount, filing tax) and per line (amount and tax), and the sale stays finalized;
- credits that add up to a line's amount add up to its tax exactly (the remaining-tax rule);
- the liability report of the example's day shows no negative state total (gross, taxable,
  calculated tax, filing tax) and no negative gross, taxable or calculated tax per jurisdiction.

Each example dates its transactions on a day of its own, so reads see only that example.
Lines carry no discounts: a line's amount is its unit price (quantity 1)."""

from __future__ import annotations

import itertools
from collections import defaultdict
from datetime import date, timedelta
from typing import Any

import grpc
import httpx
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, multiple, rule, run_state_machine_as_test

from levyserver import LevyServer, Tenant
from txn_api import Txn, line, register

FIRST_DAY = date(2021, 1, 1)
SALE_STATES = ("finalized", "finalized", "draft", "void")
CREDIT_STATES = ("finalized", "draft", "void")

via = st.sampled_from(["rest", "grpc"])
# Mostly no provided tax (calculated), sometimes one (often below what the lines would calculate).
taxes = st.one_of(st.none(), st.none(), st.none(), st.integers(0, 2500))
sale_lines = st.lists(st.tuples(st.integers(1, 20000), st.sampled_from(["CA", "TX"])), min_size=1, max_size=2)
credit_parts = st.lists(st.tuples(st.sampled_from(["a", "a", "b"]), st.integers(1, 8000)), min_size=1, max_size=2,
                        unique_by=lambda p: p[0])


def amount(li: dict[str, Any]) -> int:
    return int(li["unit_price"])


class CreditMachine(RuleBasedStateMachine):
    """Configured by :func:`test_credits_never_exceed_their_sale` (callers and the admin client)."""

    callers: dict[str, Txn] = {}
    admin: httpx.Client
    days = itertools.count()

    sales = Bundle("sales")
    credits = Bundle("credits")

    def __init__(self) -> None:
        super().__init__()
        self.day = FIRST_DAY + timedelta(days=next(self.days))
        self.when = f"{self.day.isoformat()}T12:00:00Z"
        self.sale_states: dict[str, str] = {}  # sale id -> state of each line, by line id

    # -- calls ------------------------------------------------------------------------------------

    def create(self, transport: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, out = self.callers[transport].create_raw({**body, "transaction_date": self.when})
        assert status in (200, 422), out
        return status, out

    def update(self, transport: str, tid: str, body: dict[str, Any]) -> int:
        status, out = self.callers[transport].update_raw(tid, body)
        assert status in (200, 422), out
        return status

    def lines(self, parts: list[tuple[int, str]]) -> list[dict[str, Any]]:
        return [line(lid, price, state) for lid, (price, state) in zip("ab", parts)]

    def credit_lines(self, sale: str, parts: list[tuple[str, int]]) -> list[dict[str, Any]]:
        # The address is the sale line's when it has one (the tax follows the sale's line anyway).
        return [line(lid, price, self.sale_states.get(sale, {}).get(lid, "CA")) for lid, price in parts]

    # -- sales ------------------------------------------------------------------------------------

    @rule(target=sales, parts=sale_lines, status=st.sampled_from(["draft", "finalized", "finalized"]), tax=taxes,
          t=via)
    def create_sale(self, parts: list[tuple[int, str]], status: str, tax: int | None, t: str) -> str:
        body: dict[str, Any] = {"type": "sale", "status": status, "line_items": self.lines(parts)}
        if tax is not None:
            body["tax_amount"] = str(tax)
        code, out = self.create(t, body)
        assert code == 200, out
        self.sale_states[out["id"]] = {lid: state for lid, (_, state) in zip("ab", parts)}
        return str(out["id"])

    @rule(sale=sales, status=st.sampled_from(SALE_STATES), t=via)
    def move_sale(self, sale: str, status: str, t: str) -> None:
        self.update(t, sale, {"status": status})

    @rule(sale=sales, parts=sale_lines, finalize=st.booleans(), t=via)
    def edit_sale_lines(self, sale: str, parts: list[tuple[int, str]], finalize: bool, t: str) -> None:
        body: dict[str, Any] = {"line_items": self.lines(parts)}
        if finalize:
            body["status"] = "finalized"
        if self.update(t, sale, body) == 200:
            self.sale_states[sale] = {lid: state for lid, (_, state) in zip("ab", parts)}

    @rule(sale=sales, tax=taxes, t=via)
    def set_sale_tax(self, sale: str, tax: int | None, t: str) -> None:
        self.update(t, sale, {"tax_amount": None if tax is None else str(tax)})

    # -- credits ----------------------------------------------------------------------------------

    @rule(target=credits, sale=sales, parts=credit_parts, status=st.sampled_from(["draft", "finalized"]),
          tax=taxes, t=via)
    def partial_credit(self, sale: str, parts: list[tuple[str, int]], status: str, tax: int | None, t: str) -> Any:
        body: dict[str, Any] = {"type": "credit", "status": status, "parent_transaction_id": sale,
                                "line_items": self.credit_lines(sale, parts)}
        if tax is not None:
            body["tax_amount"] = str(tax)
        code, out = self.create(t, body)
        return str(out["id"]) if code == 200 else multiple()

    @rule(target=credits, sale=sales, lid=st.sampled_from(["a", "b"]), t=via)
    def credit_the_rest_of_a_line(self, sale: str, lid: str, t: str) -> Any:
        """A finalized credit of exactly what remains of one line's amount (the completing credit)."""
        txns = self.transactions()
        sale_line = next((li for s in txns if s["id"] == sale for li in s["line_items"] if li["id"] == lid), None)
        if sale_line is None:
            return multiple()
        credited = sum(amount(li) for c in txns if c.get("parent_transaction_id") == sale and c["status"] != "void"
                       for li in c["line_items"] if li["id"] == lid)
        left = amount(sale_line) - credited
        if left <= 0:
            return multiple()
        code, out = self.create(t, {"type": "credit", "status": "finalized", "parent_transaction_id": sale,
                                    "line_items": self.credit_lines(sale, [(lid, left)])})
        return str(out["id"]) if code == 200 else multiple()

    @rule(target=credits, sale=sales, status=st.sampled_from(["draft", "finalized"]), tax=taxes, t=via)
    def full_credit(self, sale: str, status: str, tax: int | None, t: str) -> Any:
        body: dict[str, Any] = {"type": "credit", "status": status, "parent_transaction_id": sale}
        if tax is not None:
            body["tax_amount"] = str(tax)
        code, out = self.create(t, body)
        return str(out["id"]) if code == 200 else multiple()

    @rule(credit=credits, status=st.sampled_from(CREDIT_STATES), t=via)
    def move_credit(self, credit: str, status: str, t: str) -> None:
        self.update(t, credit, {"status": status})

    @rule(credit=credits, parts=credit_parts, t=via)
    def edit_credit_lines(self, credit: str, parts: list[tuple[str, int]], t: str) -> None:
        parent = self.callers["rest"].get(credit)["parent_transaction_id"]
        self.update(t, credit, {"line_items": self.credit_lines(parent, parts)})

    @rule(credit=credits, tax=taxes, t=via)
    def set_credit_tax(self, credit: str, tax: int | None, t: str) -> None:
        self.update(t, credit, {"tax_amount": None if tax is None else str(tax)})

    # -- what must hold after every step ----------------------------------------------------------

    def transactions(self) -> list[dict[str, Any]]:
        r = self.admin.get("/transactions", params={
            "transaction_date_from": self.day.isoformat(),
            "transaction_date_to": (self.day + timedelta(days=1)).isoformat(), "limit": 1000})
        assert r.status_code == 200, r.text
        assert r.json()["has_more"] is False
        return list(r.json()["data"])

    @invariant()
    def credits_stay_within_their_sales(self) -> None:
        txns = self.transactions()
        sales = {t["id"]: t for t in txns if t["type"] == "sale"}
        standing: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for t in txns:
            if t["type"] == "credit" and t["status"] != "void":
                standing[t["parent_transaction_id"]].append(t)
        for sale_id, credits in standing.items():
            sale = sales[sale_id]
            ids = [c["id"] for c in credits]
            assert sale["status"] in ("finalized", "filed"), (sale["status"], ids)
            assert {c["currency"] for c in credits} == {sale["currency"]}
            assert sum(amount(li) for c in credits for li in c["line_items"]) <= sum(
                amount(li) for li in sale["line_items"]), ids
            assert sum(int(c["filing_tax_amount"]) for c in credits) <= int(sale["filing_tax_amount"]), ids
            sale_lines_by_id = {li["id"]: li for li in sale["line_items"]}
            for lid, sale_line in sale_lines_by_id.items():
                mine = [li for c in credits for li in c["line_items"] if li["id"] == lid]
                credited, tax = sum(amount(li) for li in mine), sum(int(li["tax_amount"]) for li in mine)
                assert credited <= amount(sale_line) and tax <= int(sale_line["tax_amount"]), (lid, ids)
                if mine and credited == amount(sale_line):
                    assert tax == int(sale_line["tax_amount"]), (lid, ids)

    @invariant()
    def liability_report_never_negative(self) -> None:
        r = self.admin.get("/reports/liability", params={"from": self.day.isoformat(), "to": self.day.isoformat()})
        assert r.status_code == 200, r.text
        report = r.json()
        for total in report["state_totals"]:
            for field in ("gross_sales", "taxable_sales", "tax_calculated", "filing_tax_amount"):
                assert int(total[field]) >= 0, (total["jurisdiction"], field, total)
        for row in report["jurisdictions"]:
            for field in ("gross_sales", "taxable_sales", "tax_calculated"):
                assert int(row[field]) >= 0, (row["jurisdiction"], field, row)


def test_credits_never_exceed_their_sale(server: LevyServer, channel: grpc.Channel, tenant: Tenant,
                                         admin_http: httpx.Client) -> None:
    register(admin_http, "TX", "CA")
    callers = {t: Txn(t, server, channel, tenant.key) for t in ("rest", "grpc")}
    CreditMachine.callers, CreditMachine.admin = callers, admin_http
    try:
        run_state_machine_as_test(CreditMachine, settings=settings(
            max_examples=15, stateful_step_count=35, deadline=None, database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ))
    finally:
        for c in callers.values():
            c.close()
