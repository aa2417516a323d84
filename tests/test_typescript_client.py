"""The TypeScript clients (clients/typescript): gRPC stubs generated from protos/ by
ts-proto and a REST client typed from docs/openapi.json (openapi-typescript +
openapi-fetch), compiled with tsc --strict, run by Node against a real server on
SQLite and PostgreSQL. Each Node program (src/example.ts over gRPC,
src/rest-example.ts over REST) prints a JSON report; the figures it must show are
worked out here by hand.

The fixture installs the npm project (`npm ci`, from the committed
package-lock.json) when node_modules is missing or older than the lock file,
then generates the stubs and compiles (`npm run build`); it skips only when
node/npm are absent or the npm registry cannot be reached, and fails instead in
CI (LEVY_TEST_REQUIRE_SERVICES, set by .ci/run)."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from levyserver import ROOT, LevyServer, Tenant, create_tenant, start_server

CLIENT = ROOT / "clients" / "typescript"
TAX_CODES = json.loads((ROOT / "src" / "levy" / "data" / "catalogue" / "product_tax_codes.json").read_text())
# Burst 40, then one call per 20 s: the program's own calls (9) stay far below the
# burst, and a key exhausted on purpose waits 1 / 0.05 = 20 s for its next call.
RATE_ENV = {"LEVY_RATE_LIMIT_PER_SECOND": "0.05", "LEVY_RATE_LIMIT_BURST": "40"}


def _npm(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["npm", *args], cwd=CLIENT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHON": str(ROOT / ".venv" / "bin" / "python")})


def _cannot(reason: str) -> None:
    """Skip, except in CI (.ci/run sets LEVY_TEST_REQUIRE_SERVICES), where the test must run."""
    if os.environ.get("LEVY_TEST_REQUIRE_SERVICES"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def node_client() -> Path:
    if not (shutil.which("node") and shutil.which("npm")):
        _cannot("the TypeScript client test needs node and npm on PATH")
    installed = CLIENT / "node_modules" / ".package-lock.json"
    lock = CLIENT / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        r = _npm("ci", "--no-audit", "--no-fund", timeout=600)
        if r.returncode != 0:
            _cannot(f"npm ci failed (is the npm registry reachable?): {r.stderr[-2000:]}")
    r = _npm("run", "build", timeout=600)  # scripts/gen-clients typescript, openapi-typescript, then tsc
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert '"strict": true' in (CLIENT / "tsconfig.json").read_text()
    return CLIENT / "dist" / "example.js"


@pytest.fixture
def limited(tmp_path: Path, database_url: str) -> Iterator[LevyServer]:
    srv = start_server(database_url, tmp_path, extra_env=RATE_ENV)
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log()


def _run(example: Path, server: LevyServer, tenant: Tenant) -> dict[str, Any]:
    throttled = create_tenant(server.database_url)
    env = {**os.environ, "LEVY_GRPC_TARGET": server.grpc_target, "LEVY_API_KEY": tenant.key,
           "LEVY_ADMIN_KEY": tenant.admin_key, "LEVY_THROTTLED_KEY": throttled.key}
    r = subprocess.run(["node", str(example)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr + server.log()[-3000:]
    return json.loads(r.stdout)


def test_node_client_first_calls_and_rich_errors(node_client: Path, limited: LevyServer) -> None:
    tenant = create_tenant(limited.database_url)
    report = _run(node_client, limited, tenant)
    assert report["registration"] == "US-ST-TX"

    codes = sorted(c["code"] for c in TAX_CODES["tax_codes"])
    assert report["tax_codes"] == {"pages": math.ceil(len(codes) / 50), "count": len(codes),
                                   "first": codes[0], "last": codes[-1]}
    assert report["tax_codes"]["pages"] >= 3  # 115 codes today: 50 + 50 + 15

    customer = report["customer"]
    assert customer["id"].startswith("cust_") and customer["name"] == "Ada from Node"

    # 2 x 4999 = 9998 cents to Texas, state rate 6.25 % (registered, no postal code: no local rate):
    # 9998 x 0.0625 = 624.875 -> 625 (ROUND_HALF_UP).
    assert report["calculation"]["tax_amount"] == "625"
    assert report["transaction"]["id"].startswith("txn_")
    assert (report["transaction"]["draft_status"], report["transaction"]["status"]) == ("draft", "finalized")
    assert report["transaction"]["tax_amount"] == "625"

    bad = report["validation_error"]
    assert bad["code"] == 3 and bad["reason"] == "validation_error" and bad["httpStatus"] == 422  # INVALID_ARGUMENT
    assert bad["domain"] == "levy.dev"
    assert [(v["field"], v["reason"]) for v in bad["fieldViolations"]] == [("/line_items/1/quantity", "value_error")]
    # ErrorBody carries the same problem as the JSON:API error object a REST caller gets.
    assert [(e["status"], e["code"], e["source"]["pointer"]) for e in bad["errors"]] == [
        ("422", "validation_error", "/line_items/1/quantity")]
    assert bad["detailTypes"][0] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert bad["detailTypes"][-1] == "type.googleapis.com/levy.v1.ErrorBody"

    limited_ = report["rate_limited"]
    assert limited_["after_calls"] == 41  # the burst of 40, then the 41st call is refused
    assert limited_["code"] == 8 and limited_["reason"] == "rate_limit_error"  # RESOURCE_EXHAUSTED
    assert limited_["httpStatus"] == 429 and limited_["errors"][0]["code"] == "rate_limit_error"
    assert 1 <= limited_["retryDelaySeconds"] <= 20  # the next token comes within 1 / 0.05 s
    assert "type.googleapis.com/google.rpc.RetryInfo" in limited_["detailTypes"]

    # Run again as the same organization: Texas is already registered (ALREADY_EXISTS `conflict`, the
    # existing registration's id in meta), which the program reports and goes on from.
    again = _run(node_client, limited, tenant)
    assert again["registration"].startswith("already registered: reg_")
    assert again["calculation"]["tax_amount"] == "625" and again["transaction"]["status"] == "finalized"


def test_node_rest_client_typed_from_openapi(node_client: Path, server: LevyServer) -> None:
    tenant = create_tenant(server.database_url)
    env = {**os.environ, "LEVY_BASE_URL": server.http_url, "LEVY_API_KEY": tenant.key,
           "LEVY_ADMIN_KEY": tenant.admin_key}
    r = subprocess.run(["node", str(node_client.parent / "rest-example.js")], capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr + server.log()[-3000:]
    report = json.loads(r.stdout)

    assert report["registration"] == "US-ST-TX"
    created = report["customers"]["created"]
    assert len(created) == 3 and all(c.startswith("cust_") for c in created)
    # A new organization holds only these three: newest first, two a page -> pages of 2 and 1.
    assert report["customers"]["seen"] == created[::-1]
    assert report["customers"]["pages"] == 2
    assert report["customer"] == {"id": created[0], "name": "Customer 1", "source_id": report["customer"]["source_id"]}
    assert report["customer"]["source_id"].endswith("-1")

    # 2 x 4999 = 9998 cents to Texas at the state rate 6.25 % (no postal code: no local rate):
    # 9998 x 0.0625 = 624.875 -> 625 (ROUND_HALF_UP), one row.
    assert report["calculation"] == {"tax_amount": "625", "rows": 1}
    t = report["transaction"]
    assert t["id"].startswith("txn_") and (t["draft_status"], t["status"]) == ("draft", "finalized")
    assert t["tax_amount"] == "625" and t["reference_id"].startswith("INV-")

    # The calculation endpoint's 422 is spec 7.2's `detail` list: the client turns each item into an
    # error object whose code is the item's `type` and whose pointer comes from its `loc`.
    assert report["validation_error"] == {"status": 422, "code": "value_error",
                                          "pointers": ["/line_items/1/quantity"], "isValidation": True}
    assert report["not_found"] == {"status": 404, "code": "not_found", "isNotFound": True, "requestId": True}
