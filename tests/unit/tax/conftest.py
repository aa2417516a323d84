import pytest

from levy.ratefiles.builtin import builtin_rate_table, load_taxability


@pytest.fixture(scope="session")
def rates():
    return builtin_rate_table()


@pytest.fixture(scope="session")
def rules():
    return load_taxability()
