"""``levy rates import`` runs with Python's cycle collector off (levy.cli.rates._no_cycle_collection:
millions of acyclic records, docs/performance.md) and turns it back on afterwards, error or not."""

from __future__ import annotations

import gc

import pytest

from levy.cli.rates import _no_cycle_collection


def test_the_collector_is_off_during_the_import_and_back_on_after_it() -> None:
    assert gc.isenabled()
    with _no_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), _no_cycle_collection():
        raise RuntimeError("a failed import")
    assert gc.isenabled()


def test_a_caller_that_had_it_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with _no_cycle_collection():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
