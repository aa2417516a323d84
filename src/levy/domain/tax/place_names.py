"""Place and street names as the rate table compares them. Pure.

* :func:`normalise_place` for city (and county) names: upper case, accents and
  apostrophes dropped, other punctuation and runs of spaces made one space,
  ``St``/``Ste``/``Ft``/``Mt`` spelled out (``SAINT``, ``SAINTE``, ``FORT``,
  ``MOUNT``), a leading ``City of`` and one trailing ``City``, ``Township``
  (``Twp``) or ``Village`` dropped. ``"St. Paul"``, ``"SAINT PAUL"`` and
  ``"City of Saint Paul"`` are the same place.
* :func:`normalise_county`: the same, without a trailing ``County``/``Parish``/``Borough``.
* :func:`parse_line1`: an address line's house number, pre-directional,
  street name, suffix and post-directional, abbreviated the USPS way
  (``NORTH`` -> ``N``, ``STREET`` -> ``ST``, ``AVENUE`` -> ``AVE``), and the unit
  (``Apt 4``, ``Suite 250``, ``# 12``) apart, for the secondary ranges of boundary records.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_SPLIT = re.compile(r"[^A-Z0-9]+")
_PLACE_WORDS = {"ST": "SAINT", "STE": "SAINTE", "FT": "FORT", "MT": "MOUNT", "TWP": "TOWNSHIP"}
_TRAILING = ("CITY", "TOWNSHIP", "VILLAGE")
_COUNTY_WORDS = ("COUNTY", "PARISH", "BOROUGH")

DIRECTIONALS = {
    "N": "N", "NORTH": "N", "S": "S", "SOUTH": "S", "E": "E", "EAST": "E", "W": "W", "WEST": "W",
    "NE": "NE", "NORTHEAST": "NE", "NW": "NW", "NORTHWEST": "NW", "SE": "SE", "SOUTHEAST": "SE",
    "SW": "SW", "SOUTHWEST": "SW",
}
# USPS street suffixes (Publication 28, the common ones): every spelling -> the standard abbreviation.
SUFFIXES = {
    **dict.fromkeys(("ST", "STR", "STREET"), "ST"),
    **dict.fromkeys(("AVE", "AV", "AVEN", "AVENUE"), "AVE"),
    **dict.fromkeys(("BLVD", "BOULEVARD", "BOUL"), "BLVD"),
    **dict.fromkeys(("RD", "ROAD"), "RD"),
    **dict.fromkeys(("DR", "DRIVE", "DRV"), "DR"),
    **dict.fromkeys(("LN", "LANE"), "LN"),
    **dict.fromkeys(("CT", "COURT"), "CT"),
    **dict.fromkeys(("PL", "PLACE"), "PL"),
    **dict.fromkeys(("TER", "TERRACE", "TERR"), "TER"),
    **dict.fromkeys(("PKWY", "PARKWAY", "PKY"), "PKWY"),
    **dict.fromkeys(("HWY", "HIGHWAY"), "HWY"),
    **dict.fromkeys(("CIR", "CIRCLE"), "CIR"),
    **dict.fromkeys(("WAY", "WY"), "WAY"),
    **dict.fromkeys(("TRL", "TRAIL"), "TRL"),
    **dict.fromkeys(("SQ", "SQUARE"), "SQ"),
    **dict.fromkeys(("PLZ", "PLAZA"), "PLZ"),
    **dict.fromkeys(("LOOP",), "LOOP"),
    **dict.fromkeys(("ALY", "ALLEY"), "ALY"),
    **dict.fromkeys(("EXPY", "EXPRESSWAY"), "EXPY"),
    **dict.fromkeys(("FWY", "FREEWAY"), "FWY"),
}
# USPS secondary unit designators (Publication 28, appendix C2): every spelling -> the standard abbreviation.
_UNIT_WORDS = {
    **dict.fromkeys(("APT", "APARTMENT"), "APT"), **dict.fromkeys(("STE", "SUITE"), "STE"),
    **dict.fromkeys(("FL", "FLOOR"), "FL"), **dict.fromkeys(("RM", "ROOM"), "RM"),
    "BLDG": "BLDG", "SPC": "SPC", "UNIT": "UNIT", "LOT": "LOT",
}
_HOUSE = re.compile(r"([0-9]+)[A-Z]?\Z")


def _words(name: str) -> list[str]:
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).upper().replace("'", "").replace("\u2019", "")
    return [w for w in _SPLIT.split(text) if w]


def normalise_place(name: str) -> str:
    words = [_PLACE_WORDS.get(w, w) for w in _words(name)]
    if len(words) > 2 and words[0] == "CITY" and words[1] == "OF":
        words = words[2:]
    if len(words) > 1 and words[-1] in _TRAILING:
        words = words[:-1]
    return " ".join(words)


def normalise_county(name: str) -> str:
    words = [_PLACE_WORDS.get(w, w) for w in _words(name)]
    if len(words) > 1 and words[-1] in _COUNTY_WORDS:
        words = words[:-1]
    return " ".join(words)


@dataclass(frozen=True, slots=True)
class StreetAddress:
    number: int
    street: str
    predir: str = ""
    suffix: str = ""
    postdir: str = ""
    unit_abbr: str = ""  # "STE", "APT", ... ("" for "# 12" or none)
    unit: str = ""  # "250", "B", ... ("" when the line gives no unit)


def normalise_unit_abbr(text: str) -> str:
    """A secondary unit designator as :func:`parse_line1` gives it (``"Suite"`` -> ``"STE"``; others as written)."""
    word = " ".join(_words(text))
    return _UNIT_WORDS.get(word, word)


def normalise_street_part(text: str, table: dict[str, str] | None = None) -> str:
    """One part of a street (name, suffix or directional) in the form :func:`parse_line1` gives."""
    words = _words(text)
    if table is not None and len(words) == 1:
        return table.get(words[0], words[0])
    return " ".join(words)


def parse_line1(line1: str) -> StreetAddress | None:
    """``"123 N Main Street Apt 4"`` -> (123, "MAIN", "N", "ST", "", "APT", "4"); None without a house number.

    The unit is the word after a designator (``Apt``, ``Suite``, ...: abbreviated the USPS way)
    or after ``#`` (no designator); a designator without a word after it gives none."""
    text, _, hashed = line1.upper().replace("'", "").partition("#")
    words = [w for w in _SPLIT.split(text) if w]
    if not words:
        return None
    m = _HOUSE.match(words[0])
    if m is None:
        return None
    number = int(m.group(1))
    rest = words[1:]
    unit_abbr = unit = ""
    after_hash = [w for w in _SPLIT.split(hashed) if w]
    if after_hash:
        unit = after_hash[0]
    for i, w in enumerate(rest):
        if i > 0 and w in _UNIT_WORDS:
            if not unit and i + 1 < len(rest):
                unit_abbr, unit = _UNIT_WORDS[w], rest[i + 1]
            elif unit and i + 1 == len(rest):  # "Apt # 5"
                unit_abbr = _UNIT_WORDS[w]
            rest = rest[:i]
            break
    predir = postdir = suffix = ""
    # From the end, the way USPS reads it: post-directional, suffix, then a
    # pre-directional; none of them when it would leave no street name.
    if len(rest) > 1 and rest[-1] in DIRECTIONALS:
        postdir, rest = DIRECTIONALS[rest[-1]], rest[:-1]
    if len(rest) > 1 and rest[-1] in SUFFIXES:
        suffix, rest = SUFFIXES[rest[-1]], rest[:-1]
    if len(rest) > 1 and rest[0] in DIRECTIONALS:
        predir, rest = DIRECTIONALS[rest[0]], rest[1:]
    if not rest:
        return None
    return StreetAddress(number, " ".join(rest), predir, suffix, postdir, unit_abbr, unit)
