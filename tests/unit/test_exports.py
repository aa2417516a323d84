"""The CSV export rules (levy.domain.exports): formula injection guarded, money in major units."""

from __future__ import annotations

import csv
import io

from levy.domain.exports import csv_line, major_units, safe_cell


def test_cells_that_a_spreadsheet_would_run_are_prefixed() -> None:
    # OWASP "CSV Injection": = + - @ tab and CR start a formula.
    for text in ('=HYPERLINK("http://x","y")', "+1+2", "-1+2", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(text) == "'" + text
    # Plain text and plain numbers (a credit's -12.50) stay as they are.
    assert [safe_cell(v) for v in ("Acme", "-12.50", "-3", "12", None, 7)] == ["Acme", "-12.50", "-3", "12", "", "7"]
    assert safe_cell("-1.5e3") == "'-1.5e3"  # not a plain decimal: guarded


def test_money_in_major_units_of_its_currency() -> None:
    # ISO 4217 exponents: USD 2, JPY 0, BHD 3.
    assert major_units(12345, "USD") == "123.45"
    assert major_units("-5", "USD") == "-0.05"
    assert major_units(10000, "JPY") == "10000"
    assert major_units(1500, "BHD") == "1.500"
    assert major_units(None, "USD") == ""


def test_a_line_is_rfc_4180_with_crlf() -> None:
    line = csv_line(["a,b", 'say "hi"', "=1+1"]).decode()
    assert line == '"a,b","say ""hi""",\'=1+1\r\n'
    assert next(csv.reader(io.StringIO(line))) == ["a,b", 'say "hi"', "'=1+1"]
