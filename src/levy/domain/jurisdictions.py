"""Jurisdiction codes used by registrations and exemption certificates.

The shape is the tax engine's (docs/tax-engine.md): ``US-ST-CA`` for a state
(50 states, DC and Puerto Rico, ``US-ST-PR``), ``US-CO-<ST>-<SLUG>`` for a county, ``US-CI-<ST>-<SLUG>``
for a city and ``US-SP-<ST>-<SLUG>`` for a special district, where SLUG is the
upper-case name with runs of other characters replaced by ``_``. Codes are
case-sensitive, as the engine compares them exactly.

Outside the US (docs/international.md): a country by its ISO 3166-1 alpha-2 code for
every EU member state, ``GB``, ``AU`` and ``CA`` (Canada's GST/HST); a Canadian province with a
sales tax of its own as ``CA-PR-BC``, ``CA-PR-SK``, ``CA-PR-MB`` (PST) and ``CA-PR-QC`` (QST);
``EU-OSS``, the Union One-Stop-Shop, which covers B2C sales to every member state. The list is
:data:`INTERNATIONAL` (a unit test holds it equal to the codes of the rate data).
"""

from __future__ import annotations

import re

from levy.domain.errors import ValidationFailed

US_STATES: dict[str, str] = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California", "CO": "Colorado",
    "CT": "Connecticut", "DE": "Delaware", "DC": "District of Columbia", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa", "KS": "Kansas",
    "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland", "MA": "Massachusetts",
    "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi", "MO": "Missouri", "MT": "Montana",
    "NE": "Nebraska", "NV": "Nevada", "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico",
    "NY": "New York", "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma",
    "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina", "SD": "South Dakota",
    "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VT": "Vermont", "VA": "Virginia", "WA": "Washington",
    "WV": "West Virginia", "WI": "Wisconsin", "WY": "Wyoming", "PR": "Puerto Rico",
}

EU_MEMBER_STATES = frozenset({
    "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU",
    "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
})
INTERNATIONAL: frozenset[str] = EU_MEMBER_STATES | {"GB", "AU", "CA", "CA-PR-BC", "CA-PR-SK", "CA-PR-MB", "CA-PR-QC",
                                                    "EU-OSS"}

LEVELS = {"ST": "state", "CO": "county", "CI": "city", "SP": "special"}

_SHAPE = re.compile(r"(?P<country>[A-Z]{2})-(?P<level>[A-Z]{2})-(?P<region>[A-Z]{2})(?:-(?P<slug>[A-Z0-9]+(?:_[A-Z0-9]+)*))?\Z")
_EXAMPLES = ("'US-ST-CA' for a state, 'US-CO-NY-NEW_YORK_COUNTY', 'US-CI-<ST>-<NAME>' or 'US-SP-<ST>-<NAME>' for a local "
             "jurisdiction, 'DE' for a country, 'CA-PR-BC' for a Canadian province, 'EU-OSS'")


def validate_jurisdiction(code: str, pointer: str) -> str:
    """Return ``code`` when it names a US state, DC or Puerto Rico, or a local jurisdiction in one,
    or one of the :data:`INTERNATIONAL` codes; else 422 at ``pointer``."""
    if code in INTERNATIONAL:
        return code
    if len(code) == 2 and code.isalpha():
        state = f" (a US state is 'US-ST-{code.upper()}')" if code.upper() in US_STATES else ""
        raise ValidationFailed(
            f"'{code}' is not a jurisdiction code{state}; a country code is one of {', '.join(sorted(c for c in INTERNATIONAL if len(c) == 2))}.",
            pointer=pointer,
        )
    m = _SHAPE.match(code)
    if m is None:
        hint = f" (codes are upper-case: did you mean '{code.upper()}'?)" if _SHAPE.match(code.upper()) else ""
        raise ValidationFailed(f"'{code}' is not a jurisdiction code{hint}; expected {_EXAMPLES}.", pointer=pointer)
    country, level, region, slug = m["country"], m["level"], m["region"], m["slug"]
    if country != "US":
        raise ValidationFailed(
            f"'{code}': outside the US only {', '.join(sorted(c for c in INTERNATIONAL if len(c) > 2))} and the "
            "country codes are jurisdictions.", pointer=pointer)
    if level not in LEVELS:
        raise ValidationFailed(
            f"'{code}': unknown level '{level}'; use ST (state), CO (county), CI (city) or SP (special district).",
            pointer=pointer,
        )
    if region not in US_STATES:
        raise ValidationFailed(f"'{code}': '{region}' is not a US state, DC or PR.", pointer=pointer)
    if level == "ST" and slug is not None:
        raise ValidationFailed(
            f"'{code}': a state code has no suffix; use 'US-ST-{region}' (local portions follow the state).",
            pointer=pointer,
        )
    if level != "ST" and slug is None:
        raise ValidationFailed(
            f"'{code}': a {LEVELS[level]} code names the place after the state, e.g. 'US-{level}-{region}-<NAME>'.",
            pointer=pointer,
        )
    return code
