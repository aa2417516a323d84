"""The audit entries of API calls (levy.app.audit): the action, the object and the detail."""

from __future__ import annotations

from types import SimpleNamespace

from levy.app.audit import action_of, note_for
from levy.app.registry import method_by_name
from levy.v1 import customers_pb2, organization_pb2


def test_the_action_is_the_rpc_as_resource_dot_verb() -> None:
    assert action_of("CreateExemptionCertificate") == "exemption_certificate.create"
    assert action_of("DeleteApiKey") == "api_key.delete"
    assert action_of("Ping") == "ping"


def test_the_note_names_the_key_the_path_ids_and_what_names_a_new_object() -> None:
    key = SimpleNamespace(organization_id="org_1", name="billing", prefix="levy_sk_ab")
    create = method_by_name()["levy.v1.CustomerService.CreateCustomer"]
    note = note_for(create, customers_pb2.CreateCustomerRequest(customer=customers_pb2.Customer(source_id="c-1")),
                    key, "rest")
    assert (note.actor, note.action, note.target, note.detail) == (
        "API key billing (levy_sk_ab)", "customer.create", "", "via rest; source_id=c-1")
    review = method_by_name()["levy.v1.OrganizationService.UpdateExemptionCertificate"]
    note = note_for(review, organization_pb2.UpdateExemptionCertificateRequest(
        customer_id="cust_1", certificate_id="cexc_2"), key, "grpc")
    assert (note.action, note.target, note.detail) == ("exemption_certificate.update", "cust_1/cexc_2", "via grpc")
