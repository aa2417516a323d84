"""City-name normalisation (issue 17), property-tested, and address-line parsing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from levy.domain.tax.place_names import StreetAddress, normalise_county, normalise_place, parse_line1
from levy.domain.tax.local_rates import UnitRange

# A place name: one to four words of letters (no abbreviations that expand, no
# trailing word that is dropped, so that the name itself stays as it is).
_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9).filter(
    lambda w: w.upper() not in {"ST", "STE", "FT", "MT", "TWP", "CITY", "TOWNSHIP", "VILLAGE", "OF"}
)
_names = st.lists(_word, min_size=1, max_size=4)
_punct = st.sampled_from([" ", "  ", "-", ". ", ", ", "\t"])


@given(_names)
def test_normalised_is_upper_words_and_idempotent(words: list[str]) -> None:
    name = " ".join(words)
    out = normalise_place(name)
    assert out == " ".join(w.upper() for w in words)
    assert normalise_place(out) == out


@given(_names, st.lists(_punct, min_size=4, max_size=4), st.booleans())
def test_case_punctuation_and_spacing_do_not_matter(words: list[str], seps: list[str], upper: bool) -> None:
    plain = " ".join(words)
    messy = seps[0].strip() + "".join(w + (seps[i % 4] if i < len(words) - 1 else "") for i, w in enumerate(words))
    messy = (messy.upper() if upper else messy.title()) + " "
    assert normalise_place(messy) == normalise_place(plain)


@given(_names, st.sampled_from([("St", "Saint"), ("St.", "Saint"), ("Ft", "Fort"), ("Mt.", "Mount")]))
def test_abbreviations_are_spelled_out(words: list[str], pair: tuple[str, str]) -> None:
    short, long = pair
    rest = " ".join(words)
    assert normalise_place(f"{short} {rest}") == normalise_place(f"{long} {rest}")


@given(_names, st.sampled_from(["City", "Township", "Village", "city", "TWP"]), st.booleans())
def test_city_of_and_trailing_kind_are_dropped(words: list[str], trailing: str, prefix: bool) -> None:
    rest = " ".join(words)
    decorated = f"{'City of ' if prefix else ''}{rest} {trailing}"
    assert normalise_place(decorated) == normalise_place(rest)


def test_examples() -> None:
    assert normalise_place("St. Paul") == normalise_place("SAINT PAUL") == "SAINT PAUL"
    assert normalise_place("Ft Worth") == "FORT WORTH"
    assert normalise_place("Mt. Pleasant") == "MOUNT PLEASANT"
    assert normalise_place("City of Industry") == "INDUSTRY"
    assert normalise_place("O'Fallon") == "OFALLON"
    assert normalise_place("Cañon City") == "CANON"
    assert normalise_place("City") == "CITY"  # nothing left to drop to
    assert normalise_county("Los Angeles County") == normalise_county("los angeles") == "LOS ANGELES"


@pytest.mark.parametrize(("line1", "expected"), [
    ("123 Main St", StreetAddress(123, "MAIN", "", "ST", "")),
    ("123 North Main Street", StreetAddress(123, "MAIN", "N", "ST", "")),
    ("4500 Martin Luther King Jr Blvd SW", StreetAddress(4500, "MARTIN LUTHER KING JR", "", "BLVD", "SW")),
    ("12B Oak Avenue Apt 7", StreetAddress(12, "OAK", "", "AVE", "", "APT", "7")),
    ("100 Oak St Suite 250", StreetAddress(100, "OAK", "", "ST", "", "STE", "250")),
    ("100 Oak St Apt # 5", StreetAddress(100, "OAK", "", "ST", "", "APT", "5")),
    ("100 Oak St Apt", StreetAddress(100, "OAK", "", "ST", "")),  # a designator alone gives no unit
    ("7 West St", StreetAddress(7, "WEST", "", "ST", "")),  # a one-word name is never taken for a directional
    ("9 North", StreetAddress(9, "NORTH", "", "", "")),
    ("55 E 10th St #4", StreetAddress(55, "10TH", "E", "ST", "", "", "4")),
])
def test_parse_line1(line1: str, expected: StreetAddress) -> None:
    assert parse_line1(line1) == expected


@pytest.mark.parametrize("line1", ["", "Main St", "PO Box", "#12"])
def test_parse_line1_without_house_number(line1: str) -> None:
    assert parse_line1(line1) is None


@pytest.mark.parametrize(("unit", "abbr", "number", "covered"), [
    (UnitRange("STE", "200", "299"), "STE", "250", True),
    (UnitRange("STE", "200", "299"), "", "250", True),  # "# 250": no designator, any matches
    (UnitRange("STE", "200", "299"), "APT", "250", False),  # another designator
    (UnitRange("STE", "200", "299"), "STE", "300", False),
    (UnitRange("STE", "200", "299"), "STE", "2A", False),
    (UnitRange("", "200", "298", "even"), "APT", "251", False),  # the other side
    (UnitRange("", "200", "298", "even"), "APT", "252", True),
    (UnitRange("BLDG", "A", "F"), "BLDG", "C", True),  # letters compare as text of the same length
    (UnitRange("BLDG", "A", "F"), "BLDG", "G", False),
    (UnitRange("BLDG", "A", "F"), "BLDG", "AA", False),
])
def test_unit_range_covers(unit: UnitRange, abbr: str, number: str, covered: bool) -> None:
    assert unit.covers(abbr, number) is covered
