"""The results store of one experiment, in four modules that import one way:

- ``schema``: the tables, their key columns and the declared protocol axes (the bottom);
- ``writer``: the SQLite store (``ResultsStore``), one transaction per unit, resumable;
- ``export``: the committed, deterministic export of a store, and a store seeded from one;
- ``reader``: ``ResultsReader``, the one interface both satisfy, and ``open_existing``.

``diff``, ``discover``, ``sizes`` and ``status`` read stores through ``reader``. The names below
are the ones the rest of afr imports from ``afr_cli.store``.
"""

from afr_cli.store.reader import (
    ResultsReader,
    find_stores,
    has_results,
    load_grid,
    load_results,
    open_existing,
    store_select_by,
)
from afr_cli.store.schema import AXES, KEYS, STORE_FILE, TABLES, Axis, axis_defaults, axis_names, varying_axes
from afr_cli.store.writer import ResultsStore, UnitRecord

__all__ = [
    "AXES",
    "Axis",
    "KEYS",
    "ResultsReader",
    "ResultsStore",
    "STORE_FILE",
    "TABLES",
    "UnitRecord",
    "axis_defaults",
    "axis_names",
    "find_stores",
    "has_results",
    "load_grid",
    "load_results",
    "open_existing",
    "store_select_by",
    "varying_axes",
]
