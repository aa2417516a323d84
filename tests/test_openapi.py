"""The OpenAPI document: valid OpenAPI 3.1, generated from the protos (the
stale check is `scripts/gen-protos --check`, run by tests/test_contract.py),
served at GET /openapi.json without a key, and saying what the gateway does."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from openapi_spec_validator import validate

from levyserver import ROOT, LevyServer
from levy.app.registry import is_output_only, methods
from levy.transport.openapi import build_document, served_document

DOC: dict[str, Any] = json.loads((ROOT / "docs" / "openapi.json").read_text())


def _schema(ref: dict[str, Any]) -> dict[str, Any]:
    return DOC["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]


def test_document_is_valid_openapi_31() -> None:
    assert DOC["openapi"] == "3.1.0"
    validate(DOC)


def test_served_copy_is_the_committed_document() -> None:
    assert json.loads(served_document()) == DOC


def test_generation_matches_the_document_apart_from_descriptions() -> None:
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("description", "summary")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    assert strip(build_document()) == strip(DOC)


def test_get_openapi_json_needs_no_key(server: LevyServer) -> None:
    r = httpx.get(server.http_url + "/openapi.json", timeout=30)
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == DOC


@pytest.mark.parametrize("m", methods(), ids=lambda m: m.name)
def test_every_operation_is_described(m: Any) -> None:
    op = DOC["paths"][m.http_path][m.http_method.lower()]
    assert op["operationId"] == m.name
    statuses = set(op["responses"])
    assert str(m.success_status) in statuses
    assert {"400", "401", "404", "405", "422", "429", "500", "501", "503"} <= statuses
    assert ("403" in statuses) == m.policy.admin_only
    assert ("413" in statuses) == bool(m.http.body)
    assert op["security"] == [{"ApiKeyHeader": []}, {"BearerAuth": []}]
    params = {p.get("name") or p["$ref"].rsplit("/", 1)[-1] for p in op["parameters"]}
    assert "Service-Version" in params
    assert ("Idempotency-Key" in params) == m.policy.idempotent
    if m.success_status == 204:
        assert "content" not in op["responses"]["204"]
    for code, resp in op["responses"].items():
        assert resp["headers"]["X-Request-Id"]["$ref"].endswith("X-Request-Id")
        if code == "429":
            assert "Retry-After" in resp["headers"]
    if m.http.body:
        assert "requestBody" in op


def test_input_schemas_leave_out_read_only_fields_and_refuse_unknown_properties() -> None:
    for m in methods():
        body = m.http.body
        if not body or body == "*":
            continue
        desc = m.request_cls.DESCRIPTOR.fields_by_name[body].message_type
        op = DOC["paths"][m.http_path][m.http_method.lower()]
        schema = _schema(op["requestBody"]["content"]["application/json"]["schema"])
        assert schema["additionalProperties"] is False
        for f in desc.fields:
            assert (f.name in schema["properties"]) == (not is_output_only(f)), (m.name, f.name)


def test_limits_nullability_and_shapes() -> None:
    batch = DOC["paths"]["/customers/batch"]["post"]
    body = _schema(batch["requestBody"]["content"]["application/json"]["schema"])
    assert body["properties"]["data"]["maxItems"] == 1000
    cust_in = DOC["components"]["schemas"]["CustomerInput"]
    assert cust_in["properties"]["source_id"]["maxLength"] == 255
    assert cust_in["properties"]["source_id"]["minLength"] == 1
    assert "null" in cust_in["properties"]["name"]["type"]
    cust = DOC["components"]["schemas"]["Customer"]
    assert cust["properties"]["created_at"]["format"] == "date-time"
    assert cust["properties"]["created_at"]["readOnly"] is True
    assert cust["properties"]["id"]["type"] == "string"  # no presence: never null
    assert cust["properties"]["merged_into_customer_id"]["type"] == ["string", "null"]
    assert set(cust["required"]) == set(cust["properties"])  # every field is rendered
    result = DOC["components"]["schemas"]["BatchResult"]
    assert result["properties"]["errors"]["type"] == ["array", "null"]  # null_when_empty
    calc = DOC["paths"]["/calculations"]["post"]
    assert calc["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "CalculationValidationError")
    assert "text/plain" in calc["responses"]["500"]["content"]
    assert calc["responses"]["401"]["content"]["application/json"]["schema"]["$ref"].endswith("JsonApiErrorBody")
    names = {p.get("$ref", "").rsplit("/", 1)[-1] for p in calc["parameters"]}
    assert "X-Include-Unregistered" in names
    lst = DOC["paths"]["/customers"]["get"]
    limit = next(p for p in lst["parameters"] if p.get("name") == "limit")
    assert limit["schema"]["minimum"] == 1 and limit["schema"]["maximum"] == 1000
    # descriptions come from the proto comments
    assert "newest first" in lst["description"]
    links = DOC["paths"]["/customers"]["post"]["responses"]["201"]["links"]
    assert links["GetCustomer"]["parameters"]["customer_id"] == "$response.body#/id"
