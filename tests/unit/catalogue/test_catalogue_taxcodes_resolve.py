"""Composition rules of tax codes and attributes (spec 2.4, 4.7)."""

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.catalogue import ResolvedTaxCode
from levy.store.reference_data import catalogue as load_catalogue

P = "/line_items/2/product/tax_attributes"


@pytest.fixture(scope="module")
def cat():
    return load_catalogue()


def refused(cat, codes, **kw):
    with pytest.raises(ValidationFailed) as ei:
        cat.resolve(codes, P, **kw)
    return [(i.pointer, i.detail) for i in ei.value.items]


# -- accepted ---------------------------------------------------------------

def test_empty_list(cat):
    assert cat.resolve([], P) == ResolvedTaxCode(None, (), False)


def test_plain_path(cat):
    r = cat.resolve(["SOFTWARE.SAAS.GENERAL"], P)
    assert r == ResolvedTaxCode("SOFTWARE.SAAS.GENERAL", (), False)
    assert r.full_code == "SOFTWARE.SAAS.GENERAL"


def test_path_with_chained_attributes(cat):
    r = cat.resolve(["SOFTWARE.DOWNLOADED.PREWRITTEN._DOWNLOADED._B2B"], P)
    assert r.category == "SOFTWARE.DOWNLOADED.PREWRITTEN"
    assert r.attributes == ("_DOWNLOADED", "_B2B")
    assert r.full_code == "SOFTWARE.DOWNLOADED.PREWRITTEN._DOWNLOADED._B2B"


def test_bare_attributes_join_the_path_given_elsewhere(cat):
    r = cat.resolve(["_B2B", "SOFTWARE.SAAS.GENERAL", "_SUBSCRIPTION"], P)
    assert r.full_code == "SOFTWARE.SAAS.GENERAL._B2B._SUBSCRIPTION"


def test_bare_attribute_uses_default_category(cat):
    r = cat.resolve(["_RESALE"], P, default_category="GENERAL.TANGIBLE.GOODS")
    assert r == ResolvedTaxCode("GENERAL.TANGIBLE.GOODS", ("_RESALE",), False)


def test_universal_bare_attribute_without_any_category(cat):
    assert cat.resolve(["_RESALE"], P) == ResolvedTaxCode(None, ("_RESALE",), False)
    assert cat.resolve(["_RESALE"], P).full_code == "_RESALE"


def test_chained_bare_attributes(cat):
    r = cat.resolve(["_B2B._RESALE"], P, default_category="FOOD.GROCERY.GENERAL")
    assert r.attributes == ("_B2B", "_RESALE")


def test_non_exclusive_group_allows_two(cat):
    # _RESALE and _GOVERNMENT share the non-exclusive "exemption" group
    r = cat.resolve(["GENERAL.TANGIBLE.GOODS._RESALE._GOVERNMENT"], P)
    assert r.attributes == ("_RESALE", "_GOVERNMENT")


def test_sales_tax_alone(cat):
    r = cat.resolve(["SALES_TAX"], P)
    assert r == ResolvedTaxCode("SALES_TAX", (), True)
    assert r.full_code == "SALES_TAX"


# -- refused ----------------------------------------------------------------

def test_unknown_path(cat):
    errs = refused(cat, ["SOFTWARE.SAAS.NOPE"])
    assert errs[0][0] == f"{P}/0" and "unknown tax code 'SOFTWARE.SAAS.NOPE'" in errs[0][1]


def test_prefix_is_not_a_code(cat):
    errs = refused(cat, ["SOFTWARE.SAAS"])
    assert errs == [(f"{P}/0", errs[0][1])] and "leaf" in errs[0][1]


def test_case_sensitive_path(cat):
    errs = refused(cat, ["software.saas.general"])
    assert errs[0][0] == f"{P}/0" and "case-sensitive" in errs[0][1]


def test_two_category_paths(cat):
    errs = refused(cat, ["SOFTWARE.SAAS.GENERAL", "_B2B", "DIGITAL.EBOOKS.GENERAL"])
    assert len(errs) == 1
    assert errs[0][0] == f"{P}/2" and "more than one category path" in errs[0][1]


def test_unknown_attribute(cat):
    errs = refused(cat, ["SOFTWARE.SAAS.GENERAL._NOPE"])
    assert errs == [(f"{P}/0", "unknown attribute '_NOPE'")]


