"""Customers (spec 2.1, 3.2, 4.1, 4.2) and the customer-centric organization
operations: exemption certificates, overrides, restore and merge.

Thin: request message -> validated domain values -> use case in
``levy.app.customers`` (one unit of work) -> response message.
"""

from __future__ import annotations

import functools
from datetime import date, datetime, timezone
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from google.protobuf import message

from levy.app import customers as uc
from levy.app.context import CallContext
from levy.app.error_objects import error_object
from levy.app.handlers.messages import page_of, present_fields
from levy.app.registry import handles, input_names, output_only_names
from levy.app.services import retry_write_conflicts
from levy.domain.customers import BatchItem, CustomerRecord, CustomerSources, validate_customer_fields
from levy.domain.errors import RequiredField, ValidationFailed
from levy.domain.exemptions import Certificate, covering_certificates, jurisdiction_name
from levy.v1 import customers_pb2 as pb
from levy.v1 import organization_pb2 as opb
from google.protobuf import empty_pb2
from google.protobuf.timestamp_pb2 import Timestamp

T = TypeVar("T")

# Read-only and writable fields, from the protos' OUTPUT_ONLY annotations.
CUSTOMER_INPUT = input_names(pb.Customer.DESCRIPTOR)
CUSTOMER_READ_ONLY = output_only_names(pb.Customer.DESCRIPTOR)
CERTIFICATE_INPUT = input_names(opb.ExemptionCertificate.DESCRIPTOR)
CERTIFICATE_READ_ONLY = output_only_names(opb.ExemptionCertificate.DESCRIPTOR)


# ------------------------------------------------------------------ message <-> values


def _is_set(msg: message.Message, name: str) -> bool:
    return msg.HasField(name) if _has_presence(msg.DESCRIPTOR, name) else bool(getattr(msg, name))


@functools.cache
def _has_presence(descriptor: Any, name: str) -> bool:
    return bool(descriptor.fields_by_name[name].has_presence)


@functools.lru_cache(maxsize=1024)
def _timestamp_parts(value: datetime) -> tuple[int, int]:
    """(seconds, nanos) of ``Timestamp.FromDatetime(value)``; a batch's rows share a few instants."""
    ts = Timestamp()
    ts.FromDatetime(value.astimezone(timezone.utc))
    return ts.seconds, ts.nanos


def _reject_read_only(msg: message.Message, names: tuple[str, ...], prefix: str) -> list[ValidationFailed]:
    """gRPC callers can set output-only fields; refuse them like the gateway does."""
    return _read_only_errors([n for n in names if _is_set(msg, n)], prefix)


def _read_only_errors(sent: list[str], prefix: str) -> list[ValidationFailed]:
    return [
        ValidationFailed(f"'{n}' is read-only and cannot be set.", pointer=f"{prefix}/{n}", type="read_only")
        for n in sent
    ]


@functools.lru_cache(maxsize=1024)
def _datetime_of(seconds: int, nanos: int) -> datetime:
    """``Timestamp.ToDatetime(tzinfo=UTC)``; a batch's items share a few instants."""
    return Timestamp(seconds=seconds, nanos=nanos).ToDatetime(tzinfo=timezone.utc)


def customer_values(msg: pb.Customer, prefix: str, *, sources: CustomerSources,
                    present: list[str] | None = None) -> dict[str, Any]:
    """Validated customer input. ``present`` given: a partial update (absent or
    null fields are ``None``, meaning keep the current value)."""
    # One ListFields() instead of a HasField() per field: it lists exactly the fields
    # ``_is_set`` counts (present ones; ``id``, which has no presence, when not empty).
    sent = {f.name: v for f, v in msg.ListFields()}
    errors = _read_only_errors([n for n in CUSTOMER_READ_ONLY if n in sent], prefix)
    names = present if present is not None else [n for n in CUSTOMER_INPUT if n in sent]
    data = {n: sent.get(n) for n in names if n != "source_updated_at"}
    try:
        values = validate_customer_fields(data, prefix, sources=sources, partial=present is not None)
    except ValidationFailed as e:
        errors.append(e)
    if errors:
        raise ValidationFailed.many(errors)
    ts = sent.get("source_updated_at")
    values["source_updated_at"] = None if ts is None else _datetime_of(ts.seconds, ts.nanos)
    return values


def customer_pb(rec: CustomerRecord, exemption: pb.CustomerExemption | None = None) -> pb.Customer:
    out = pb.Customer()
    fill_customer(out, rec)
    if exemption is not None:
        out.exemption.CopyFrom(exemption)
    return out


