"""Rules of the web console's people and sessions (plain Python, no I/O).

Roles are data: what each may do is the API's own authorization (an ``admin`` user
acts with an admin key's rights, a ``member`` with a plain key's: read-only in the
console). Passwords: 12..256 characters, not all spaces, never the email.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from levy.domain.errors import ErrorCollector, ValidationFailed

# role -> (acts with admin rights, may write in the console)
ROLES: dict[str, tuple[bool, bool]] = {
    "admin": (True, True),
    "member": (False, False),
}
#: The role an invitation starts at: the least-privileged one, so that admin
#: rights are always a deliberate choice.
INVITE_DEFAULT_ROLE = next(role for role, (admin, writes) in ROLES.items() if not admin and not writes)
PASSWORD_MIN = 12
PASSWORD_MAX = 256
EMAIL_MAX = 320
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a console request acts as: the pipeline sees it where it sees an API key
    (``id``, ``organization_id``, ``admin``)."""

    id: str
    organization_id: str
    name: str
    admin: bool


def _bad(errors: ErrorCollector, pointer: str, detail: str) -> None:
    errors.errors.append(ValidationFailed(detail, pointer=pointer))


def normalize_email(raw: str) -> str:
    return raw.strip().lower()


def check_email(email: str, errors: ErrorCollector, pointer: str = "/email") -> None:
    if not email or len(email) > EMAIL_MAX or not _EMAIL.match(email):
        _bad(errors, pointer, "Enter an email address such as name@example.com.")


def check_role(role: str, errors: ErrorCollector, pointer: str = "/role") -> None:
    if role not in ROLES:
        _bad(errors, pointer, f"The role is one of: {', '.join(ROLES)}.")


def check_password(password: str, email: str, errors: ErrorCollector, pointer: str = "/password") -> None:
    if len(password) < PASSWORD_MIN:
        _bad(errors, pointer, f"A password has at least {PASSWORD_MIN} characters.")
    elif len(password) > PASSWORD_MAX:
        _bad(errors, pointer, f"A password has at most {PASSWORD_MAX} characters.")
    elif not password.strip():
        _bad(errors, pointer, "A password is not only spaces.")
    elif password.strip().lower() == email:
        _bad(errors, pointer, "A password is not the email address.")


def one_time_password() -> str:
    """20 URL-safe characters (120 random bits)."""
    return secrets.token_urlsafe(15)


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# Documents of exemption certificates: what the bytes are decides the type, never
# the browser's claim. (leading bytes, content type, file extension)
DOCUMENT_KINDS: tuple[tuple[bytes, str, str], ...] = (
    (b"%PDF-", "application/pdf", ".pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png", ".png"),
    (b"\xff\xd8\xff", "image/jpeg", ".jpg"),
    (b"GIF87a", "image/gif", ".gif"),
    (b"GIF89a", "image/gif", ".gif"),
)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._ -]+")


def document_type(data: bytes, max_bytes: int, pointer: str = "/document") -> str:
    """The content type of an uploaded certificate document, or 422."""
    if not data:
        raise ValidationFailed("The document is empty.", pointer=pointer)
    if len(data) > max_bytes:
        raise ValidationFailed(f"The document is larger than {max_bytes} bytes.", pointer=pointer)
    for magic, content_type, _ in DOCUMENT_KINDS:
        if data.startswith(magic):
            return content_type
    raise ValidationFailed("The document is not a PDF, PNG, JPEG or GIF file.", pointer=pointer)


def document_filename(raw: str, content_type: str) -> str:
    """A safe file name to offer on download: the upload's base name in plain
    characters, with the extension of its type."""
    base = raw.replace("\\", "/").rsplit("/", 1)[-1]
    stem = _UNSAFE_NAME.sub("_", base.rsplit(".", 1)[0] if "." in base else base).strip(" ._")[:100] or "certificate"
    ext = next(e for _, t, e in DOCUMENT_KINDS if t == content_type)
    return stem + ext
