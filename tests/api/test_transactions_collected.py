"""Collected-tax (SALES_TAX) lines on transactions (spec 4.7) through REST and gRPC on
SQLite and PostgreSQL: removal and addition to tax_amount, every line rule on create and
update, marked products and netting for quickbooks / chargebee / stripe, updating,
tax-only transactions and their stored attributions.

Figures by hand: TX without postal code = Texas 6.25% only; CA without postal code =
California 6% + statewide local 1.25% (two jurisdictions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest

from conftest import LevyServer, Tenant
from txn_helpers import D, Txn, body, error_of, line, pointers, register, tax_line, uid


@pytest.fixture(params=["rest", "grpc"])
def tx(request: pytest.FixtureRequest, server: LevyServer, channel: grpc.Channel, tenant: Tenant,
       admin_http: httpx.Client) -> Iterator[Txn]:
    register(admin_http, "TX", "CA")
    t = Txn(request.param, server, channel, tenant.key)
    yield t
    t.close()


def product(http: httpx.Client, codes: list[str]) -> str:
    r = http.post("/products", json={"source_id": f"p-{uid()}", "name": "P", "tax_codes": codes})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def preset_line(id: str, pid: str, price: int, state: str | None = "TX", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": id, "unit_price": str(price), "product": {"preset": {"id": pid}}}
    if state:
        out["customer"] = {"address": {"state": state}}
    out.update(extra)
    return out


def rules_of(errs: list[dict[str, Any]]) -> dict[str, str]:
    return {e["meta"]["line_id"]: e["meta"]["rule"] for e in errs if (e.get("meta") or {}).get("rule")}


# ------------------------------------------------------------------ create


def test_collected_lines_removed_and_added_to_tax_amount(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), tax_line("T1", 500), tax_line("T2", 30, qty="2"), tax_amount="100"))
    assert [li["id"] for li in out["line_items"]] == ["a"]
    # 100 sent + 500 + 2 x 30 = 660; provided, the calculated 625 kept.
    assert (out["tax_amount"], out["filing_tax_amount"], out["filing_tax_amount_source"]) == ("660", "660", "provided")
    assert (out["calculated_tax_amount"], out["collected_tax_amount"], out["provided_tax_amount"]) == ("625", "560", "100")
    assert tx.get(out["id"]) == out


def test_zero_collected_line_makes_tax_provided(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), tax_line("T", 0)))
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("0", "provided")


def test_transaction_discount_applies_to_goods_only(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), tax_line("T", 500), discount_amount="1000"))
    # 10000 - 1000 = 9000 x 6.25% = 562.5 -> 563; the collected line takes no share.
    assert out["calculated_tax_amount"] == "563" and out["tax_amount"] == "500"
    assert out["line_items"][0]["taxes"][0]["taxable_base"] == "9000"


def test_every_rule_named_on_create(tx: Txn) -> None:
    errs = error_of(tx.create_raw(body(
        line("a", 10000),
        line("b", 10, codes=["SALES_TAX", "GENERAL.TANGIBLE.GOODS"]),
        line("c", 10, codes=["SALES_TAX._B2B"]),
        tax_line("d", 10, discount_amount="1"),
        tax_line("e", -5),
        tax_line("a", 10),
    )))
    assert rules_of(errs) == {"b": "only_code", "c": "no_attribute_suffix", "d": "no_discount",
                              "e": "non_negative_amount", "a": "unique_id"}
    assert all(e["code"] == "validation_error" for e in errs)
    d = next(e for e in errs if e["meta"]["line_id"] == "d")
    assert "line 'd' (line_items[3])" in d["detail"] and "cannot carry a discount" in d["detail"]
    assert d["source"]["pointer"] == "/line_items/3"
    # Lower-case is an ordinary (unknown) code, not a collected line.
    errs = error_of(tx.create_raw(body(line("a", 100, codes=["sales_tax"]))))
    assert pointers(errs) == {"/line_items/0/product/tax_attributes/0"}


def test_every_rule_named_on_update(tx: Txn) -> None:
    tid = tx.create(body(line("a", 10000)))["id"]
    errs = error_of(tx.update_raw(tid, {"line_items": [line("a", 10000), tax_line("t", 10, discounts=[
        {"id": "d", "amount": "5"}]), tax_line("t", 10)]}))
    assert sorted(e["meta"]["rule"] for e in errs) == ["no_discount", "unique_id", "unique_id"]
    assert tx.get(tid)["tax_amount"] == "625"  # nothing half-written


# ------------------------------------------------------------------ marked products


def test_marked_product_lines(tx: Txn, admin_http: httpx.Client) -> None:
    marked = product(admin_http, ["SALES_TAX"])
    out = tx.create(body(line("a", 10000), preset_line("m", marked, 500, discount_amount="100",
                                                        discounts=[{"id": "x", "amount": "50"}])))
    # A marked line may carry discounts: 500 - 100 - 50 = 350 collected.
    assert [li["id"] for li in out["line_items"]] == ["a"]
    assert (out["tax_amount"], out["collected_tax_amount"]) == ("350", "350")
    # Attributes sent on the line win: an ordinary taxed line.
    own = tx.create(body(preset_line("m", marked, 10000, product={"preset": {"id": marked},
                                                                  "tax_attributes": ["GENERAL.TANGIBLE.GOODS"]})))
    assert [li["id"] for li in own["line_items"]] == ["m"] and own["tax_amount"] == "625"
    # Negative after its discounts on a non-netting source: refused, naming the line and rule.
    errs = error_of(tx.create_raw(body(line("a"), preset_line("m", marked, 100, discount_amount="150"))))
    assert rules_of(errs) == {"m": "marked_line_non_negative_after_discounts"}


def test_netting_quickbooks_chargebee(tx: Txn, admin_http: httpx.Client) -> None:
    marked = product(admin_http, ["SALES_TAX"])
    for source in ("quickbooks", "chargebee"):
        # Net of 300 and -500 is -200: no marked line kept, the document's tax lowered by 200.
        out = tx.create(body(line("a", 10000), preset_line("m1", marked, 300), preset_line("m2", marked, -500),
                             tax_amount="1000", source=source))
        assert out["source"] == source and out["tax_amount"] == "800"
        assert [li["id"] for li in out["line_items"]] == ["a"]
        # Net of 0 or more is kept as one line: 500 - 200 = 300.
        out = tx.create(body(line("a", 10000), preset_line("m1", marked, 500), preset_line("m2", marked, -200),
                             source=source))
        assert (out["tax_amount"], out["collected_tax_amount"]) == ("300", "300")
        # Only marked lines netting below 0: not recorded on these sources.
        errs = error_of(tx.create_raw(body(preset_line("m1", marked, 100), preset_line("m2", marked, -300),
                                           source=source)))
        assert errs[0]["code"] == "not_recorded" and errs[0]["meta"]["reduction"] == 200
    # Credit notes of quickbooks are netted too.
    out = tx.create(body(line("a", 1000), preset_line("m1", marked, 100), preset_line("m2", marked, -50),
                         type="credit", status="finalized", source="quickbooks"))
    assert out["tax_amount"] == "50"
    # Plain SALES_TAX lines are never netted.
    errs = error_of(tx.create_raw(body(line("a"), tax_line("t", -5), source="quickbooks")))
    assert rules_of(errs) == {"t": "non_negative_amount"}


def test_netting_stripe(tx: Txn, admin_http: httpx.Client) -> None:
    marked = product(admin_http, ["SALES_TAX"])
    out = tx.create(body(line("a", 10000), preset_line("m1", marked, 300), preset_line("m2", marked, -500),
                         tax_amount="1000", source="stripe"))
    assert out["tax_amount"] == "800"
    # Only marked lines netting below 0: stored with no line items, tax 0, held off returns.
    out = tx.create(body(preset_line("m1", marked, 100), preset_line("m2", marked, -300), source="stripe"))
    assert out["line_items"] == [] and out["tax_amount"] == "0"
    assert out["held_off_returns_reason"] == "negative_marked_only" and out["tax_only_attributions"] == []
    # Stripe credit notes are not netted: a negative marked line is refused.
    errs = error_of(tx.create_raw(body(line("a", 1000), preset_line("m1", marked, 100),
                                       preset_line("m2", marked, -50), type="credit", status="finalized",
                                       source="stripe")))
    assert rules_of(errs) == {"m2": "marked_line_non_negative_after_discounts"}


def test_marking_affects_only_later_transactions(tx: Txn, admin_http: httpx.Client) -> None:
    pid = product(admin_http, ["GENERAL.TANGIBLE.GOODS"])
    before = tx.create(body(preset_line("p", pid, 10000), line("a", 2000), status="finalized"))
    assert before["tax_amount"] == "750"  # 625 + 125
    r = admin_http.patch(f"/products/{pid}", json={"tax_codes": ["SALES_TAX"]})
    assert r.status_code == 200, r.text
    assert tx.get(before["id"]) == before  # stored transactions are not converted
    after = tx.create(body(preset_line("p", pid, 100), line("a", 2000)))
    assert [li["id"] for li in after["line_items"]] == ["a"] and after["tax_amount"] == "100"
    # A full credit of the earlier sale leaves out the line of the product marked since.
    credit = tx.create({"type": "credit", "status": "finalized", "transaction_date": D,
                        "parent_transaction_id": before["id"]})
    assert [li["id"] for li in credit["line_items"]] == ["a"] and credit["tax_amount"] == "125"


# ------------------------------------------------------------------ updating (4.7 "Updating")


def test_updating_collected_tax(tx: Txn) -> None:
    tid = tx.create(body(line("a", 10000), tax_line("T", 500), tax_amount="100"))["id"]
    # Only tax_amount: replaces the 100 sent; the collected 500 stays counted.
    out = tx.update(tid, {"tax_amount": "200"})
    assert (out["tax_amount"], out["provided_tax_amount"], out["collected_tax_amount"]) == ("700", "200", "500")
    # line_items again with a different collected line: 200 (previous tax_amount) + 300.
    out = tx.update(tid, {"line_items": [line("a", 10000), tax_line("T", 300)]})
    assert out["tax_amount"] == "500" and [li["id"] for li in out["line_items"]] == ["a"]
    # line_items plus tax_amount: 50 + 300.
    assert tx.update(tid, {"line_items": [line("a", 10000), tax_line("T", 300)], "tax_amount": "50"})[
        "tax_amount"] == "350"
    # The collected line left out is removed: 50 remains provided.
    out = tx.update(tid, {"line_items": [line("a", 10000)]})
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("50", "provided")
    # No collected line and no tax_amount left: calculated.
    out = tx.update(tid, {"tax_amount": None})
    assert (out["tax_amount"], out["filing_tax_amount_source"]) == ("625", "calculated")
    assert "collected_tax_amount" not in {k for k, v in out.items() if v}


def test_sending_back_the_response_tax_double_counts(tx: Txn) -> None:
    out = tx.create(body(line("a", 10000), tax_line("T", 500)))
    assert out["tax_amount"] == "500"
    assert tx.update(out["id"], {"tax_amount": out["tax_amount"]})["tax_amount"] == "1000"  # as the spec warns


# ------------------------------------------------------------------ tax-only transactions


def test_tax_only_sale_attributed(tx: Txn) -> None:
    out = tx.create(body(tax_line("T", 500, "TX"), status="finalized"))
    assert out["line_items"] == [] and (out["tax_amount"], out["filing_tax_amount_source"]) == ("500", "provided")
    assert out["tax_only_attributions"] == [{"jurisdiction_code": "US-ST-TX", "tax_amount": "500"}]
    assert out.get("held_off_returns_reason") in (None, "")
    assert tx.get(out["id"])["tax_only_attributions"] == out["tax_only_attributions"]


def test_tax_only_several_addresses_share_equally(tx: Txn) -> None:
    # TX reaches its state; CA reaches its state and the statewide local district: 3 jurisdictions.
    out = tx.create(body(tax_line("T1", 500, "TX"), tax_line("T2", 400, "CA"), status="finalized"))
    alloc = {a["jurisdiction_code"]: a["tax_amount"] for a in out["tax_only_attributions"]}
    assert len(alloc) == 3 and {"US-ST-TX", "US-ST-CA"} <= set(alloc)
    assert set(alloc.values()) == {"300"}
    # 1000 over 3: largest remainder, the extra cent to the first.
    out = tx.create(body(tax_line("T1", 500, "TX"), tax_line("T2", 500, "CA")))
    assert [a["tax_amount"] for a in out["tax_only_attributions"]] == ["334", "333", "333"]
    # Updating only tax_amount of a tax-only transaction re-splits over the same jurisdictions: 1000 + 200.
    out = tx.update(out["id"], {"tax_amount": "200"})
    assert [a["tax_amount"] for a in out["tax_only_attributions"]] == ["400", "400", "400"]


def test_tax_only_held_off_cases(tx: Txn) -> None:
    out = tx.create(body(tax_line("T", 500, "NY")))  # registered in TX and CA only
    assert out["held_off_returns_reason"] == "not_registered" and out["tax_only_attributions"] == []
    out = tx.create(body(tax_line("T", 500, None)))
    assert out["held_off_returns_reason"] == "line_without_address" and out["tax_amount"] == "500"
    # A credit of only collected lines that names a parent, even one matching nothing: held off.
    out = tx.create(body(tax_line("T", 500), type="credit", status="finalized",
                         parent_reference_id=f"nothing-{uid()}"))
    assert out["held_off_returns_reason"] == "credit_with_parent" and out["line_items"] == []
    # Without a parent it is a tax-only credit, attributed.
    out = tx.create(body(tax_line("T", 500), type="credit", status="finalized"))
    assert out["tax_only_attributions"] == [{"jurisdiction_code": "US-ST-TX", "tax_amount": "500"}]


def test_tax_only_sale_cannot_be_fully_credited_by_copying(tx: Txn) -> None:
    sale = tx.create(body(tax_line("T", 500), status="finalized"))
    full = {"type": "credit", "status": "finalized", "transaction_date": D, "parent_transaction_id": sale["id"]}
    errs = error_of(tx.create_raw(full))
    assert pointers(errs) == {"/line_items"} and "tax_amount" in errs[0]["detail"]
    out = tx.create({**full, "tax_amount": "500"})
    assert out["tax_amount"] == "500" and out["line_items"] == []
