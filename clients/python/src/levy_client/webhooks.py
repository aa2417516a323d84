"""Verify a webhook delivery from Levy (issue 35; docs/events.md in the Levy repository).

Levy signs each delivery per the Standard Webhooks specification; this helper checks it with
the maintained ``standardwebhooks`` package (install the ``webhooks`` extra:
``pip install 'levy-client[webhooks]'``) and returns the event::

    from levy_client.webhooks import verify_webhook

    event = verify_webhook(secret, request_body, request_headers)  # raises WebhookVerificationError
    if event["type"] == "transaction.finalized":
        post_to_ledger(event["data"]["transaction"])

Pass the body exactly as received (bytes), before any JSON parsing. Deliveries are at least once:
deduplicate on ``event["id"]`` (also the ``webhook-id`` header).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

__all__ = ["WebhookVerificationError", "verify_webhook"]


def verify_webhook(secret: str, body: bytes | str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The event of a delivery whose signature ``secret`` (``whsec_...``) verifies; raises
    :class:`WebhookVerificationError` when it does not (or its timestamp is more than five
    minutes off)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    return dict(Webhook(secret).verify(body, lowered))
