"""Keyset paging of the reference lists (spec 4.4)."""

import pytest

from levy.domain.errors import ValidationFailed
from levy.domain.catalogue import AttributeGroup, Catalogue, ProductAttribute, TaxCode
from levy.store.reference_data import catalogue as load_catalogue

G_BUYER = AttributeGroup("buyer", "Buyer", True)
G_MISC = AttributeGroup("misc", "Misc", False)


@pytest.fixture
def small():
    codes = [TaxCode(c, "d") for c in ["B.B.B", "A.A.A", "C.C.C", "D.D.D", "E.E.E", "SALES_TAX"]]
    attrs = [
        ProductAttribute("_Z", "z", "z", G_MISC, ()),
        ProductAttribute("_A", "a", "a", G_BUYER, ("A",)),
        ProductAttribute("_B", "b", "b", G_BUYER, ("A", "B")),
        ProductAttribute("_C", "c", "c", G_MISC, ("C",)),
    ]
    return Catalogue(codes, attrs)


def _codes(items):
    return [i.code for i in items]


def test_first_page(small):
    items, more = small.page_tax_codes(2, None)
    assert _codes(items) == ["A.A.A", "B.B.B"]
    assert more is True


def test_middle_page(small):
    items, more = small.page_tax_codes(2, "B.B.B")
    assert _codes(items) == ["C.C.C", "D.D.D"]
    assert more is True


def test_last_page_exact(small):
    items, more = small.page_tax_codes(2, "D.D.D")
    assert _codes(items) == ["E.E.E", "SALES_TAX"]
    assert more is False


def test_past_the_end(small):
    assert small.page_tax_codes(5, "SALES_TAX") == ([], False)


def test_starting_after_not_in_list(small):
    items, more = small.page_tax_codes(10, "BZZ")
    assert _codes(items) == ["C.C.C", "D.D.D", "E.E.E", "SALES_TAX"]
    assert more is False


def test_walk_all_pages_real_catalogue():
    cat = load_catalogue()
    seen, after = [], None
    while True:
        items, more = cat.page_tax_codes(7, after)
        seen += _codes(items)
        if not more:
            break
        after = items[-1].code
    assert seen == [t.code for t in cat.tax_codes]


@pytest.mark.parametrize("limit", [0, -1, "5", True])
def test_bad_limit(small, limit):
    with pytest.raises(ValidationFailed) as ei:
        small.page_tax_codes(limit, None)
    assert ei.value.first.parameter == "limit"


def test_attributes_unfiltered(small):
    items, more = small.page_attributes(3, None)
    assert _codes(items) == ["_A", "_B", "_C"]
    assert more is True
    assert small.page_attributes(3, "_C") == ([small.get_attribute("_Z")], False)


def test_attributes_ptc_filter(small):
    items, _ = small.page_attributes(10, None, ptc="B.B.B")
    assert _codes(items) == ["_B", "_Z"]
    items, _ = small.page_attributes(10, None, ptc="A.A.A")
    assert _codes(items) == ["_A", "_B", "_Z"]


def test_attributes_ptc_with_suffix_and_paging(small):
    items, more = small.page_attributes(1, "_A", ptc="A.A.A._Z")
    assert _codes(items) == ["_B"]
    assert more is True


def test_attributes_ptc_prefix_accepted(small):
    items, _ = small.page_attributes(10, None, ptc="C")
    assert _codes(items) == ["_C", "_Z"]


def test_attributes_ptc_sales_tax_has_none(small):
    assert small.page_attributes(10, None, ptc="SALES_TAX") == ([], False)


@pytest.mark.parametrize("ptc", ["X.Y.Z", "a.a.a", "A.A.A._NOPE", "sales_tax", ""])
def test_attributes_unknown_ptc(small, ptc):
    with pytest.raises(ValidationFailed) as ei:
        small.page_attributes(10, None, ptc=ptc)
    assert len(ei.value.items) == 1
    assert ei.value.first.parameter == "ptc"
    assert ei.value.first.pointer is None


def test_real_catalogue_downloaded_only_for_software_and_digital():
    cat = load_catalogue()
    soft, _ = cat.page_attributes(1000, None, ptc="SOFTWARE.DOWNLOADED.PREWRITTEN")
    food, _ = cat.page_attributes(1000, None, ptc="FOOD.GROCERY.GENERAL")
    assert "_DOWNLOADED" in _codes(soft)
    assert "_DOWNLOADED" not in _codes(food)
    assert "_B2B" in _codes(food)