def test_case_sensitive_attribute(cat):
    errs = refused(cat, ["SOFTWARE.SAAS.GENERAL", "_b2b"])
    assert errs[0][0] == f"{P}/1" and "case-sensitive" in errs[0][1]


def test_attribute_not_applying_to_category(cat):
    errs = refused(cat, ["FOOD.GROCERY.GENERAL._DOWNLOADED"])
    assert errs[0][0] == f"{P}/0"
    assert "'_DOWNLOADED' does not apply to 'FOOD.GROCERY.GENERAL'" in errs[0][1]


def test_attribute_not_applying_to_default_category(cat):
    errs = refused(cat, ["_MANDATORY"], default_category="GENERAL.TANGIBLE.GOODS")
    assert errs[0][0] == f"{P}/0" and "does not apply" in errs[0][1]


def test_restricted_attribute_without_any_category(cat):
    errs = refused(cat, ["_DOWNLOADED"])
    assert errs[0][0] == f"{P}/0" and "no category path" in errs[0][1]


def test_exclusive_group_conflict(cat):
    errs = refused(cat, ["DIGITAL.VIDEO.MOVIES._PERMANENT_USE", "_LIMITED_USE"])
    assert errs[0][0] == f"{P}/1" and "use_duration" in errs[0][1]


def test_exclusive_buyer_group(cat):
    errs = refused(cat, ["GENERAL.TANGIBLE.GOODS._B2B._PERSONAL_USE"])
    assert errs[0][0] == f"{P}/0" and "'buyer'" in errs[0][1]


def test_duplicate_attribute(cat):
    errs = refused(cat, ["GENERAL.TANGIBLE.GOODS._B2B", "_B2B"])
    assert errs[0][0] == f"{P}/1" and "duplicate attribute '_B2B'" in errs[0][1]


def test_attribute_before_path(cat):
    errs = refused(cat, ["_B2B.SOFTWARE.SAAS.GENERAL"])
    assert errs[0][0] == f"{P}/0" and "trail" in errs[0][1]


def test_attribute_inside_path(cat):
    errs = refused(cat, ["SOFTWARE._B2B.SAAS.GENERAL"])
    assert errs[0][0] == f"{P}/0" and "trail" in errs[0][1]


@pytest.mark.parametrize("code", ["", "SOFTWARE..SAAS", "SOFTWARE.SAAS.GENERAL."])
def test_malformed(cat, code):
    errs = refused(cat, [code])
    assert errs[0][0] == f"{P}/0" and "malformed" in errs[0][1]


def test_not_a_string(cat):
    errs = refused(cat, [42])
    assert errs[0][0] == f"{P}/0" and "string" in errs[0][1]


def test_sales_tax_lowercase_unknown(cat):
    errs = refused(cat, ["sales_tax"])
    assert errs[0][0] == f"{P}/0" and "case-sensitive" in errs[0][1]


def test_sales_tax_with_suffix(cat):
    errs = refused(cat, ["SALES_TAX._B2B"])
    assert errs[0][0] == f"{P}/0" and "never takes attributes" in errs[0][1]


def test_sales_tax_not_alone(cat):
    errs = refused(cat, ["GENERAL.TANGIBLE.GOODS", "SALES_TAX"])
    assert errs == [(f"{P}/1", errs[0][1])] and "only tax code" in errs[0][1]
    errs = refused(cat, ["SALES_TAX", "_B2B"])
    assert errs[0][0] == f"{P}/0" and "only tax code" in errs[0][1]


def test_sales_tax_refused_as_default(cat):
    errs = refused(cat, ["SALES_TAX"], allow_sales_tax=False)
    assert errs[0][0] == f"{P}/0" and "organization default" in errs[0][1]


def test_all_violations_collected_in_order(cat):
    errs = refused(
        cat,
        ["_NOPE", "FOOD.GROCERY.GENERAL._DOWNLOADED", "nope.nope.nope", "_B2B", "_B2B"],
    )
    assert [p for p, _ in errs] == [f"{P}/0", f"{P}/1", f"{P}/2", f"{P}/4"]


def test_many_raises_single_validation_failed_with_422(cat):
    with pytest.raises(ValidationFailed) as ei:
        cat.resolve(["X.Y.Z", "A.B.C"], "/tax_codes")
    assert ei.value.status == 422
    assert [i.pointer for i in ei.value.items] == ["/tax_codes/0", "/tax_codes/1"]


def test_bad_default_category_is_a_programming_error(cat):
    with pytest.raises(ValueError):
        cat.resolve(["_B2B"], P, default_category="NOT.A.CODE")
