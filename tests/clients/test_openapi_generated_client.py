"""docs/openapi.json as a contract for generators: a maintained generator from PyPI
(openapi-python-client) turns it into a client without a warning, and that client,
imported as generated, works against a real server (SQLite and PostgreSQL): it
creates a customer, calculates, pages a list and reads errors into typed models.
What the generator rejects or mis-types is a defect of the document, mended in
levy.transport.openapi (for example: the Service-Version header is one shared
``ServiceVersion`` type, not one enum per operation)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from levyserver import ROOT, LevyServer, Tenant

PACKAGE = "levy_openapi_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    out = tmp_path_factory.mktemp("generated")
    config = out / "config.yaml"
    config.write_text("post_hooks: []\n")  # no formatter run on the output
    generator = Path(sys.executable).parent / "openapi-python-client"
    run = subprocess.run(
        [str(generator), "generate", "--path", str(ROOT / "docs" / "openapi.json"), "--meta", "none",
         "--output-path", str(out / PACKAGE), "--config", str(config)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "warning" not in (run.stdout + run.stderr).lower(), run.stdout + run.stderr
    sys.path.insert(0, str(out))
    try:
        yield _Generated()
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


class _Generated:
    """The generated package's modules, by dotted name below it."""

    def module(self, dotted: str) -> ModuleType:
        return importlib.import_module(f"{PACKAGE}.{dotted}")


def test_service_version_is_one_type(generated: Any) -> None:
    folder = Path(generated.module("models").__file__).parent
    assert (folder / "service_version.py").exists()
    assert not [p.name for p in folder.glob("*_service_version.py")]


def test_fields_always_in_responses_are_not_optional(generated: Any) -> None:
    """Fields the spec requires in a response (2.1: id, source_id, source,
    source_account_id, created_at, updated_at) are plain values in the generated
    models; the ones a response may leave null stay optional (set_in_responses)."""
    models = generated.module("models")
    customer = models.Customer.__annotations__
    assert {k: customer[k] for k in ("source_id", "source", "source_account_id", "created_at", "updated_at")} == {
        "source_id": "str", "source": "str", "source_account_id": "str",
        "created_at": "datetime.datetime", "updated_at": "datetime.datetime"}
    assert customer["name"] == "None | str"
    assert models.Product.__annotations__["name"] == "str"
    assert models.Transaction.__annotations__["status"] == "str"
    assert models.Registration.__annotations__["jurisdiction"] == "str"


def test_generated_client_against_a_real_server(generated: Any, server: LevyServer, tenant: Tenant) -> None:
    client_mod = generated.module("client")
    models = generated.module("models")
    api = "api.{}".format
    create_customer = generated.module(api("customer_service.create_customer"))
    list_customers = generated.module(api("customer_service.list_customers"))
    create_calculation = generated.module(api("calculation_service.create_calculation"))
    create_registration = generated.module(api("organization_service.create_registration"))
    list_codes = generated.module(api("reference_service.list_product_tax_codes"))

    # the key as X-API-Key, as the document's ApiKeyHeader scheme says
    client = client_mod.AuthenticatedClient(base_url=server.http_url, token=tenant.admin_key, prefix="",
                                            auth_header_name="X-API-Key")
    version = models.ServiceVersion("hydrogen.2025-04-15")

    made = create_customer.sync_detailed(client=client, body=models.CustomerInput(source_id="gen-1", name="Gen"),
                                         service_version=version)
    assert made.status_code == 201
    customer = made.parsed
    assert isinstance(customer, models.Customer) and customer.id.startswith("cust_")
    assert isinstance(customer.created_at, datetime) and customer.email is None

    # an error, read into the JSON:API model: the duplicate points at the first customer
    dup = create_customer.sync_detailed(client=client, body=models.CustomerInput(source_id="gen-1"))
    assert dup.status_code == 409
    assert isinstance(dup.parsed, models.JsonApiErrorBody)
    error = dup.parsed.errors[0]
    assert (error.status, error.code) == ("409", "duplicate_customer")
    assert error.meta.additional_properties["existing_customer_id"] == customer.id

    reg = create_registration.sync(client=client, body=models.RegistrationInput(jurisdiction="US-ST-CA",
                                                                                  effective_from="2020-01-01"))
    assert isinstance(reg, models.Registration)
    body = models.CreateCalculationRequestBody.from_dict({"line_items": [{
        "id": "l1", "quantity": "1", "unit_price": "10000",
        # No postal code: state-level tax only, whatever local rates other tests imported into the shared server.
        "customer": {"address": {"line1": "1 Main St", "city": "Los Angeles", "state": "CA", "country": "US"}}}]})
    calc = create_calculation.sync(client=client, body=body)
    assert isinstance(calc, models.Calculation)
    # California 6% state + 1.25% statewide local of 10000 cents: 600 + 125 = 725
    assert calc.tax_amount == "725"
    assert [t.tax_amount for t in calc.line_items[0].taxes] == ["600", "125"]

    # the calculation endpoint's own error shape, typed
    bad = create_calculation.sync_detailed(client=client, body=models.CreateCalculationRequestBody.from_dict(
        {"line_items": [{"id": "l1", "quantity": "a", "unit_price": "1"}]}))
    assert bad.status_code == 422 and isinstance(bad.parsed, models.CalculationValidationError)
    assert bad.parsed.detail[0].loc == ["body", "line_items", 0, "quantity"]

    # paging: two pages of two meet the same codes as one page of four
    first = list_codes.sync(client=client, limit=2)
    second = list_codes.sync(client=client, limit=2, starting_after=first.data[-1].code)
    four = list_codes.sync(client=client, limit=4)
    assert [c.code for c in first.data + second.data] == [c.code for c in four.data]
    assert first.has_more and second.has_more

    for i in range(2):
        create_customer.sync(client=client, body=models.CustomerInput(source_id=f"gen-page-{i}"))
    page = list_customers.sync(client=client, limit=2)
    assert page.has_more and len(page.data) == 2
    rest = list_customers.sync(client=client, limit=2, starting_after=page.data[-1].id)
    assert not rest.has_more and [c.id for c in rest.data] == [customer.id]  # newest first: the first is last

    anonymous = client_mod.Client(base_url=server.http_url)
    denied = list_codes.sync_detailed(client=anonymous)
    assert denied.status_code == 401 and denied.parsed.errors[0].code == "authentication_error"
