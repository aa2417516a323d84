"""Dates of reports, returns and nexus studies (issue 16): from 1900-01-01 to 9998-12-31
(``levy.domain.periods``). Past either end is 422 / INVALID_ARGUMENT at the query
parameter (``source.parameter``) or the body field (``source.pointer``); before the fix
``to=9999-12-31``, ``period_end`` 9999-12-31 and ``as_of=9999-12-31`` were 500 (the day
after 9999-12-31 overflows). REST and gRPC, SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from test_filings import Filings, fil  # noqa: F401  (fixture)


def refused(result: tuple[int, Any]) -> list[dict[str, Any]]:
    code, out = result
    assert code == 422, out
    assert {e["code"] for e in out["errors"]} == {"validation_error"}, out
    return list(out["errors"])


def parameters(errors: list[dict[str, Any]]) -> set[str]:
    assert all(e["source"].get("pointer") is None for e in errors), errors  # gRPC: unset
    return {e["source"]["parameter"] for e in errors}


def test_liability_report_dates(fil: Filings) -> None:  # noqa: F811
    errors = refused(fil.liability(**{"from": "0001-01-01", "to": "9999-12-31"}))
    assert parameters(errors) == {"from", "to"}
    assert "1900-01-01 to 9998-12-31" in errors[0]["detail"]
    assert parameters(refused(fil.liability(**{"from": "2026-01-01", "to": "9999-12-31"}))) == {"to"}
    assert parameters(refused(fil.liability(**{"from": "1899-12-31", "to": "2026-01-31"}))) == {"from"}
    # The ends of the range are taken: nothing sold, nothing due.
    report = fil.ok(fil.liability(**{"from": "1900-01-01", "to": "9998-12-31"}))
    assert report["from"] == "1900-01-01" and report["to"] == "9998-12-31" and report["jurisdictions"] == []


def test_filing_period_dates(fil: Filings) -> None:  # noqa: F811
    errors = refused(fil.create({"jurisdiction": "US-ST-TX", "period_start": "2026-01-01",
                                 "period_end": "9999-12-31"}))
    assert [e["source"]["pointer"] for e in errors] == ["/period_end"]
    errors = refused(fil.create({"jurisdiction": "US-ST-TX", "period_start": "0001-01-01",
                                 "period_end": "2026-01-31"}))
    assert [e["source"]["pointer"] for e in errors] == ["/period_start"]
    # The last day is taken (prepared, not filed: the period has not ended).
    filing = fil.ok(fil.create({"jurisdiction": "US-ST-TX", "period_start": "9998-12-01",
                                "period_end": "9998-12-31"}), 201)
    assert filing["period_end"] == "9998-12-31" and filing["status"] == "prepared"


def test_nexus_as_of(fil: Filings) -> None:  # noqa: F811
    assert parameters(refused(fil.nexus(as_of="9999-12-31"))) == {"as_of"}
    assert parameters(refused(fil.nexus(as_of="0001-01-01"))) == {"as_of"}
    for as_of in ("9998-12-31", "1900-01-01"):
        assert fil.ok(fil.nexus(as_of=as_of))["as_of"] == as_of
