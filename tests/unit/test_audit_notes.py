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


def test_a_create_names_its_new_object_after_the_path_ids() -> None:
    from levy.app.audit import AuditNote

    note = AuditNote("org_1", "API key k (p)", "exemption_certificate.create", "cust_1", "via rest")
    assert note.record().target == "cust_1"
    note.created = "cexc_9"
    assert note.record().target == "cust_1/cexc_9"
    assert AuditNote("org_1", "a", "customer.create", "", "", created="cust_2").record().target == "cust_2"


def test_an_import_batch_names_its_new_transactions_as_far_as_they_fit() -> None:
    from levy.app.audit import import_detail

    assert import_detail(["txn_a", "txn_b"]) == "2 created: txn_a txn_b"
    # 10 ids of 5 characters in 40: "10 created:" (11), then " txn_N" (6) each while the
    # remainder's " (and N more)" (13) still fits: 11 + 6k + 13 <= 40 for k <= 2 ids.
    ids = [f"txn_{i}" for i in range(10)]
    assert import_detail(ids, limit=40) == "10 created: txn_0 txn_1 (and 8 more)"
    assert len(import_detail(ids, limit=40)) <= 40
