"""The organization's page: its settings and its registrations (added, removed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from levy.console.helpers import Signed, codes, errors_of, plain
from levy.console.http import Request, Response, redirect
from levy.console.routing import Route, confirmed, route
from levy.domain.errors import LevyError, NotFound, PermissionDenied
from levy.domain.settings import CERTIFICATE_TREATMENTS
from levy.v1 import organization_pb2

if TYPE_CHECKING:
    from levy.console.app import Console


def routes(c: Console) -> list[Route]:
    return [
        route("GET", "/organization", c.organization),
        route("POST", "/organization/settings", c.settings_update, writes=True),
        route("POST", "/organization/registrations", c.registration_create, writes=True),
        *confirmed("/organization/registrations/{registration_id}/remove", c.registration_remove, c.confirm),
    ]


def filing_currencies(text: str) -> dict[str, str]:
    """``"US=USD, GB=GBP"`` (commas or lines) from the organization form: country -> currency; a
    pair without ``=`` keeps an empty currency, which the API refuses at its country."""
    pairs = (p.strip() for p in text.replace("\n", ",").split(","))
    return {k.strip().upper(): v.strip().upper() for k, _, v in (p.partition("=") for p in pairs if p)}


class SettingsPages:
    async def organization(self: Console, req: Request, signed: Signed, *, errors: dict[str, str] | None = None,
                           status: int = 200, saved: bool = False) -> Response:
        settings = await self.call(signed, "levy.v1.OrganizationService.GetOrganizationSettings",
                                   organization_pb2.GetOrganizationSettingsRequest())
        regs = await self.call(signed, "levy.v1.OrganizationService.ListRegistrations",
                               organization_pb2.ListRegistrationsRequest(limit=1000))
        return self._page(status, "organization.html", signed, settings=plain(settings),
                          registrations=[plain(r) for r in regs.data], errors=errors or {}, saved=saved,
                          treatments=CERTIFICATE_TREATMENTS, form=req.form)

    async def settings_update(self: Console, req: Request, signed: Signed) -> Response:
        f = req.form
        default_codes = codes(f.get("default_tax_codes", ""))
        currencies = filing_currencies(f.get("filing_currencies", ""))
        body = organization_pb2.OrganizationSettings(
            name=f.get("name", "").strip(), default_tax_codes=default_codes,
            exemption_management=f.get("exemption_management") == "on",
            certificate_treatment=f.get("certificate_treatment", ""), filing_currencies=currencies)
        mask = ["name", "default_tax_codes", "exemption_management", "certificate_treatment", "filing_currencies"]
        request = organization_pb2.UpdateOrganizationSettingsRequest(settings=body)
        request.update_mask.paths.extend(mask)
        try:
            await self.audited(signed, "levy.v1.OrganizationService.UpdateOrganizationSettings", request,
                               "settings.changed", signed.user.organization_id,
                               f"name={body.name}; default_tax_codes={','.join(default_codes)}; "
                               f"exemption_management={body.exemption_management}; "
                               f"certificate_treatment={body.certificate_treatment}; "
                               f"filing_currencies={','.join(f'{k}={v}' for k, v in sorted(currencies.items()))}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.organization(req, signed, errors=errors_of(e), status=422)
        return await self.organization(req, signed, saved=True)

    async def registration_create(self: Console, req: Request, signed: Signed) -> Response:
        f = req.form
        reg = organization_pb2.Registration()
        for name in ("jurisdiction", "registration_number", "effective_from", "effective_to"):
            if f.get(name, "").strip():
                setattr(reg, name, f[name].strip())
        try:
            await self.audited(signed, "levy.v1.OrganizationService.CreateRegistration",
                               organization_pb2.CreateRegistrationRequest(registration=reg),
                               "registration.added", "", f"{reg.jurisdiction} from {reg.effective_from}")
        except LevyError as e:
            if isinstance(e, (NotFound, PermissionDenied)):
                raise
            return await self.organization(req, signed, errors=errors_of(e), status=422)
        return redirect(self.url_for("organization") + "#registrations")

    async def registration_remove(self: Console, req: Request, signed: Signed) -> Response:
        reg_id = req.params["registration_id"]
        await self.audited(signed, "levy.v1.OrganizationService.DeleteRegistration",
                           organization_pb2.DeleteRegistrationRequest(registration_id=reg_id),
                           "registration.removed", reg_id)
        return redirect(self.url_for("organization") + "#registrations")
