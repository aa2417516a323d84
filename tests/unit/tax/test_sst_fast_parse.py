"""The boundary file's fast field split (``levy.ratefiles.sst._boundary_fields``) against the csv
module: the same records, and the same errors with the same file and line, on synthetic files in
the official 89-column layout with and without special districts, secondary ranges, blank lines,
bad rows and quotes."""

from __future__ import annotations

import csv

import pytest

from bench import sst_synthetic
from levy.domain.errors import ValidationFailed
from levy.ratefiles import sst


def _with_district(line: str, code: str) -> str:
    cols = line.split(",")
    cols[29:32] = ["1", code, "63"]  # code source, district code, type of taxing authority
    return ",".join(cols)


def _files() -> dict[str, list[str]]:
    lines = sst_synthetic.boundary_lines(60, 40, units=3)
    mixed = [*lines[:10], "", _with_district(lines[10], "00123"), *lines[11:50], "   ", *lines[50:]]
    spaced = [line + " " if i % 7 == 0 else line for i, line in enumerate(lines)]  # a blank in the last column
    quoted = [*lines[:5], lines[5].replace(",OAK", ',"OAK', 1).replace(",ST,", '",ST,', 1), *lines[6:]]
    short = [*lines[:3], ",".join(lines[3].split(",")[:29]), *lines[4:]]  # exactly the 29 columns read
    return {"plain": lines, "mixed": mixed, "spaced": spaced, "quoted": quoted, "short": short}


def _parse(lines: list[str]) -> object:
    try:
        return sst.parse_sst_boundaries(lines, "MNB.csv")
    except ValidationFailed as e:
        return ("refused", e.detail, repr(e.items))


@pytest.mark.parametrize("name", sorted(_files()))
def test_same_records_as_the_csv_module(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _files()[name]
    fast = _parse(lines)
    monkeypatch.setattr(sst, "_boundary_fields", csv.reader)
    slow = _parse(lines)
    assert isinstance(fast, list) and len(fast) == sum(1 for line in lines if line.strip())
    assert fast == slow
    if name == "mixed":
        assert [b.specials for b in fast if b.specials] == [(("00123", "63"),)]


def test_same_errors_as_the_csv_module(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = sst_synthetic.boundary_lines(20, 20)
    lines[4] = lines[4].replace("20260401", "2026041", 1)  # a bad begin date
    lines[30] = ",".join(lines[30].split(",")[:20])  # 20 columns
    lines[33] = _with_district(lines[33], "")  # a district triple without its code: no district
    fast = _parse(lines)
    monkeypatch.setattr(sst, "_boundary_fields", csv.reader)
    assert fast == _parse(lines)
    assert fast[0] == "refused" and "2 bad row(s)" in fast[1]  # type: ignore[index]
