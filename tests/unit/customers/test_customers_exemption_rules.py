"""Pure rules: certificate validation, the exemption snapshot's choice, merge
checks, batch outcomes and PATCH merging."""

from __future__ import annotations

from datetime import date, datetime, timezone
from functools import partial

import pytest

from levy.domain import customers
from levy.domain.customers import BatchItem, CustomerRecord, decide, fail_duplicates, merge_values
from levy.domain.errors import FailedPrecondition, ValidationFailed
from levy.domain.exemptions import Certificate, check_merge, covering_certificates, validate_certificate
from levy.store.reference_data import customer_sources

check_patch = partial(customers.check_patch, sources=customer_sources())

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
TODAY = date(2026, 6, 1)


def cert(cid: str, j: str = "US-ST-CA", status: str = "valid", starts: date | None = None,
         expires: date | None = None) -> Certificate:
    return Certificate(cid, "cust_1", j, "resale", status, starts, expires, NOW, NOW)


def rec(**kw: object) -> CustomerRecord:
    base: dict[str, object] = dict(
        id="cust_1", source="native", source_account_id="__default__", source_id="a", name="n", email=None,
        merged_into_customer_id=None, source_updated_at=None, created_at=NOW, updated_at=NOW, deleted_at=None,
        override_exempt=False, override_resale=False, override_manufacturing=False, exemption_updated_at=None,
    )
    base.update(kw)
    return CustomerRecord(**base)  # type: ignore[arg-type]


def test_snapshot_keeps_current_valid_and_picks_latest_expiry_then_newest_id() -> None:
    rows = covering_certificates([
        cert("cexc_1", expires=date(2026, 12, 31)),
        cert("cexc_2", expires=date(2027, 12, 31)),
        cert("cexc_3", expires=date(2027, 12, 31)),  # same expiry, newer id wins
        cert("cexc_4", status="in_review"),
        cert("cexc_5", j="US-ST-NY", starts=date(2026, 6, 2)),
        cert("cexc_6", j="US-ST-NY", expires=date(2026, 5, 31)),
        cert("cexc_7", j="US-ST-AL", starts=TODAY, expires=TODAY),
        cert("cexc_8", j="US-ST-TX", status="renewed"),
    ], TODAY)
    assert [(c.jurisdiction, c.id) for c in rows] == [("US-ST-AL", "cexc_7"), ("US-ST-CA", "cexc_3")]
    assert covering_certificates([cert("cexc_1", expires=date(2099, 1, 1)), cert("cexc_0")], TODAY)[0].id == "cexc_0"


@pytest.mark.parametrize("code", ["US-ST-CA", "us-st-dc", " US-ST-WY ", "US-ST-PR"])
def test_state_jurisdictions_are_accepted(code: str) -> None:
    f = validate_certificate({"jurisdiction": code, "exemption_type": "other"}, create=True)
    assert f.jurisdiction == code.strip().upper()


@pytest.mark.parametrize("code", ["US-ST-GU", "US-CO-CA", "CA-ST-ON", "USSTCA", "US-ST-"])
def test_other_jurisdictions_are_refused(code: str) -> None:
    with pytest.raises(ValidationFailed) as e:
        validate_certificate({"jurisdiction": code, "exemption_type": "other"}, create=True)
    assert e.value.first.pointer == "/jurisdiction"


def test_update_checks_dates_against_the_stored_certificate() -> None:
    stored = cert("cexc_1", starts=date(2026, 3, 1), expires=date(2026, 9, 1))
    with pytest.raises(ValidationFailed):
        validate_certificate({"expires_at": "2026-02-01"}, create=False, current=stored)
    assert validate_certificate({"expires_at": "2026-03-01"}, create=False, current=stored).expires_at == date(2026, 3, 1)


def test_merge_rules() -> None:
    check_merge("a", "b", None, None, False)
    for args, fragment in [(("a", "a", None, None, False), "itself"), (("a", "b", "c", None, False), "already"),
                           (("a", "b", None, None, True), "deleted"), (("a", "b", None, "c", False), "itself merged")]:
        with pytest.raises(FailedPrecondition) as e:
            check_merge(*args)  # type: ignore[arg-type]
        assert fragment in e.value.detail


def test_batch_decisions() -> None:
    values = {"source": "native", "source_account_id": "__default__", "source_id": "a", "name": None,
              "email": "x@y.co", "source_updated_at": datetime(2026, 2, 1, tzinfo=timezone.utc)}
    item = BatchItem(0, values, [])
    assert decide(item, None) == values and item.status == "created"
    assert decide(item, rec(deleted_at=NOW)) is None and item.status == "deleted"
    assert decide(item, rec(source_updated_at=datetime(2026, 3, 1, tzinfo=timezone.utc))) is None
    assert item.status == "stale"
    written = decide(item, rec())
    assert item.status == "updated" and written is not None and (written["name"], written["email"]) == ("n", "x@y.co")
    same = BatchItem(1, {**values, "email": None, "source_updated_at": None}, [])
    assert decide(same, rec()) is None and same.status == "updated"


def test_duplicate_triples_fail_every_copy() -> None:
    v = {"source": "native", "source_account_id": "__default__", "source_id": "a"}
    items = [BatchItem(0, dict(v), []), BatchItem(1, {**v, "source_id": "b"}, []), BatchItem(2, dict(v), [])]
    fail_duplicates(items)
    assert [it.values is None for it in items] == [True, False, True]
    assert items[0].errors[0].pointer == "/data/0/source_id" and items[0].errors[0].code == "duplicate_in_request"


def test_patch_merging_and_checks() -> None:
    assert merge_values({"name": "a", "email": "e"}, {"name": None, "email": "f"})["name"] == "a"
    with pytest.raises(ValidationFailed) as e:
        check_patch(rec(), {"source": "quickbooks"})
    assert e.value.first.pointer == "/source_account_id"
    with pytest.raises(ValidationFailed) as e:
        check_patch(rec(source_updated_at=NOW), {"source_updated_at": datetime(2025, 1, 1, tzinfo=timezone.utc)})
    assert e.value.first.code == "source_updated_at_older"
