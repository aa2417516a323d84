"""List pagination (spec section 4): ``limit`` and ``starting_after``.

Levy's decision (the spec does not show it): default page size 100, maximum
1000, minimum 1. Lists are keyset-paginated, so the cost of a page does not
grow with its depth.
"""

from __future__ import annotations

from dataclasses import dataclass

from levy.domain.errors import ValidationFailed

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class PageRequest:
    limit: int
    starting_after: str | None


def page_request(limit: int | None, starting_after: str | None) -> PageRequest:
    if limit is None:
        limit = DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(
            f"limit must be between 1 and {MAX_LIMIT}; got {limit}.", parameter="limit"
        )
    return PageRequest(limit, starting_after or None)
