"""API versions (spec section 9): ``Service-Version: <name>.YYYY-MM-DD``.

The name changes on breaking changes; a later date with the same name is not
breaking. A request names a version; Levy serves the newest released version
of that name whose date is on or before the requested date. Omitted: the
latest version. Malformed, unknown name, a date before the name's first
release, or a date in the future: 400.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from levy.domain.errors import InvalidServiceVersion


@dataclass(frozen=True, slots=True, order=True)
class ApiVersion:
    released: date
    name: str

    def __str__(self) -> str:
        return f"{self.name}.{self.released.isoformat()}"


# Released versions, oldest first. Add a row for every release.
RELEASES: tuple[ApiVersion, ...] = (ApiVersion(date(2025, 4, 15), "hydrogen"),)
LATEST = RELEASES[-1]
CURRENT = str(LATEST)

_PATTERN = re.compile(r"^([a-z][a-z0-9_]*)\.(\d{4})-(\d{2})-(\d{2})$")


def resolve_version(header: str | None, today: date) -> ApiVersion:
    """The version that serves a request whose header is ``header``."""
    if header is None or header == "":
        return LATEST
    m = _PATTERN.match(header.strip())
    if not m:
        raise InvalidServiceVersion(
            f"Service-Version '{header}' is malformed: expected '<name>.YYYY-MM-DD', for example '{CURRENT}'.",
            parameter="Service-Version",
        )
    name = m.group(1)
    try:
        requested = date(int(m.group(2)), int(m.group(3)), int(m.group(4)))
    except ValueError:
        raise InvalidServiceVersion(
            f"Service-Version '{header}' has an invalid date.", parameter="Service-Version"
        ) from None
    if requested > today:
        raise InvalidServiceVersion(
            f"Service-Version '{header}' is dated in the future; the current version is '{CURRENT}'.",
            parameter="Service-Version",
        )
    candidates = [v for v in RELEASES if v.name == name]
    if not candidates:
        known = ", ".join(sorted({v.name for v in RELEASES}))
        raise InvalidServiceVersion(
            f"Service-Version name '{name}' is unknown; known names: {known}. The current version is '{CURRENT}'.",
            parameter="Service-Version",
        )
    served = [v for v in candidates if v.released <= requested]
    if not served:
        raise InvalidServiceVersion(
            f"Service-Version '{header}' predates the first '{name}' release ({candidates[0]}).",
            parameter="Service-Version",
        )
    return served[-1]