def fill_customer(out: pb.Customer, rec: CustomerRecord) -> None:
    """Set the stored customer's fields on an empty ``out`` (a batch result's ``customer``:
    filled in place rather than built and copied)."""
    out.id = rec.id
    out.source_id = rec.source_id
    out.source = rec.source
    out.source_account_id = rec.source_account_id
    if rec.name is not None:
        out.name = rec.name
    if rec.email is not None:
        out.email = rec.email
    if rec.merged_into_customer_id is not None:
        out.merged_into_customer_id = rec.merged_into_customer_id
    for name in ("source_updated_at", "created_at", "updated_at"):
        value = getattr(rec, name)
        if value is not None:
            ts = getattr(out, name)
            ts.seconds, ts.nanos = _timestamp_parts(value)


def overrides_pb(rec: CustomerRecord) -> pb.ExemptionOverrides:
    return pb.ExemptionOverrides(
        exempt=rec.override_exempt, resale=rec.override_resale, manufacturing=rec.override_manufacturing
    )


def exemption_pb(rec: CustomerRecord, certificates: list[Certificate], today: date) -> pb.CustomerExemption:
    out = pb.CustomerExemption(overrides=overrides_pb(rec))
    for c in covering_certificates(certificates, today):
        row = out.jurisdictions.add(
            jurisdiction=c.jurisdiction, jurisdiction_name=jurisdiction_name(c.jurisdiction),
            exemption_type=c.exemption_type, status=c.status, certificate_id=c.id,
        )
        if c.starts_at is not None:
            row.starts_at = c.starts_at.isoformat()
        if c.expires_at is not None:
            row.expires_at = c.expires_at.isoformat()
    if rec.exemption_updated_at is not None:
        out.updated_at.FromDatetime(rec.exemption_updated_at.astimezone(timezone.utc))
    return out


def certificate_pb(c: Certificate) -> opb.ExemptionCertificate:
    out = opb.ExemptionCertificate(
        id=c.id, customer_id=c.customer_id, jurisdiction=c.jurisdiction, exemption_type=c.exemption_type,
        status=c.status,
    )
    if c.starts_at is not None:
        out.starts_at = c.starts_at.isoformat()
    if c.expires_at is not None:
        out.expires_at = c.expires_at.isoformat()
    out.created_at.FromDatetime(c.created_at.astimezone(timezone.utc))
    out.updated_at.FromDatetime(c.updated_at.astimezone(timezone.utc))
    return out


