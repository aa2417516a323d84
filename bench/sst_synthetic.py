"""Synthetic SST rate and boundary files in the official layout (issue 17): the
benchmark's ``sst_import`` scenario and the tests generate them.

Minnesota (state FIPS 27), in force 2026-04-01..2026-06-30. The rate file has
two counties: 053 at 0.15% and 025 at 0.5%. The boundary file has 89 columns
(SST Boundary Database layout, see ``levy.ratefiles.sst``):

* ``n4`` ZIP+4 records: record ``i`` covers ZIP ``55001 + i // 50``, plus-4
  ``(i % 50) * 200`` to ``+ 199``; county 053 when ``i`` is even, else 025;
* ``na`` address records in pairs on street ``OAK<k>`` (``k = i // 2``), ZIP
  ``55001 + k // 25``, ``N OAK<k> ST``: the odd side 1..999 in county 053,
  the even side 2..998 in county 025;
* ``units`` secondary-range records (after the others): on street pair ``k < units``,
  suites ``STE 200``..``299`` of the odd side 1..999 in county 025 (the rest of
  the odd side is in 053).
"""

from __future__ import annotations

from pathlib import Path

BEGIN, END = "20260401", "20260630"
RATES = {"053": "0.0015", "025": "0.0050"}
# Another quarter or state (``write(..., quarter=, state=)``): the quarter's window, the state's FIPS code and first ZIP.
QUARTERS = {"2026Q2": ("20260401", "20260630"), "2026Q3": ("20260701", "20260930")}
STATES = {"MN": ("27", 55001, "0.06875"), "WI": ("55", 53001, "0.05")}  # FIPS, first ZIP, state rate


def _row(kind: str, county: str, *, low: str = "", high: str = "", parity: str = "", street: str = "",
         zip5: str = "", zl: str = "", pl: str = "", zh: str = "", ph: str = "", window: tuple[str, str] = (BEGIN, END),
         fips: str = "27", unit: tuple[str, str, str, str] = ("", "", "", "")) -> str:
    cols = [kind, *window, low, high, parity, "N" if street else "", street, "ST" if street else "", "",
            *unit, "", zip5, "", zl, pl, zh, ph, "", fips, fips, county, "", "", "", ""]
    cols += [""] * 60
    assert len(cols) == 89
    return ",".join(cols)


def zip4_of(i: int, first_zip: int = 55001) -> tuple[str, str, str, str]:
    """(ZIP, plus-4 low, plus-4 high, county FIPS) of ZIP+4 record ``i``."""
    low = (i % 50) * 200
    return f"{first_zip + i // 50:05d}", f"{low:04d}", f"{low + 199:04d}", "053" if i % 2 == 0 else "025"


def street_of(k: int, first_zip: int = 55001) -> tuple[str, str]:
    """(ZIP, street name) of address pair ``k``."""
    return f"{first_zip + k // 25:05d}", f"OAK{k}"


def boundary_lines(n4: int, na: int, quarter: str = "2026Q2", state: str = "MN", units: int = 0,
                   first_zip: int | None = None) -> list[str]:
    """The lines of the boundary file (``first_zip``: the first ZIP, else the state's)."""
    fips, first, _ = STATES[state]
    first = first_zip or first
    window = QUARTERS[quarter]
    out = []
    for i in range(n4):
        z, lo, hi, county = zip4_of(i, first)
        out.append(_row("4", county, zl=z, pl=lo, zh=z, ph=hi, window=window, fips=fips))
    for i in range(na):
        z, street = street_of(i // 2, first)
        odd = i % 2 == 0
        out.append(_row("a", "053" if odd else "025", low="1" if odd else "2", high="999" if odd else "998",
                        parity="O" if odd else "E", street=street, zip5=z, window=window, fips=fips))
    for k in range(units):
        z, street = street_of(k, first)
        out.append(_row("a", "025", low="1", high="999", parity="O", street=street, zip5=z, window=window, fips=fips,
                        unit=("STE", "200", "299", "B")))
    return out


def rate_lines(state: str = "MN", rates: dict[str, str] | None = None) -> list[str]:
    fips, _, rate = STATES[state]
    out = [f"{fips},45,{fips},{rate},{rate},{rate},{rate},20090701,29991231"]
    out += [f"{fips},00,{c},{r},{r},{r},{r},20000101,29991231" for c, r in (rates or RATES).items()]
    return out


def write(folder: Path, n4: int, na: int, *, quarter: str = "2026Q2", state: str = "MN",
          rates: dict[str, str] | None = None, units: int = 0, first_zip: int | None = None) -> tuple[Path, Path]:
    """Write ``MNR2026Q2SYN.csv`` and ``MNB2026Q2SYN.csv`` (of ``state`` and ``quarter``) into
    ``folder``, county rates ``rates`` (default RATES); their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rate_file, bounds = folder / f"{state}R{quarter}SYN.csv", folder / f"{state}B{quarter}SYN.csv"
    rate_file.write_text("\n".join(rate_lines(state, rates)) + "\n")
    bounds.write_text("\n".join(boundary_lines(n4, na, quarter, state, units, first_zip)) + "\n")
    return rate_file, bounds


def date_in_force():  # type: ignore[no-untyped-def]
    """A day the synthetic records are in force (within BEGIN..END)."""
    from datetime import date

    return date(int(BEGIN[:4]), int(BEGIN[4:6]) + 1, 15)
