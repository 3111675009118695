"""The families' hyperparameter order a table prints parameters in (afr_cli/tables/param_order.py):
the registry's own order, from the cache in a process that has not imported the families, and
derived again when afr's source changes."""

from __future__ import annotations

import sys

from afr_cli import models
from afr_cli.store import cache as export_cache
from afr_cli.tables import param_order


def test_with_the_families_imported_the_live_registry_is_read(monkeypatch):
    class Extra:
        params = [type("P", (), {"name": "zeta_extra"})()]

    monkeypatch.setitem(models.FAMILIES, "extra", Extra())
    order = param_order.family_param_order()
    assert order[-1] == "zeta_extra"
    assert order == tuple(dict.fromkeys(p.name for f in models.FAMILIES.values() for p in f.params))


def test_a_fresh_process_reads_the_order_from_the_cache_until_the_source_changes(tmp_path, monkeypatch):
    monkeypatch.setenv(export_cache.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delitem(sys.modules, "afr_cli.models")  # as in a process that has not imported them
    calls = []
    monkeypatch.setattr(param_order, "_registered", lambda: calls.append(1) or ("eps", "tau"))
    assert param_order.family_param_order() == ("eps", "tau")
    assert param_order.family_param_order() == ("eps", "tau")
    assert len(calls) == 1  # the second from the cache
    source = param_order._package_source()
    monkeypatch.setattr(param_order, "_package_source", lambda: [*source, b"an edit"])
    assert param_order.family_param_order() == ("eps", "tau")
    assert len(calls) == 2  # another source: derived again
