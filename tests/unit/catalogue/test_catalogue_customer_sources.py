"""Customer sources and field limits (spec 2.1, 4.1, 4.2, 4.7 rule 3, 8)."""

import json
import re
from functools import partial
from pathlib import Path

import pytest

import levy
from levy.domain import customers
from levy.domain.errors import RequiredField, ValidationFailed
from levy.store.reference_data import customer_sources

# The reference data, read once and passed in as the application does.
DATA = customer_sources()
SOURCES = tuple(DATA)
get_source = DATA.get
validate_customer_fields = partial(customers.validate_customer_fields, sources=DATA)
validate_source = partial(customers.validate_source, sources=DATA)
validate_source_account = partial(customers.validate_source_account, sources=DATA)

PER_ACCOUNT = ["quickbooks", "netsuite", "chargebee", "recurly", "bigcommerce", "woocommerce"]
DEFAULT_ONLY = ["native", "xero", "zuora", "shopify", "stripe", "paypal"]


# -- the data file ------------------------------------------------------------

def test_native_plus_eleven_lowercase_sources():
    assert len(SOURCES) == 12
    assert SOURCES[0] == "native"
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", s) for s in SOURCES)
    assert sorted(PER_ACCOUNT + DEFAULT_ONLY) == sorted(SOURCES)


def test_every_source_documented():
    doc = json.loads((Path(levy.__file__).parent / "data" / "customer_sources.json").read_text())
    assert doc["version"] and doc["effective_from"] and doc["source"]
    kinds = set()
    for e in doc["sources"]:
        assert e["platform"] and e["rationale"] and e["account_id_description"]
        kinds.add(e["kind"])
        if e["per_account"]:
            assert e["account_id_name"]
    assert kinds == {"native", "accounting", "billing", "commerce", "payments"}
    assert [e["source"] for e in doc["sources"] if e["per_account"]] == PER_ACCOUNT


def test_exactly_three_sources_net_marked_lines_one_payments_without_credit_notes():
    netting = [get_source(s) for s in SOURCES if get_source(s).nets_marked_lines]
    assert len(netting) == 3
    no_cn = [s for s in netting if not s.nets_credit_notes]
    assert len(no_cn) == 1 and no_cn[0].kind == "payments"
    assert not any(get_source(s).nets_credit_notes for s in SOURCES if not get_source(s).nets_marked_lines)


# -- validate_source ----------------------------------------------------------

@pytest.mark.parametrize("source", ["native", "quickbooks", "stripe"])
def test_known_source(source):
    assert validate_source(source, "/source") == source


@pytest.mark.parametrize("source", ["QuickBooks", "unknown", "", None, 3])
def test_unknown_source(source):
    with pytest.raises(ValidationFailed) as ei:
        validate_source(source, "/data/1/source")
    assert ei.value.first.pointer == "/data/1/source"
    assert "native" in ei.value.first.detail and "quickbooks" in ei.value.first.detail


# -- validate_source_account --------------------------------------------------

def test_quickbooks_needs_realm_id():
    with pytest.raises(ValidationFailed) as ei:
        validate_source_account("quickbooks", "__default__", "/source_account_id")
    assert ei.value.first.detail == (
        "source 'quickbooks' keeps customers per company: source_account_id must be the QuickBooks realm ID, "
        "not '__default__'"
    )
    assert ei.value.first.pointer == "/source_account_id"
    assert ei.value.status == 422


@pytest.mark.parametrize("source", PER_ACCOUNT)
def test_per_account_sources_refuse_default_and_omitted(source):
    for value in ("__default__", None, "  "):
        with pytest.raises(ValidationFailed) as ei:
            validate_source_account(source, value, "/p")
        assert f"source '{source}' keeps customers per" in ei.value.first.detail
        assert get_source(source).account_id_name in ei.value.first.detail


@pytest.mark.parametrize("source", PER_ACCOUNT)
def test_per_account_sources_accept_real_id(source):
    assert validate_source_account(source, "acct-123", "/p") == "acct-123"


@pytest.mark.parametrize("source", DEFAULT_ONLY)
def test_default_sources_refuse_real_id(source):
    with pytest.raises(ValidationFailed) as ei:
        validate_source_account(source, "acct_123", "/p")
    assert ei.value.first.detail == (
        f"source '{source}' does not keep customers per account: source_account_id must be "
        "'__default__' (or omitted), not 'acct_123'"
    )


@pytest.mark.parametrize("source", DEFAULT_ONLY)
def test_default_sources_accept_default_or_omitted(source):
    assert validate_source_account(source, "__default__", "/p") == "__default__"
    assert validate_source_account(source, None, "/p") == "__default__"


