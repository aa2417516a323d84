"""OWASP API1/API3 at the contract level: the organization comes only from
the API key, and no response can carry a key hash. Object-level tests of each
resource (another organization's id answers 404) use
``security_helpers.assert_other_tenant_gets_404`` in the area tests as the
resources land."""

from __future__ import annotations

from collections.abc import Iterator

from google.protobuf import descriptor

from levy.app.registry import is_output_only, methods

FD = descriptor.FieldDescriptor


def _fields(desc: descriptor.Descriptor, seen: set[str] | None = None) -> Iterator[FD]:
    seen = seen if seen is not None else set()
    if desc.full_name in seen:
        return
    seen.add(desc.full_name)
    for f in desc.fields:
        yield f
        if f.type == FD.TYPE_MESSAGE:
            yield from _fields(f.message_type, seen)


def test_no_request_can_name_an_organization() -> None:
    for m in methods():
        for f in _fields(m.request_cls.DESCRIPTOR):
            if "organization" in f.name:
                assert is_output_only(f), f"{m.name}: {f.full_name} would let a caller pick a tenant"


def test_no_response_carries_a_key_hash_or_password() -> None:
    for m in methods():
        for f in _fields(m.response_cls.DESCRIPTOR):
            assert "hash" not in f.name and "password" not in f.name, f.full_name
            if "secret" in f.name:
                # The new key's secret, shown once by CreateApiKey; a webhook endpoint's signing secret, shown
                # once by CreateWebhookEndpoint and RotateWebhookEndpointSecret (tests/api/test_webhooks.py
                # checks that no other answer carries it).
                assert f.full_name in ("levy.v1.ApiKey.secret", "levy.v1.WebhookEndpoint.secret"), f.full_name
