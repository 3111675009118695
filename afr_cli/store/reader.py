"""Reading an experiment's results: one interface over the SQLite store and its committed export.

``ResultsReader`` is what every reader needs (frames of the units, results and grid tables, the
manifest, the unit keys); ``ResultsStore`` (the working store) and ``ExportedStore`` (its
committed form) both satisfy it, and ``open_existing`` returns whichever a directory holds: the
store when there is one, else the export (a fresh clone has only the export).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.store.export import EXPORT_DIR, EXPORT_MANIFEST, ExportedStore, has_export
from afr_cli.store.faults import missing_column
from afr_cli.store.schema import STORE_FILE
from afr_cli.store.writer import ResultsStore


@runtime_checkable
class ResultsReader(Protocol):
    """The read side of a results directory, whether SQLite store or export."""

    source: Literal["store", "export"]  # which of the two it reads
    directory: Path  # the results directory
    path: Path  # the file or folder read (store.sqlite, or export/)

    def manifest(self) -> dict:
        """The experiment's manifest: config, config hash, versions, run history."""

    def columns(self, table: str) -> list[tuple[str, str]]:
        """(name, declared SQL type) of every column of ``table``, in table order."""

    def rows(self, table: str) -> list[tuple]:
        """Every row of ``table`` in key order."""

    def frame(self, table: str) -> pd.DataFrame:
        """``table`` (units, results or grid) as a DataFrame in key order, JSON columns decoded."""

    def done_units(self) -> set[tuple[str, str, int]]:
        """(dataset, base, rep) of every stored unit."""

    def done_unit_keys(self) -> set[tuple]:
        """(dataset, base, *axes, rep) of every stored unit, every declared axis in order (an axis
        the store has no column for at its default)."""


def has_results(directory: str | Path) -> bool:
    """Whether ``directory`` holds a results store or its export (a ``store.sqlite`` that is not a
    file counts: reading it is then a one-line error, never a silent fall back to the export)."""
    return os.path.lexists(Path(directory) / STORE_FILE) or has_export(directory)


def find_stores(root: str | Path) -> list[Path]:
    """Every directory below ``root`` holding a store or an export, in path order."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.rglob(STORE_FILE)}
    found |= {p.parent.parent for p in root.rglob(f"{EXPORT_DIR}/{EXPORT_MANIFEST}")}
    return sorted(found)


def open_existing(directory: str | Path) -> ResultsReader:
    """The results of ``directory`` for reading: its SQLite store when there is one, else its
    committed export; a one-line error if neither."""
    store = ResultsStore(directory)
    if store.path.exists() or store.path.is_symlink():  # a directory or a damaged file is an error,
        lacking = missing_column(store.columns)  # never a silent fall back to the export
        if lacking:
            raise AfrInputError(
                f"{store.path}: not a complete afr results store: table {lacking[0]} lacks "
                f"the column {lacking[1]}; delete it or use --out DIR"
            )
        return store
    if has_export(directory):
        return ExportedStore(directory)
    raise AfrInputError(
        f"{directory}: no results store here (expected {STORE_FILE} or its export); run `afr run CONFIG` first"
    )


def load_results(results_dir: str | Path) -> pd.DataFrame:
    """The results rows of a store: dataset, base, model, rep, r2, mae, rmse, params, selection, ..."""
    return open_existing(results_dir).frame("results")


def store_select_by(results_dir: str | Path) -> str:
    """The metric the store's experiment selects by (its config's protocol.select_by; r2 by default)."""
    config = open_existing(results_dir).manifest().get("config") or {}
    return (config.get("protocol") or {}).get("select_by", "r2")


def load_grid(results_dir: str | Path) -> pd.DataFrame:
    """Per grid point: inner-CV and test scores (surfaces, best-test selection)."""
    return open_existing(results_dir).frame("grid")
