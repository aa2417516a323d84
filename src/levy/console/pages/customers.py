"""Customers: search (active or deleted) and its CSV export, a customer's page with its
exemption certificates (attach with a document, review, download the document), restore."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from levy.app import console_service as people
from levy.console.helpers import (
    Signed,
    admin_only,
    attachment,
    csv_download,
    errors_of,
    plain,
)
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, route
from levy.domain import console_users as rules
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.domain.exemptions import CERTIFICATE_STATUSES, EXEMPTION_TYPES
from levy.domain.pagination import page_request
from levy.v1 import customers_pb2, organization_pb2

if TYPE_CHECKING:
    from levy.console.app import Console


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/customers", c.customers),
        route("GET", "/customers/export.csv", c.customers_export),
        route("GET", "/customers/{customer_id}", c.customer),
        route("POST", "/customers/{customer_id}/restore", c.customer_restore, writes=True),
        route("POST", "/customers/{customer_id}/certificates", c.certificate_create, writes=True, uploads=True),
        route("POST", "/customers/{customer_id}/certificates/{certificate_id}/review", c.certificate_review,
              writes=True),
        route("GET", "/customers/{customer_id}/certificates/{certificate_id}/document", c.certificate_document),
        route("POST", "/customers/{customer_id}/certificates/{certificate_id}/document", c.certificate_upload,
              writes=True, uploads=True),
    ]


class CustomerPages:
    async def customers(self: Console, req: Request, signed: Signed) -> Response:
        text = req.query.get("q", "")[:200]
        deleted = req.query.get("deleted") == "1"
        after = req.query.get("after") or None
        items, more = await self.service.search_customers(signed.user.organization_id, text, deleted=deleted,
                                                          page=page_request(50, after))
        return self._page(200, "customers.html", signed, customers=items, more=more, q=text, deleted=deleted)

    async def customers_export(self: Console, req: Request, signed: Signed) -> Response:
        """The customers the search finds (active, or deleted with ``deleted=1``) as a streamed CSV file."""
        deleted = req.query.get("deleted") == "1"
        return csv_download("deleted-customers.csv" if deleted else "customers.csv",
                            self.service.customers_csv(signed.user.organization_id, req.query.get("q", "")[:200],
                                                       deleted=deleted))

    async def customer(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                       status: int = 200) -> Response:
        cid = req.params["customer_id"]
        cust = await self.call(signed, "levy.v1.CustomerService.GetCustomer",
                               customers_pb2.GetCustomerRequest(customer_id=cid))
        certs: list[dict[str, Any]] = []
        if signed.admin:
            listing = await self.call(signed, "levy.v1.OrganizationService.ListExemptionCertificates",
                                      organization_pb2.ListExemptionCertificatesRequest(customer_id=cid, limit=1000))
            certs = [plain(c) for c in listing.data]
            docs = await self.service.documents_of(signed.user.organization_id, [c["id"] for c in certs])
            for c in certs:
                c["document"] = docs.get(c["id"])
        return self._page(status, "customer.html", signed, customer=plain(cust), certificates=certs,
                          errors=errors or {}, form=req.form, exemption_types=EXEMPTION_TYPES,
                          certificate_statuses=CERTIFICATE_STATUSES, max_upload=self.config.console_max_upload_bytes)

    async def customer_restore(self: Console, req: Request, signed: Signed) -> Response:
        cid = req.params["customer_id"]
        try:
            await self.audited(signed, "levy.v1.OrganizationService.RestoreCustomer",
                               organization_pb2.RestoreCustomerRequest(customer_id=cid), "customer.restored", cid)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return self._page(422, "error.html", signed, title="Cannot restore", detail=e.detail)
        return redirect(self.url_for("customer", customer_id=cid))

    async def certificate_create(self: Console, req: Request, signed: Signed) -> Response:
        cid = req.params["customer_id"]
        f = req.form
        cert = organization_pb2.ExemptionCertificate()
        for name in ("jurisdiction", "exemption_type", "status", "starts_at", "expires_at"):
            if f.get(name, "").strip():
                setattr(cert, name, f[name].strip())
        upload = req.files.get("document")
        org = signed.user.organization_id

        async def store_document(conn: Any, created: Any) -> None:
            if upload is not None:
                await people.attach_document(conn, org, cid, created.id, upload.filename, upload.data,
                                             self.config.console_max_upload_bytes)

        try:
            if upload is not None:  # before anything is written: a bad file is the form's error
                rules.document_type(upload.data, self.config.console_max_upload_bytes)
            created = await self.audited(
                signed, "levy.v1.OrganizationService.CreateExemptionCertificate",
                organization_pb2.CreateExemptionCertificateRequest(customer_id=cid, certificate=cert),
                "certificate.attached", "", f"{cid}: {cert.jurisdiction} {cert.exemption_type}"
                + (f", document {upload.filename[:100]}" if upload else ""), after=store_document)
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.customer(req, signed, errors=errors_of(e), status=422)
        return redirect(self.url_for("customer", customer_id=cid) + f"#{created.id}")

    async def certificate_review(self: Console, req: Request, signed: Signed) -> Response:
        cid, cert_id = req.params["customer_id"], req.params["certificate_id"]
        status = req.form.get("status", "")

        async def write() -> None:
            await self.audited(
                signed, "levy.v1.OrganizationService.UpdateExemptionCertificate",
                organization_pb2.UpdateExemptionCertificateRequest(
                    customer_id=cid, certificate_id=cert_id,
                    certificate=organization_pb2.ExemptionCertificate(status=status)),
                f"certificate.{status if status in ('valid', 'rejected') else 'reviewed'}", cert_id, status)

        return await self.form_or_error(req, signed, write, self.customer,
                                        self.url_for("customer", customer_id=cid) + f"#{cert_id}")

    async def certificate_document(self: Console, req: Request, signed: Signed) -> Response:
        admin_only(signed)  # as the API's certificate methods
        doc = await self.service.document(signed.user.organization_id, req.params["customer_id"],
                                          req.params["certificate_id"])
        return attachment(bytes(doc["data"]), str(doc["content_type"]), str(doc["filename"]))  # type: ignore[call-overload]

    async def certificate_upload(self: Console, req: Request, signed: Signed) -> Response:
        """Attach or replace the document of a certificate on file."""
        admin_only(signed)  # as the API's certificate methods
        cid, cert_id = req.params["customer_id"], req.params["certificate_id"]
        upload = req.files.get("document")
        try:
            await self.service.attach_document(signed.user, cid, cert_id, upload.filename if upload else "",
                                               upload.data if upload else b"")
        except LevyError as e:
            if isinstance(e, NotFound):
                raise
            return await self.customer(req, signed, errors=errors_of(e), status=422)
        return redirect(self.url_for("customer", customer_id=cid) + f"#{cert_id}")