async def _write(ctx: CallContext, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """Run a use case in one write unit of work of the caller's organization."""
    async with ctx.uow(write=True) as conn:
        return await fn(conn, ctx.organization_id, *args)


async def _create(ctx: CallContext, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """:func:`_write` of a use case that makes an object (with an ``id``), named in the call's audit entry."""
    async with ctx.uow(write=True) as conn:
        made = await fn(conn, ctx.organization_id, *args)
        ctx.created(made.id)  # type: ignore[attr-defined]
        return made


async def _read(ctx: CallContext, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    async with ctx.uow() as conn:
        return await fn(conn, ctx.organization_id, *args)


# ------------------------------------------------------------------ CustomerService


@handles("levy.v1.CustomerService.CreateCustomer")
async def create_customer(req: pb.CreateCustomerRequest, ctx: CallContext) -> pb.Customer:
    values = customer_values(req.customer, "", sources=ctx.services.reference.customer_sources)
    rec = await _create(ctx, uc.create_customer, values)
    return customer_pb(rec)


@handles("levy.v1.CustomerService.ListCustomers")
async def list_customers(req: pb.ListCustomersRequest, ctx: CallContext) -> pb.ListCustomersResponse:
    page = page_of(req)
    recs, has_more = await _read(ctx, uc.list_customers, page)
    return pb.ListCustomersResponse(data=[customer_pb(r) for r in recs], has_more=has_more)


@handles("levy.v1.CustomerService.GetCustomer")
async def get_customer(req: pb.GetCustomerRequest, ctx: CallContext) -> pb.Customer:
    rec, certs = await _read(ctx, uc.get_customer, req.customer_id)
    return customer_pb(rec, exemption_pb(rec, certs, uc.today()))


@handles("levy.v1.CustomerService.UpdateCustomer")
async def update_customer(req: pb.UpdateCustomerRequest, ctx: CallContext) -> pb.Customer:
    patch = customer_values(req.customer, "", sources=ctx.services.reference.customer_sources,
                            present=present_fields(req.customer, req.update_mask.paths, CUSTOMER_INPUT, "customer"))
    rec = await _write(ctx, uc.update_customer, req.customer_id, patch, ctx.services.reference.customer_sources)
    return customer_pb(rec)


@handles("levy.v1.CustomerService.DeleteCustomer")
async def delete_customer(req: pb.DeleteCustomerRequest, ctx: CallContext) -> empty_pb2.Empty:
    await _write(ctx, uc.delete_customer, req.customer_id)
    return empty_pb2.Empty()


@handles("levy.v1.CustomerService.BatchUpsertCustomers")
async def batch_upsert(req: pb.BatchUpsertCustomersRequest, ctx: CallContext) -> pb.BatchUpsertCustomersResponse:
    items: list[BatchItem] = []
    sources = ctx.services.reference.customer_sources
    for i, m in enumerate(req.data):
        errors = list(ctx.item_errors.get(i, ()))
        values = None
        if not errors:
            try:
                values = customer_values(m, f"/data/{i}", sources=sources)
            except ValidationFailed as e:
                errors = e.items
        items.append(BatchItem(i, values, errors))

    stored = await retry_write_conflicts(lambda: _write(ctx, uc.batch_upsert, items),
                                         in_request_transaction=ctx.request_tx is not None)
    resp = pb.BatchUpsertCustomersResponse(object="batch")
    counts = dict.fromkeys(("created", "updated", "stale", "deleted", "failed"), 0)
    for it in items:
        counts[it.status] += 1
        out = resp.data.add(index=it.index, status=it.status)
        if it.status in ("created", "updated", "stale"):
            fill_customer(out.customer, stored[it.customer_id])  # type: ignore[index]
        elif it.status == "failed":
            out.errors.extend(error_object(e) for e in it.errors)
    resp.summary.CopyFrom(pb.BatchSummary(**counts))
    return resp


# ------------------------------------------------------------------ OrganizationService (customer side)


def _certificate_input(msg: opb.ExemptionCertificate, present: list[str] | None = None) -> dict[str, str | None]:
    errors = _reject_read_only(msg, CERTIFICATE_READ_ONLY, "")
    if errors:
        raise ValidationFailed.many(errors)
    names = present if present is not None else list(CERTIFICATE_INPUT)
    return {n: (getattr(msg, n) if msg.HasField(n) else None) for n in names}


@handles("levy.v1.OrganizationService.CreateExemptionCertificate")
async def create_certificate(req: opb.CreateExemptionCertificateRequest, ctx: CallContext) -> opb.ExemptionCertificate:
    raw = _certificate_input(req.certificate)
    cert = await _create(ctx, uc.add_certificate, req.customer_id, raw)
    return certificate_pb(cert)


@handles("levy.v1.OrganizationService.ListExemptionCertificates")
async def list_certificates(
    req: opb.ListExemptionCertificatesRequest, ctx: CallContext
) -> opb.ListExemptionCertificatesResponse:
    page = page_of(req)
    certs, has_more = await _read(ctx, uc.list_certificates, req.customer_id, page)
    return opb.ListExemptionCertificatesResponse(data=[certificate_pb(c) for c in certs], has_more=has_more)


@handles("levy.v1.OrganizationService.UpdateExemptionCertificate")
async def update_certificate(req: opb.UpdateExemptionCertificateRequest, ctx: CallContext) -> opb.ExemptionCertificate:
    raw = _certificate_input(req.certificate, present_fields(req.certificate, req.update_mask.paths, CERTIFICATE_INPUT, "certificate"))
    cert = await _write(ctx, uc.update_certificate, req.customer_id, req.certificate_id, raw)
    return certificate_pb(cert)


@handles("levy.v1.OrganizationService.DeleteExemptionCertificate")
async def delete_certificate(req: opb.DeleteExemptionCertificateRequest, ctx: CallContext) -> empty_pb2.Empty:
    await _write(ctx, uc.remove_certificate, req.customer_id, req.certificate_id)
    return empty_pb2.Empty()


@handles("levy.v1.OrganizationService.UpdateExemptionOverrides")
async def update_overrides(req: opb.UpdateExemptionOverridesRequest, ctx: CallContext) -> pb.ExemptionOverrides:
    names = ("exempt", "resale", "manufacturing")
    present = present_fields(req.overrides, req.update_mask.paths, names, "exemption overrides")
    values = {n: (getattr(req.overrides, n) if req.overrides.HasField(n) else None) for n in present}
    rec = await _write(ctx, uc.set_overrides, req.customer_id, values)
    return overrides_pb(rec)


@handles("levy.v1.OrganizationService.RestoreCustomer")
async def restore_customer(req: opb.RestoreCustomerRequest, ctx: CallContext) -> pb.Customer:
    rec = await _write(ctx, uc.restore_customer, req.customer_id)
    return customer_pb(rec)


@handles("levy.v1.OrganizationService.MergeCustomer")
async def merge_customer(req: opb.MergeCustomerRequest, ctx: CallContext) -> pb.Customer:
    if not req.HasField("into_customer_id") or not req.into_customer_id.strip():
        raise RequiredField("into_customer_id", pointer="/into_customer_id")
    rec = await _write(ctx, uc.merge_customer, req.customer_id, req.into_customer_id)
    return customer_pb(rec)
