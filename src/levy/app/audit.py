"""The audit log of changes from every transport.

The console records its own actions with their words (``levy.app.console_service.record``). A change made
through the API (REST or gRPC) or the CLI is recorded here, in the application layer, never in a
transport:

* the API: the pipeline gives each call of an API key an :class:`AuditNote`
  (``CallContext.audit``); the call's first write transaction that commits carries the entry
  (``CallContext.uow`` writes it just before the commit), so an entry exists exactly when a change
  was committed, and a call that writes nothing (a calculation, a read, a refused request) leaves
  none;
* the CLI: a command that writes (``levy.cli.common.run_in_organization``) records one entry in its
  one transaction.

An entry names the actor (the API key's name and prefix, or the CLI), the action (the RPC as
``resource.verb``, ``CreateExemptionCertificate`` -> ``exemption_certificate.create``; the command
as ``cli.<command>``), its object (the ids in the call's path, and for a create the new object's id,
which the create names with :meth:`levy.app.context.CallContext.created` inside its transaction)
and a detail (the transport, and what names a new object: its source id, reference id, name or
jurisdiction).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from google.protobuf import message
from sqlalchemy.ext.asyncio import AsyncConnection

from levy.domain import ids
from levy.store.console_users import AuditRecord, SqlConsole, audit_values
from levy.store.tables.console import console_audit

#: The audit log's table, for an entry inserted in one statement with the change it records.
TABLE = console_audit

#: Fields of a created object that name it in the entry's detail, the first one set.
NAMING_FIELDS = ("source_id", "reference_id", "name", "jurisdiction", "email")
_PATH_FIELD = re.compile(r"\{([a-z_]+)")
_WORD = re.compile(r"[A-Z][a-z0-9]*")


@dataclass(slots=True)
class AuditNote:
    """The entry a call writes with its change (once, in its first write transaction that commits)."""

    organization_id: str
    actor: str
    action: str
    target: str
    detail: str
    written: bool = False
    #: The id of the object a create made (after the path's ids in the entry's object).
    created: str = ""

    def record(self) -> AuditRecord:
        target = "/".join(x for x in (self.target, self.created) if x)
        return AuditRecord(
            id=ids.new_id(ids.PREFIXES["audit_entry"]), organization_id=self.organization_id, user_id=None,
            actor_email=self.actor[:320], action=self.action[:64], target=target[:200],
            detail=self.detail[:500], created_at=datetime.now(timezone.utc))

    async def write(self, conn: AsyncConnection) -> None:
        await SqlConsole(conn).insert_audit(self.record())


def row(note: AuditNote) -> dict[str, Any]:
    """The entry's row in :data:`TABLE`."""
    return audit_values(note.record())


def action_of(rpc_name: str) -> str:
    """``CreateExemptionCertificate`` -> ``exemption_certificate.create``."""
    words = [w.lower() for w in _WORD.findall(rpc_name)]
    if len(words) < 2:
        return rpc_name.lower()
    return "_".join(words[1:]) + "." + words[0]


def note_for(method: Any, request: message.Message, key: Any, transport: str) -> AuditNote:
    """The entry of an API call of ``method`` by ``key`` (an API key record)."""
    names = _PATH_FIELD.findall(method.http_path)
    target = "/".join(str(getattr(request, n)) for n in names if getattr(request, n, ""))
    body = method.http.body
    obj = getattr(request, body, None) if body and body != "*" else request
    values = [getattr(obj, f, None) if obj is not None and f in obj.DESCRIPTOR.fields_by_name else None
              for f in NAMING_FIELDS]
    naming = next((f"{f}={v}" for f, v in zip(NAMING_FIELDS, values) if isinstance(v, str) and v), "")
    return AuditNote(organization_id=key.organization_id, actor=f"API key {key.name} ({key.prefix})",
                     action=action_of(method.name), target=target,
                     detail="; ".join(x for x in (f"via {transport}", naming) if x))


def import_detail(created: list[str], limit: int = 500) -> str:
    """The detail of a batch that created transactions: how many and their ids, as many as fit."""
    text = f"{len(created)} created:"
    for n, object_id in enumerate(created):
        more = f" (and {len(created) - n} more)"
        if len(text) + 1 + len(object_id) + len(f" (and {len(created) - n - 1} more)") > limit:
            return text + more
        text += " " + object_id
    return text


async def record_cli(conn: AsyncConnection, organization_id: str, command: str, target: str = "",
                     detail: str = "") -> None:
    """The entry of a CLI command that changed something (``target``: the ids of what it changed or
    made), in its transaction."""
    await AuditNote(organization_id, "levy CLI", f"cli.{command}", target, detail).write(conn)
