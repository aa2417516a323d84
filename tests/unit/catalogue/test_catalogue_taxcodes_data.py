"""Integrity of the catalogue data files."""

import json
import re
from pathlib import Path

import levy
from levy.domain.catalogue import DEFAULT_TAX_CODE
from levy.store.reference_data import catalogue as load_catalogue

DATA = Path(levy.__file__).parent / "data" / "catalogue"

REQUIRED_PREFIXES = [
    "GENERAL.TANGIBLE",
    "CLOTHING.APPAREL", "CLOTHING.ACCESSORIES", "CLOTHING.ATHLETIC", "CLOTHING.PROTECTIVE",
    "FOOD.GROCERY", "FOOD.PREPARED", "FOOD.CANDY", "FOOD.SOFT_DRINKS", "FOOD.SUPPLEMENTS",
    "MEDICAL.PRESCRIPTION", "MEDICAL.OTC", "MEDICAL.DEVICES",
    "PUBLICATIONS.BOOKS", "PUBLICATIONS.PERIODICALS",
    "SOFTWARE.SAAS", "SOFTWARE.DOWNLOADED", "SOFTWARE.PHYSICAL", "SOFTWARE.CUSTOM",
    "DIGITAL.AUDIO", "DIGITAL.VIDEO", "DIGITAL.EBOOKS", "DIGITAL.GAMES", "DIGITAL.STREAMING",
    "SERVICES.INFORMATION", "SERVICES.DATA_PROCESSING", "SERVICES.PROFESSIONAL", "SERVICES.REPAIR",
    "SERVICES.INSTALLATION", "SERVICES.MAINTENANCE", "SERVICES.TRAINING", "SERVICES.ADVERTISING",
    "SHIPPING.DELIVERY", "SHIPPING.HANDLING",
    "GIFT_CARDS", "MEMBERSHIPS", "NONTAXABLE",
]
REQUIRED_ATTRIBUTES = [
    "_DOWNLOADED", "_LOAD_AND_LEAVE", "_B2B", "_RESALE", "_MANUFACTURING", "_GOVERNMENT", "_NONPROFIT",
    "_SUBSCRIPTION", "_PERMANENT_USE", "_LIMITED_USE", "_PERSONAL_USE", "_BUNDLED", "_MANDATORY",
    "_SEPARATELY_STATED",
]
PATH_RE = re.compile(r"^[A-Z][A-Z0-9_]*\.[A-Z][A-Z0-9_]*\.[A-Z][A-Z0-9_]*$")


def _doc(name):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def test_files_are_versioned_and_every_entry_sourced():
    for name, key in (("product_tax_codes.json", "tax_codes"), ("product_attributes.json", "attributes")):
        doc = _doc(name)
        assert doc["version"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", doc["effective_from"])
        for entry in doc[key]:
            assert entry.get("source"), entry["code"]
            assert entry.get("effective_from"), entry["code"]


def test_at_least_80_leaf_codes_all_three_level_uppercase():
    codes = [t.code for t in load_catalogue().tax_codes]
    leaves = [c for c in codes if c != "SALES_TAX"]
    assert len(leaves) >= 80
    bad = [c for c in leaves if not PATH_RE.match(c)]
    assert bad == []
    assert "SALES_TAX" in codes
    assert len(codes) == len(set(codes))


def test_every_code_has_a_useful_description():
    for t in load_catalogue().tax_codes:
        assert t.description and len(t.description) >= 20, t.code
    sales_tax = load_catalogue().get_tax_code("SALES_TAX")
    assert sales_tax.description.startswith("Sales tax collected and recorded as a line item")


def test_required_prefixes_all_present():
    codes = [t.code for t in load_catalogue().tax_codes]
    missing = [p for p in REQUIRED_PREFIXES if not any(c.startswith(p + ".") for c in codes)]
    assert missing == []


def test_default_code_exists():
    assert DEFAULT_TAX_CODE == "GENERAL.TANGIBLE.GOODS"
    assert load_catalogue().get_tax_code(DEFAULT_TAX_CODE) is not None


def test_attributes_complete_and_well_formed():
    cat = load_catalogue()
    codes = [a.code for a in cat.attributes]
    assert len(codes) >= 12
    assert [a for a in REQUIRED_ATTRIBUTES if a not in codes] == []
    tops = cat.top_level_categories
    for a in cat.attributes:
        assert a.code.startswith("_") and a.code == a.code.upper()
        assert a.name and a.description and a.group.key and a.group.name
        assert set(a.ptcs) <= tops, (a.code, a.ptcs)


def test_required_exclusive_groups():
    cat = load_catalogue()
    assert cat.get_attribute("_PERMANENT_USE").group.key == "use_duration"
    assert cat.get_attribute("_LIMITED_USE").group.key == "use_duration"
    assert cat.get_attribute("_PERMANENT_USE").group.exclusive is True
    assert cat.get_attribute("_PERSONAL_USE").group.key == "buyer"
    assert cat.get_attribute("_B2B").group.key == "buyer"
    assert cat.get_attribute("_B2B").group.exclusive is True
    assert cat.get_attribute("_DOWNLOADED").ptcs == ("SOFTWARE", "DIGITAL")


def test_lists_sorted_and_loader_cached():
    cat = load_catalogue()
    assert cat is load_catalogue()
    codes = [t.code for t in cat.tax_codes]
    assert codes == sorted(codes)
    attrs = [a.code for a in cat.attributes]
    assert attrs == sorted(attrs)
