"""Reduced rates of more member states through REST and gRPC on SQLite and PostgreSQL (a seller under
EU-OSS from 2025-01-01). Each line is 100.00 = 10000 minor units, quantity 1, tax-exclusive; the rates are
the category rows of src/levy/data/tax/international/eu.json (sources there):

* Czechia, books and e-books: 10 % until 2023-12-31, 0 % (exempt with the right of deduction) from 2024-01-01.
  2023-06-01: 10000 x 0.10 = 1000. 2026-06-01: 0. Software on 2026-06-01 at the standard 21 %: 2100.
* Finland, books and e-books: 10 % until 2024-12-31, 14 % in 2025, 13.5 % from 2026-01-01.
  2024-06-01: 1000. 2025-06-01: 10000 x 0.14 = 1400. 2026-06-01: 10000 x 0.135 = 1350.
* Greece, printed books, newspapers and periodicals 6 %; e-books 6 % from 2021-07-01 (standard 24 % before).
  2026-06-01: 10000 x 0.06 = 600 for each. 2021-06-01, an e-book: 10000 x 0.24 = 2400.
Dates before the registration (2025-01-01) are taxed with X-Include-Unregistered.
"""

from __future__ import annotations

import pytest
from levyserver import LevyServer, Tenant, create_tenant
from test_calculations import Caller, assert_consistent
from test_international_api import EBOOK, calc, item, register_rest, rows  # noqa: F401 - calc: the REST/gRPC fixture

PRAGUE = {"city": "Praha", "country": "CZ", "postal_code": "110 00"}
HELSINKI = {"city": "Helsinki", "country": "FI", "postal_code": "00100"}
ATHENS = {"city": "Athina", "country": "GR", "postal_code": "105 57"}
BOOK = ["PUBLICATIONS.BOOKS.PRINTED"]
NEWSPAPER = ["PUBLICATIONS.PERIODICALS.NEWSPAPERS"]


@pytest.fixture(scope="module")
def oss(server: LevyServer) -> Tenant:
    t = create_tenant(server.database_url)
    register_rest(server, t, "EU-OSS")
    return t


def on(day: str, *lines: dict[str, object]) -> dict[str, object]:
    return {"transaction_date": f"{day}T12:00:00Z", "currency": "EUR", "line_items": list(lines)}


@pytest.mark.parametrize(("country", "address", "day", "codes", "expected"), [
    ("CZ", PRAGUE, "2023-06-01", EBOOK, [("Czechia", "vat", "0.1", "1000")]),
    ("CZ", PRAGUE, "2023-06-01", BOOK, [("Czechia", "vat", "0.1", "1000")]),
    ("CZ", PRAGUE, "2026-06-01", EBOOK, [("Czechia", "vat", "0", "0")]),
    ("CZ", PRAGUE, "2026-06-01", BOOK, [("Czechia", "vat", "0", "0")]),
    ("CZ", PRAGUE, "2026-06-01", None, [("Czechia", "vat", "0.21", "2100")]),
    ("FI", HELSINKI, "2024-06-01", EBOOK, [("Finland", "vat", "0.1", "1000")]),
    ("FI", HELSINKI, "2025-06-01", EBOOK, [("Finland", "vat", "0.14", "1400")]),
    ("FI", HELSINKI, "2026-06-01", EBOOK, [("Finland", "vat", "0.135", "1350")]),
    ("FI", HELSINKI, "2026-06-01", BOOK, [("Finland", "vat", "0.135", "1350")]),
    ("GR", ATHENS, "2026-06-01", EBOOK, [("Greece", "vat", "0.06", "600")]),
    ("GR", ATHENS, "2026-06-01", BOOK, [("Greece", "vat", "0.06", "600")]),
    ("GR", ATHENS, "2026-06-01", NEWSPAPER, [("Greece", "vat", "0.06", "600")]),
    ("GR", ATHENS, "2021-06-01", EBOOK, [("Greece", "vat", "0.24", "2400")]),
], ids=lambda v: v if isinstance(v, str) and len(v) < 12 else None)
def test_reduced_rates_by_date(calc: Caller, oss: Tenant, country: str, address: dict[str, str], day: str,
                               codes: list[str] | None, expected: list[tuple[str, str, str, str]]) -> None:
    out = calc(oss.key, on(day, item(address, codes)), unregistered=day < "2025-01-01")
    assert_consistent(out)
    (li,) = out["line_items"]
    assert rows(li) == expected, li["taxes"]
    assert out["tax_amount"] == expected[0][3]
    row = li["taxes"][0]
    if codes is not None and expected[0][2] != "0.24":
        assert "rate" in row["rule_name"] and "secondary" in row["detail"], row
