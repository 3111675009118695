"""The results store of one experiment, in four modules that import one way:

- ``schema``: the tables, their key columns and the declared protocol axes (the bottom);
- ``writer``: the SQLite store (``ResultsStore``), one transaction per unit, resumable;
- ``export``: the committed, deterministic export of a store, and a store seeded from one;
- ``reader``: ``ResultsReader``, the one interface both satisfy, and ``open_existing``.

``diff``, ``discover``, ``sizes`` and ``status`` read stores through ``reader``. The names below
are the ones the rest of afr imports from ``afr_cli.store``; each is imported from its module
when first asked for, so that importing a light module of the store (``cache``, ``discover``)
does not load pandas, which ``schema``, ``writer`` and ``reader`` import: a command answered
from its memo (afr_cli/commands/answer_memo.py) must not pay for it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOME = {
    **dict.fromkeys(
        (
            "ResultsReader",
            "find_stores",
            "has_results",
            "load_grid",
            "load_results",
            "open_existing",
            "store_select_by",
        ),
        "reader",
    ),
    **dict.fromkeys(
        ("AXES", "KEYS", "STORE_FILE", "TABLES", "Axis", "axis_defaults", "axis_names", "varying_axes"), "schema"
    ),
    **dict.fromkeys(("ResultsStore", "UnitRecord"), "writer"),
}

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


def __getattr__(name: str) -> Any:
    """A name of ``__all__``, imported from its module on first use (then kept here)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"afr_cli.store.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
