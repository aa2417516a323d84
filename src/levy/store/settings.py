"""Organization settings in SQL (a row exists once they have been changed)."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain.settings import DEFAULT_APPROACHING_SHARE, DEFAULTS, OrganizationSettings
from levy.store.tables.areas import organization_settings


async def get_settings(conn: AsyncConnection, organization_id: str) -> tuple[OrganizationSettings, datetime | None]:
    """The organization's settings (defaults when never changed) and when they last changed."""
    row = (
        await conn.execute(select(organization_settings).where(organization_settings.c.organization_id == organization_id))
    ).first()
    if row is None:
        return DEFAULTS, None
    return (
        OrganizationSettings(
            default_tax_codes=tuple(json.loads(row.default_tax_codes)),
            exemption_management=row.exemption_management,
            certificate_treatment=row.certificate_treatment,
            filing_currencies=filing_currencies_from_json(row.filing_currencies),
            nexus_approaching_share=share_from_column(row.nexus_approaching_share),
        ),
        row.updated_at,
    )


def filing_currencies_from_json(text: str | None) -> tuple[tuple[str, str], ...]:
    """The stored ``filing_currencies`` column (a JSON object, or NULL) as the settings hold it."""
    return tuple(sorted(json.loads(text).items())) if text else ()


def share_from_column(text: str | None) -> Decimal:
    """The stored ``nexus_approaching_share`` (NULL: the default)."""
    return Decimal(text) if text else DEFAULT_APPROACHING_SHARE


def share_to_column(share: Decimal) -> str | None:
    return None if share == DEFAULT_APPROACHING_SHARE else str(share)


def filing_currencies_to_json(pairs: tuple[tuple[str, str], ...]) -> str | None:
    return json.dumps(dict(pairs), sort_keys=True) if pairs else None