# -- validate_customer_fields -------------------------------------------------

def _err(data, prefix="/data/0", **kw):
    with pytest.raises(ValidationFailed) as ei:
        validate_customer_fields(data, prefix, **kw)
    return ei.value


def test_minimal_customer_gets_defaults():
    out = validate_customer_fields({"source_id": "c1"}, "")
    assert out == {"source_id": "c1", "source": "native", "source_account_id": "__default__"}


def test_full_valid_customer():
    data = {
        "source_id": "42",
        "source": "quickbooks",
        "source_account_id": "9130346922181234",
        "name": "Ada",
        "email": "ada@example.com",
        "source_updated_at": "2025-04-15T12:00:00Z",
    }
    assert validate_customer_fields(data, "") == data


def test_missing_source_id_is_required_field():
    e = _err({"name": "x"})
    assert isinstance(e, RequiredField)
    assert e.first.code == "validation_required_field"
    assert e.first.title == "Missing source_id"
    assert e.first.pointer == "/data/0/source_id"


def test_null_source_id_is_required_field():
    assert isinstance(_err({"source_id": None}), RequiredField)


def test_blank_source_id():
    e = _err({"source_id": "   "})
    assert not isinstance(e, RequiredField)
    assert e.first.code == "validation_error" and "blank" in e.first.detail


@pytest.mark.parametrize(
    ("field", "limit"), [("source_id", 255), ("name", 500)]
)
def test_length_limits(field, limit):
    base = {"source_id": "c1"}
    ok = dict(base, **{field: "x" * limit})
    validate_customer_fields(ok, "")
    e = _err(dict(base, **{field: "x" * (limit + 1)}), prefix="")
    assert e.first.pointer == f"/{field}"
    assert f"{limit + 1} characters, the maximum is {limit}" in e.first.detail


def test_source_account_id_length_limit():
    validate_customer_fields({"source_id": "c", "source": "netsuite", "source_account_id": "9" * 255}, "")
    e = _err({"source_id": "c", "source": "netsuite", "source_account_id": "9" * 256})
    assert e.first.pointer == "/data/0/source_account_id" and "maximum is 255" in e.first.detail


def test_email_limit_320():
    local = "a" * 64
    domain = ("b" * 63 + ".") * 4
    email = f"{local}@{domain}com"[:316] + ".com"
    assert len(email) == 320
    validate_customer_fields({"source_id": "c", "email": email}, "")
    e = _err({"source_id": "c", "email": "x" + email})
    assert "maximum is 320" in e.first.detail


def test_email_null_allowed():
    validate_customer_fields({"source_id": "c", "email": None, "name": None}, "")


@pytest.mark.parametrize("email", ["plain", "a@b", "a b@c.com", "a@@b.com", "@b.com", "a@b.", "a@.com"])
def test_email_shape(email):
    e = _err({"source_id": "c", "email": email})
    assert e.first.pointer == "/data/0/email"


def test_wrong_account_form_via_fields():
    e = _err({"source_id": "c", "source": "quickbooks"})
    assert e.first.pointer == "/data/0/source_account_id"
    assert "realm ID" in e.first.detail


def test_unknown_property_refused():
    e = _err({"source_id": "c", "phone": "1"})
    assert e.first.pointer == "/data/0/phone"


def test_bad_source_updated_at():
    e = _err({"source_id": "c", "source_updated_at": "yesterday"})
    assert e.first.pointer == "/data/0/source_updated_at"
    e = _err({"source_id": "c", "source_updated_at": "2025-04-15T12:00:00"})  # no zone
    assert e.first.pointer == "/data/0/source_updated_at"


def test_non_string_types():
    e = _err({"source_id": 5, "name": 7})
    assert [i.pointer for i in e.items] == ["/data/0/source_id", "/data/0/name"]


def test_all_problems_collected():
    e = _err({"source": "bogus", "name": "n" * 501, "email": "nope", "extra": 1})
    pointers = sorted(i.pointer for i in e.items)
    assert pointers == sorted(
        ["/data/0/extra", "/data/0/source_id", "/data/0/source", "/data/0/name", "/data/0/email"]
    )
    codes = {i.pointer: i.code for i in e.items}
    assert codes["/data/0/source_id"] == "validation_required_field"


def test_partial_patch_without_source_id():
    assert validate_customer_fields({"name": "New"}, "", partial=True) == {"name": "New"}
    e = _err({"source_id": ""}, partial=True)
    assert "blank" in e.first.detail
