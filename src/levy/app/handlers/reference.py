"""Reference data: product tax codes and product attributes (spec 4.4).

Served from the in-memory catalogue (``levy.domain.catalogue``) of the reference
data loaded once per process (``AppServices.reference``); no database read.
"""

from __future__ import annotations

from levy.app.context import CallContext
from levy.app.handlers.messages import page_of
from levy.app.registry import handles
from levy.v1 import reference_pb2 as pb


@handles("levy.v1.ReferenceService.ListProductTaxCodes")
async def list_product_tax_codes(req: pb.ListProductTaxCodesRequest, ctx: CallContext) -> pb.ListProductTaxCodesResponse:
    page = page_of(req)
    items, has_more = ctx.services.reference.catalogue.page_tax_codes(page.limit, page.starting_after)
    resp = pb.ListProductTaxCodesResponse(has_more=has_more)
    for item in items:
        out = resp.data.add(code=item.code)
        if item.description is not None:
            out.description = item.description
    return resp


@handles("levy.v1.ReferenceService.ListProductAttributes")
async def list_product_attributes(
    req: pb.ListProductAttributesRequest, ctx: CallContext
) -> pb.ListProductAttributesResponse:
    page = page_of(req)
    items, has_more = ctx.services.reference.catalogue.page_attributes(
        page.limit, page.starting_after, ptc=req.ptc if req.HasField("ptc") else None
    )
    resp = pb.ListProductAttributesResponse(has_more=has_more)
    for a in items:
        resp.data.add(
            code=a.code,
            name=a.name,
            description=a.description,
            group=pb.ProductAttributeGroup(key=a.group.key, name=a.group.name, exclusive=a.group.exclusive),
            ptcs=list(a.ptcs),
        )
    return resp
