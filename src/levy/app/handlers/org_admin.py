"""Organization administration (admin-scoped keys): tax settings,
registrations and API keys. Thin: messages in, ``levy.app.organization`` out.

Exemption certificates, overrides, restore and merge live in their own module.
"""

from __future__ import annotations


from google.protobuf import empty_pb2

from levy.app import organization as org
from levy.app.context import CallContext
from levy.app.handlers.messages import optional, present_fields, set_time
from levy.app.registry import handles
from levy.domain.organization import SettingsChange
from levy.store.keys import ApiKeyRecord
from levy.store.organization import OrganizationView, RegistrationRecord
from levy.store.reference_data import ReferenceData
from levy.v1 import organization_pb2 as pb

_SETTINGS_FIELDS = ("name", "default_tax_codes", "exemption_management", "certificate_treatment", "filing_currencies",
                    "nexus_approaching_share")


def _settings(view: OrganizationView, ref: ReferenceData) -> pb.OrganizationSettings:
    out = pb.OrganizationSettings(
        organization_id=view.organization_id,
        name=view.name,
        default_tax_codes=list(view.settings.default_tax_codes),
        exemption_management=view.settings.exemption_management,
        certificate_treatment=view.settings.certificate_treatment,
        filing_currencies=view.settings.filing_currency_map(ref.filing_currencies),
        nexus_approaching_share=str(view.settings.nexus_approaching_share),
    )
    set_time(out.updated_at, view.updated_at)
    return out


@handles("levy.v1.OrganizationService.GetOrganizationSettings")
async def get_settings(req: pb.GetOrganizationSettingsRequest, ctx: CallContext) -> pb.OrganizationSettings:
    async with ctx.uow() as conn:
        return _settings(await org.show_settings(conn, ctx.organization_id), ctx.services.reference)


@handles("levy.v1.OrganizationService.UpdateOrganizationSettings")
async def update_settings(req: pb.UpdateOrganizationSettingsRequest, ctx: CallContext) -> pb.OrganizationSettings:
    body = req.settings
    changes: dict[str, object] = {}
    for name in present_fields(body, req.update_mask.paths, _SETTINGS_FIELDS, "organization settings"):
        if name == "default_tax_codes":
            changes[name] = list(body.default_tax_codes)
        elif name == "filing_currencies":
            changes[name] = dict(body.filing_currencies)
        else:
            changes[name] = optional(body, name)
    async with ctx.uow(write=True) as conn:
        view = await org.change_settings(conn, ctx.organization_id, SettingsChange(**changes),
                                         ref=ctx.services.reference)
    return _settings(view, ctx.services.reference)


def _registration(rec: RegistrationRecord) -> pb.Registration:
    out = pb.Registration(id=rec.id, jurisdiction=rec.jurisdiction, effective_from=rec.effective_from.isoformat())
    if rec.registration_number is not None:
        out.registration_number = rec.registration_number
    if rec.effective_to is not None:
        out.effective_to = rec.effective_to.isoformat()
    set_time(out.created_at, rec.created_at)
    return out


@handles("levy.v1.OrganizationService.ListRegistrations")
async def list_registrations(req: pb.ListRegistrationsRequest, ctx: CallContext) -> pb.ListRegistrationsResponse:
    async with ctx.uow() as conn:
        items, more = await org.list_registrations(conn, ctx.organization_id, optional(req, "limit"), req.starting_after)
    return pb.ListRegistrationsResponse(data=[_registration(r) for r in items], has_more=more)


@handles("levy.v1.OrganizationService.CreateRegistration")
async def create_registration(req: pb.CreateRegistrationRequest, ctx: CallContext) -> pb.Registration:
    r = req.registration
    async with ctx.uow(write=True) as conn:
        rec = await org.add_registration(
            conn,
            ctx.organization_id,
            optional(r, "jurisdiction"),
            optional(r, "registration_number"),
            optional(r, "effective_from"),
            optional(r, "effective_to"),
        )
        ctx.created(rec.id)
    return _registration(rec)


@handles("levy.v1.OrganizationService.DeleteRegistration")
async def delete_registration(req: pb.DeleteRegistrationRequest, ctx: CallContext) -> empty_pb2.Empty:
    async with ctx.uow(write=True) as conn:
        await org.remove_registration(conn, ctx.organization_id, req.registration_id)
    return empty_pb2.Empty()


def _api_key(rec: ApiKeyRecord, secret: str | None = None) -> pb.ApiKey:
    out = pb.ApiKey(id=rec.id, name=rec.name, admin=rec.admin, prefix=rec.prefix)
    if secret is not None:
        out.secret = secret
    set_time(out.created_at, rec.created_at)
    set_time(out.last_used_at, rec.last_used_at)
    set_time(out.revoked_at, rec.revoked_at)
    return out


@handles("levy.v1.OrganizationService.ListApiKeys")
async def list_api_keys(req: pb.ListApiKeysRequest, ctx: CallContext) -> pb.ListApiKeysResponse:
    async with ctx.uow() as conn:
        items, more = await org.list_api_keys(conn, ctx.organization_id, optional(req, "limit"), req.starting_after)
    return pb.ListApiKeysResponse(data=[_api_key(k) for k in items], has_more=more)


@handles("levy.v1.OrganizationService.CreateApiKey")
async def create_api_key(req: pb.CreateApiKeyRequest, ctx: CallContext) -> pb.ApiKey:
    k = req.api_key
    async with ctx.uow(write=True) as conn:
        rec, secret = await org.create_api_key(conn, ctx.organization_id, optional(k, "name"), k.admin)
        ctx.created(rec.id)
    return _api_key(rec, secret)


@handles("levy.v1.OrganizationService.DeleteApiKey")
async def delete_api_key(req: pb.DeleteApiKeyRequest, ctx: CallContext) -> empty_pb2.Empty:
    async with ctx.uow(write=True) as conn:
        rec = await org.revoke_api_key(conn, ctx.organization_id, req.key_id)
    # After the commit: a request authenticated meanwhile cannot re-cache the key as active.
    ctx.services.authenticator.forget(rec.id)
    return empty_pb2.Empty()
