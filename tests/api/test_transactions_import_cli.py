"""``levy transactions import`` (subprocess) against the same database as a running server (SQLite
and PostgreSQL), directly and through ``--url``: CSV and JSON Lines, a deliberate bad row written to
the failed-rows file, fixed and imported again, a resumed import, progress off when not a terminal,
and the liability report after the import.

Figures by hand: TX without postal code = Texas 6.25% only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from levyserver import ROOT, LevyServer, Tenant, levy_env
from txn_api import register, uid


def levy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "levy", *args], check=False, cwd=ROOT, capture_output=True, text=True,
                          env=levy_env(), timeout=120)


def test_help_names_the_columns_and_options() -> None:
    r = levy("transactions", "import", "--help")
    assert r.returncode == 0
    for word in ("reference_id", "unit_price", "tax_codes", "postal_code", "--format", "--batch-size", "--progress",
                 "--url", "--api-key", "--organization", "--database-url", "--planners", "failed"):
        assert word in r.stdout, word


def test_csv_import_failed_rows_fix_and_reimport(server: LevyServer, tenant: Tenant, admin_http: httpx.Client,
                                                 http: httpx.Client, tmp_path: Path) -> None:
    register(admin_http, "TX")
    p = uid()
    src = tmp_path / "history.csv"
    src.write_text(
        "reference_id,type,status,transaction_date,tax_amount,parent_reference_id,line_id,quantity,unit_price,state\n"
        f"{p}-1,sale,finalized,2025-03-10,,,a,1,10000,TX\n"      # 625
        f"{p}-1,,,,,,b,2,5000,TX\n"                              # 2 x 5000 = 10000 -> 625
        f"{p}-2,sale,filed,2025-03-11,900,,,1,10000,TX\n"        # provided 900
        f"{p}-3,sale,finalized,2025-03-12,,,,1,12x,TX\n"         # bad unit_price
        f"{p}-4,credit,finalized,2025-03-13,,{p}-1,,1,4000,TX\n"  # 250, parent earlier in the file
    )
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    r = levy("transactions", "import", str(src), *org)
    assert r.returncode == 1, r.stderr
    assert "4 transactions (5 rows)" in r.stdout and "3 created, 0 already stored, 1 failed" in r.stdout
    assert "\r" not in r.stderr and "ETA" not in r.stderr  # no bar when stderr is not a terminal
    failed = tmp_path / "history.failed.csv"
    lines = failed.read_text().splitlines()
    assert lines[0].endswith(",errors") and len(lines) == 2
    assert lines[1].startswith(f"{p}-3,") and "/line_items/0/unit_price" in lines[1]

    one = http.get("/transactions", params={"reference_id": f"{p}-1"}).json()["data"][0]
    assert (one["tax_amount"], one["status"], one["transaction_date"]) == ("1250", "finalized", "2025-03-10T00:00:00Z")
    two = http.get("/transactions", params={"reference_id": f"{p}-2"}).json()["data"][0]
    assert (two["tax_amount"], two["calculated_tax_amount"], two["status"]) == ("900", "625", "filed")
    four = http.get("/transactions", params={"reference_id": f"{p}-4"}).json()["data"][0]
    assert (four["tax_amount"], four["parent_transaction_id"]) == ("250", one["id"])

    # The user fixes the row in the failed-rows file (its errors column is ignored) and imports it.
    failed.write_text(failed.read_text().replace(",12x,", ",2000,"))
    r = levy("transactions", "import", str(failed), "--progress", *org)
    assert r.returncode == 0, r.stderr
    assert "1 created" in r.stdout and "ETA" in r.stderr
    assert not (tmp_path / "history.failed.failed.csv").exists()
    three = http.get("/transactions", params={"reference_id": f"{p}-3"}).json()["data"][0]
    assert three["tax_amount"] == "125"  # 2000 x 6.25%

    # Liability for March 2025: 20000 + 10000 + 2000 - 4000 = 28000 of sales; 1250 + 900 + 125 - 250 = 2025.
    rep = admin_http.get("/reports/liability", params={"from": "2025-03-01", "to": "2025-03-31"}).json()
    tx = {t["jurisdiction"]: t for t in rep["state_totals"]}["US-ST-TX"]
    assert (tx["gross_sales"], tx["filing_tax_amount"]) == ("28000", "2025")


def test_jsonl_import_resumes_and_goes_through_a_server(server: LevyServer, tenant: Tenant,
                                                        admin_http: httpx.Client, http: httpx.Client,
                                                        tmp_path: Path) -> None:
    register(admin_http, "TX")
    p = uid()
    rows = [json.dumps({"type": "sale", "status": "finalized", "transaction_date": "2025-04-01T09:00:00Z",
                        "reference_id": f"{p}-{i}", "line_items": [{"id": "1", "quantity": "1",
                        "unit_price": "1000", "customer": {"address": {"state": "TX"}}}]}) for i in range(10)]
    rows.insert(5, "{not json")
    full = tmp_path / "all.jsonl"
    full.write_text("\n".join(rows) + "\n")
    # An import stopped after its first batches committed: the first four transactions.
    part = tmp_path / "part.jsonl"
    part.write_text("\n".join(rows[:4]) + "\n")
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    # Planned in the command's own process (--planners 0); the other runs plan in a planner process.
    r = levy("transactions", "import", str(part), "--batch-size", "2", "--planners", "0", *org)
    assert r.returncode == 0 and "4 created" in r.stdout, (r.stdout, r.stderr)
    # Run again on the whole file, through the server this time: the four are skipped, the rest stored.
    r = levy("transactions", "import", str(full), "--url", server.http_url, "--api-key", tenant.key,
             "--batch-size", "3")
    assert r.returncode == 1, r.stderr
    assert "10 transactions (11 rows)" not in r.stdout  # the bad line is a failed transaction too
    assert "11 transactions (11 rows)" in r.stdout and "6 created, 4 already stored, 1 failed" in r.stdout
    failed = (tmp_path / "all.failed.jsonl").read_text().splitlines()
    assert failed == ["{not json"]
    listed = http.get("/transactions", params={"limit": 100}).json()["data"]
    assert sorted(t["reference_id"] for t in listed) == sorted(f"{p}-{i}" for i in range(10))
    # A third run changes nothing.
    r = levy("transactions", "import", str(full), *org)
    assert "0 created, 10 already stored, 1 failed" in r.stdout
    assert len(http.get("/transactions", params={"limit": 100}).json()["data"]) == 10


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("a\n")
    r = levy("transactions", "import", str(f), "--url", "http://127.0.0.1:9", "--api-key", "k")
    assert r.returncode == 2 and "--format" in r.stderr
    c = tmp_path / "x.csv"
    c.write_text("reference_id,colour\n1,red\n")
    r = levy("transactions", "import", str(c), "--url", "http://127.0.0.1:9", "--api-key", "k")
    assert r.returncode == 2 and "colour" in r.stderr
    r = levy("transactions", "import", str(c), "--planners", "9")
    assert r.returncode == 2 and "--planners must be 0..8" in r.stderr


def test_a_reference_repeated_in_a_later_batch_is_already_stored(server: LevyServer, tenant: Tenant,
                                                                 admin_http: httpx.Client, http: httpx.Client,
                                                                 tmp_path: Path) -> None:
    """Batch 2 is planned while batch 1 is written: its copy of a reference batch 1 stores is found either by
    the look-up or by the insert (then one by one); either way it is already stored, and stored once."""
    register(admin_http, "TX")
    p = uid()

    def row(ref: str, price: int) -> str:
        return json.dumps({"type": "sale", "status": "finalized", "transaction_date": "2025-05-01T00:00:00Z",
                           "reference_id": f"{p}-{ref}", "line_items": [{"id": "1", "unit_price": str(price),
                                                                        "customer": {"address": {"state": "TX"}}}]})

    f = tmp_path / "dup.jsonl"
    f.write_text("\n".join([row("a", 1000), row("b", 2000), row("a", 9999), row("c", 3000)]) + "\n")
    r = levy("transactions", "import", str(f), "--batch-size", "2", "--organization", tenant.organization_id,
             "--database-url", server.database_url)
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert "3 created, 1 already stored, 0 failed" in r.stdout
    listed = http.get("/transactions", params={"reference_id": f"{p}-a"}).json()["data"]
    assert [t["tax_amount"] for t in listed] == ["63"]  # the first one: 1000 x 6.25% = 62.5 -> 63


def test_a_planner_process_killed_mid_import_stops_it_and_a_rerun_resumes(server: LevyServer, tenant: Tenant,
                                                                          admin_http: httpx.Client,
                                                                          http: httpx.Client, tmp_path: Path) -> None:
    """The planner dies (killed, as by the out-of-memory killer) once some batches are committed: the command
    stops with exit 2 and says so; what was committed stays, whole; the same command again stores the rest."""
    register(admin_http, "TX")
    n = 400
    f, proc = _import_started(server, tenant, http, tmp_path, n)
    try:
        planners = subprocess.run(["pgrep", "-P", str(proc.pid), "-f", "spawn_main"], capture_output=True,
                                  text=True).stdout.split()
        assert len(planners) == 1, planners
        os.kill(int(planners[0]), signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 2, (out, err)
    assert "a planner process stopped" in err and "run the command again to resume" in err
    _stopped_part_way_then_rerun(server, tenant, http, f, n)


def _stopped_part_way_then_rerun(server: LevyServer, tenant: Tenant, http: httpx.Client, f: Path, n: int) -> None:
    """What an interrupted import of :func:`_import_started` stored is whole; the same command again stores
    the rest, each transaction once."""
    stored = {t["reference_id"]: t for t in _all_transactions(http)}
    assert 0 < len(stored) < n and all(t["tax_amount"] == "63" for t in stored.values())  # 1000 x 6.25% -> 63
    r = levy("transactions", "import", str(f), "--organization", tenant.organization_id, "--database-url",
             server.database_url)
    assert r.returncode == 0, r.stderr
    assert f"{n - len(stored)} created, {len(stored)} already stored, 0 failed" in r.stdout
    everything = _all_transactions(http)
    assert len(everything) == n and len({t["reference_id"] for t in everything}) == n


def _import_started(server: LevyServer, tenant: Tenant, http: httpx.Client, tmp_path: Path,
                    n: int) -> tuple[Path, subprocess.Popen[str]]:
    """An import of ``n`` sales of 1000 in TX, one per batch, started and running once its first batch is
    committed (the tenant had no transaction)."""
    p = uid()
    f = tmp_path / "many.jsonl"
    f.write_text("".join(json.dumps({
        "type": "sale", "status": "finalized", "transaction_date": "2025-07-01T00:00:00Z", "reference_id": f"{p}-{i}",
        "line_items": [{"id": "1", "unit_price": "1000", "customer": {"address": {"state": "TX"}}}]}) + "\n"
        for i in range(n)))
    args = [sys.executable, "-m", "levy", "transactions", "import", str(f), "--batch-size", "1",
            "--organization", tenant.organization_id, "--database-url", server.database_url]
    proc = subprocess.Popen(args, cwd=ROOT, env=levy_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not http.get("/transactions", params={"limit": 1}).json()["data"]:  # a first batch committed
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(proc.communicate())
        time.sleep(0.02)
    return f, proc


def _all_transactions(http: httpx.Client) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    params: dict[str, object] = {"limit": 100}
    while True:
        page = http.get("/transactions", params=params).json()
        out += page["data"]
        if not page["has_more"]:
            return out
        params["starting_after"] = page["data"][-1]["id"]


def test_csv_files_a_careless_export_makes(server: LevyServer, tenant: Tenant, admin_http: httpx.Client,
                                           http: httpx.Client, tmp_path: Path) -> None:
    """Issue 30, point 10: Excel's byte order mark is accepted; a 200 KB field and a column named twice
    are file errors (exit 2, a clear message, no traceback); a row with more cells than the header fails
    its transaction, naming its line."""
    register(admin_http, "TX")
    p = uid()
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    header = "reference_id,transaction_date,quantity,unit_price,state\n"

    bom = tmp_path / "excel.csv"
    bom.write_bytes(("\ufeff" + header + f"{p}-bom,2025-03-10,1,10000,TX\n").encode())
    r = levy("transactions", "import", str(bom), *org)
    assert r.returncode == 0, r.stderr
    assert "1 created" in r.stdout
    assert http.get("/transactions", params={"reference_id": f"{p}-bom"}).json()["data"][0]["tax_amount"] == \
        "625"  # 10000 x 6.25%

    huge = tmp_path / "huge.csv"
    huge.write_text(header + f"{p}-huge,2025-03-10,1,10000,{'T' * 200_000}\n")
    r = levy("transactions", "import", str(huge), *org)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and f"{huge}: line 2: field larger than field limit" in r.stderr, r.stderr

    twice = tmp_path / "twice.csv"
    twice.write_text("reference_id,unit_price,state,unit_price\n" f"{p}-twice,100,TX,200\n")
    r = levy("transactions", "import", str(twice), *org)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "names unit_price more than once" in r.stderr, r.stderr
    assert not http.get("/transactions", params={"reference_id": f"{p}-twice"}).json()["data"]

    extra = tmp_path / "extra.csv"
    extra.write_text(header + f"{p}-ok,2025-03-10,1,10000,TX\n" f"{p}-bad,2025-03-10,1,10000,TX,oops,again\n"
                     f"{p}-ok2,2025-03-10,1,4000,TX\n")
    r = levy("transactions", "import", str(extra), *org)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "2 created, 0 already stored, 1 failed" in r.stdout
    failed = (tmp_path / "extra.failed.csv").read_text().splitlines()
    assert len(failed) == 2 and failed[1].startswith(f"{p}-bad,")
    assert "2 cell(s) more than the header's 5 columns on line 3" in failed[1], failed
    assert not http.get("/transactions", params={"reference_id": f"{p}-bad"}).json()["data"]


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_an_import_killed_outright_leaves_no_process_and_a_rerun_completes_once(
        server: LevyServer, tenant: Tenant, admin_http: httpx.Client, http: httpx.Client, tmp_path: Path) -> None:
    """Issue 30, point 4: SIGKILL to the command (which no handler sees): its planner process and
    multiprocessing's resource tracker exit by themselves; what was committed is whole; a rerun stores the
    rest, each transaction once."""
    register(admin_http, "TX")
    n = 400
    f, proc = _import_started(server, tenant, http, tmp_path, n)
    try:
        children = [int(c) for c in subprocess.run(["pgrep", "-P", str(proc.pid)], check=False, capture_output=True,
                                                   text=True).stdout.split()]
        commands = {c: Path(f"/proc/{c}/cmdline").read_bytes().replace(b"\0", b" ") for c in children}
        assert any(b"spawn_main" in c for c in commands.values()), commands  # the planner
        assert any(b"resource_tracker" in c for c in commands.values()), commands
        proc.kill()
        proc.wait(timeout=10)
    finally:
        proc.kill()
    deadline = time.monotonic() + 10
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {c: commands[c] for c in children if _alive(c)}
    for c in left:
        os.kill(c, signal.SIGKILL)
    assert not left, left
    _stopped_part_way_then_rerun(server, tenant, http, f, n)


def test_an_import_records_the_same_events_as_the_api(server: LevyServer, tenant: Tenant,
                                                      admin_http: httpx.Client, http: httpx.Client,
                                                      tmp_path: Path) -> None:
    """Issue 35: each transaction the command writes has the events ``POST /transactions/batch``
    records, in the same transaction, with the transaction as ``GET /transactions/{id}`` returns
    it: planned in a planner process (the default) and in the command's own (``--planners 0``)."""
    register(admin_http, "TX")
    p = uid()
    org = ["--organization", tenant.organization_id, "--database-url", server.database_url]
    for planners, name in (("1", "a"), ("0", "b")):
        src = tmp_path / f"{name}.csv"
        src.write_text(
            "reference_id,type,status,transaction_date,tax_amount,parent_reference_id,line_id,quantity,unit_price,state\n"
            f"{p}-{name}1,sale,finalized,2025-03-10,,,a,1,10000,TX\n"
            f"{p}-{name}2,sale,filed,2025-03-11,,,,1,10000,TX\n"
            f"{p}-{name}3,sale,draft,2025-03-11,,,,1,10000,TX\n"
            f"{p}-{name}4,credit,finalized,2025-03-13,,{p}-{name}1,,1,4000,TX\n"
        )
        r = levy("transactions", "import", str(src), "--planners", planners, *org)
        assert r.returncode == 0 and "4 created" in r.stdout, (r.stdout, r.stderr)
        txn = {t["reference_id"]: t for t in http.get("/transactions", params={"limit": 100}).json()["data"]}
        got = [e for e in admin_http.get("/events", params={"limit": 1000}).json()["data"]
               if e["object_id"] in {txn[f"{p}-{name}{i}"]["id"] for i in range(1, 5)}]
        by_ref = {t["id"]: ref.removeprefix(f"{p}-{name}") for ref, t in txn.items()}
        assert sorted((by_ref[e["object_id"]], e["type"]) for e in got) == [
            ("1", "transaction.created"), ("1", "transaction.finalized"),
            ("2", "transaction.created"), ("2", "transaction.filed"),
            ("3", "transaction.created"),
            ("4", "credit.created"), ("4", "transaction.finalized"),
        ]
        for e in got:
            assert e["data"]["transaction"] == http.get(f"/transactions/{e['object_id']}").json()
