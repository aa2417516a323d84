"""The authenticator's per-key bookkeeping stays bounded however many keys call."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime, timezone
from typing import Any

import pytest

from levy.app import auth
from levy.domain.keys import hash_secret, new_secret
from levy.store.keys import ApiKeyRecord


def test_touch_times_are_bounded_and_every_key_is_still_touched(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = [new_secret() for _ in range(50)]
    records = {hash_secret(s): ApiKeyRecord(f"key_{i}", "org_1", "k", s[:12], hash_secret(s), False,
                                            datetime.now(timezone.utc), None, None)
               for i, s in enumerate(secrets)}
    touched: list[str] = []

    class Keys:
        def __init__(self, conn: Any) -> None:
            pass

        async def by_hash(self, h: str) -> ApiKeyRecord | None:
            return records.get(h)

        async def touch(self, key_id: str, when: datetime) -> None:
            touched.append(key_id)

    @contextlib.asynccontextmanager
    async def uow(**_: Any):  # type: ignore[no-untyped-def]
        yield None

    monkeypatch.setattr(auth, "SqlApiKeys", Keys)
    monkeypatch.setattr(auth, "transaction", lambda engine, **kw: uow(**kw))
    monkeypatch.setattr(auth, "_MAX_TOUCHED", 8)
    a = auth.Authenticator(None, 2.0)  # type: ignore[arg-type]

    async def go() -> None:
        for s in secrets:
            await a.authenticate(s)
            assert len(a._touched) <= 8

    asyncio.run(go())
    assert touched == [f"key_{i}" for i in range(50)]  # each key's last use recorded when first seen
