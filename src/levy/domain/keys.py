"""API key secrets (spec section 5): format, hashing, checks. No I/O.

A secret is ``levy_sk_`` followed by 43 URL-safe base64 characters (32 random
bytes: 256 bits). Only its SHA-256 is stored; the first 12 characters are kept
as a display prefix so that people can recognise a key in a list.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

SECRET_PREFIX = "levy_sk_"
_SECRET_RE = re.compile(r"^levy_sk_[A-Za-z0-9_-]{43}$")
DISPLAY_PREFIX_LEN = 12


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def is_well_formed(secret: str) -> bool:
    return bool(_SECRET_RE.match(secret))


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def display_prefix(secret: str) -> str:
    return secret[:DISPLAY_PREFIX_LEN]


def hashes_match(stored_hash: str, secret: str, *, presented_hash: str | None = None) -> bool:
    """Constant-time comparison of a stored hash and a presented secret
    (``presented_hash``: its hash, when the caller already has it)."""
    digest = presented_hash if presented_hash is not None else hash_secret(secret)
    return hmac.compare_digest(stored_hash.encode("ascii"), digest.encode("ascii"))
