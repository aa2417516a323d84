"""Identifiers: a spec prefix plus a random, time-sortable body.

The body is a ULID-style 26-character Crockford base32 string: 48 bits of
milliseconds since the epoch followed by 80 random bits. Within one process,
ids created in the same millisecond increase monotonically, so ordering by id
is ordering by creation time and newest-first lists page by keyset.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = 0
_last_rand = 0
_RAND_MAX = (1 << 80) - 1

PREFIXES = {
    "organization": "org",
    "api_key": "key",
    "customer": "cust",
    "product": "prd",
    "transaction": "txn",
    "certificate": "cexc",
    "registration": "reg",
    "filing": "fil",
    "rate_import": "imp",
    "business_location": "loc",
    "console_user": "usr",
    "audit_entry": "aud",
    "certificate_document": "doc",
    "event": "evt",
    "webhook_endpoint": "we",
    "webhook_delivery": "whd",
}


# Two base32 digits per table entry: an id's 130 bits are 13 lookups instead of 26 steps.
_PAIRS = tuple(a + b for a in _ALPHABET for b in _ALPHABET)
_SHIFTS = tuple(range(120, -1, -10))


def _encode_body(ms: int, rand: int) -> str:
    """Crockford base32 of ``ms`` (10 digits) followed by ``rand`` (16 digits)."""
    v = (ms << 80) | rand
    pairs = _PAIRS
    return "".join([pairs[(v >> s) & 1023] for s in _SHIFTS])


def new_ulid(now_ms: int | None = None) -> str:
    """A 26-character, lexicographically time-ordered identifier body."""
    global _last_ms, _last_rand
    if now_ms is not None:
        # An explicit instant: a pure value that leaves the process's monotonic clock alone.
        return _encode_body(now_ms, int.from_bytes(os.urandom(10), "big"))
    ms = int(time.time() * 1000)
    with _lock:
        if ms <= _last_ms:
            ms = _last_ms
            rand = _last_rand + 1
            if rand > _RAND_MAX:  # pragma: no cover - 2^80 ids in one millisecond
                ms += 1
                rand = int.from_bytes(os.urandom(10), "big")
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last_ms, _last_rand = ms, rand
    return _encode_body(ms, rand)


def new_id(prefix: str) -> str:
    """``new_id("cust")`` -> ``cust_01JD...``."""
    return f"{prefix}_{new_ulid()}"
