from datetime import date

import pytest

from levy.domain.errors import InvalidServiceVersion
from levy.domain.versioning import CURRENT, resolve_version

TODAY = date(2026, 11, 21)


def test_omitted_is_latest() -> None:
    assert str(resolve_version(None, TODAY)) == CURRENT == "hydrogen.2025-04-15"
    assert str(resolve_version("", TODAY)) == CURRENT


def test_same_name_later_date_is_served_by_latest_release_on_or_before() -> None:
    assert str(resolve_version("hydrogen.2025-04-15", TODAY)) == CURRENT
    assert str(resolve_version("hydrogen.2026-11-21", TODAY)) == CURRENT


@pytest.mark.parametrize("value", ["hydrogen", "Hydrogen.2025-04-15", "hydrogen.25-04-15", "hydrogen.2025-02-30",
                                   "helium.2025-04-15", "hydrogen.2026-11-22", "hydrogen.2025-04-14"])
def test_refused(value: str) -> None:
    with pytest.raises(InvalidServiceVersion) as e:
        resolve_version(value, TODAY)
    assert e.value.status == 400
