"""The results store's schema: its tables, their columns and keys, and the protocol axes.

The bottom of ``afr_cli.store``: the SQLite writer, the export and the reader all build on these
declarations and nothing here imports them back.

A *protocol axis* (the training fraction, the noise level, ...) is a key column of every table,
declared once in ``AXES``: its name, SQL type, and its value in a store made before it (from that
store's config). The SQL that creates the tables, the key order, and the unit keys a store
reports are all derived from ``AXES``, so a new axis is one more ``Axis`` and no migration: a
store or export lacking an axis column reads as that axis at its default, and a run that extends
such a store adds the column filled with that default (``missing_axis_columns``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

STORE_FILE = "store.sqlite"
TABLES = ("units", "results", "grid")
SQLITE_HEADER = b"SQLite format 3\x00"

# Each table's columns other than the axes (name, declared SQL type), in table order.
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "units": (
        ("dataset", "TEXT NOT NULL"),
        ("base", "TEXT NOT NULL"),
        ("rep", "INTEGER NOT NULL"),
        ("split_seed", "INTEGER NOT NULL"),
        ("n_train", "INTEGER NOT NULL"),
        ("n_test", "INTEGER NOT NULL"),
        ("forest_seconds", "REAL NOT NULL"),
        ("seconds", "REAL NOT NULL"),
        ("finished_at", "TEXT NOT NULL"),
    ),
    "results": (
        ("dataset", "TEXT NOT NULL"),
        ("base", "TEXT NOT NULL"),
        ("model", "TEXT NOT NULL"),
        ("rep", "INTEGER NOT NULL"),
        ("r2", "REAL"),
        ("mae", "REAL"),
        ("rmse", "REAL"),
        ("params", "TEXT NOT NULL"),
        ("selection", "TEXT NOT NULL"),
        ("cv_score", "REAL"),
        ("solver_status", "TEXT NOT NULL"),
        ("seconds", "REAL NOT NULL"),
    ),
    "grid": (
        ("dataset", "TEXT NOT NULL"),
        ("base", "TEXT NOT NULL"),
        ("model", "TEXT NOT NULL"),
        ("rep", "INTEGER NOT NULL"),
        ("point", "TEXT NOT NULL"),
        ("cv_r2", "REAL"),
        ("cv_mae", "REAL"),
        ("test_r2", "REAL"),
        ("test_mae", "REAL"),
        ("test_rmse", "REAL"),
        ("solves", "TEXT"),
    ),
}
# Columns of ``COLUMNS`` a store made before them lacks (a run that extends such a store adds them,
# empty, before any axis it lacks too): reading a store does not require them. ``solves``: the
# per-solve log of each grid point.
LATER_COLUMNS: dict[str, tuple[str, ...]] = {"units": (), "results": (), "grid": ("solves",)}
# Non-key columns later versions added, nullable (name, declared SQL type), after the axes in
# table order: a store made before one reads it as missing (NULL, NaN in a frame) and a run that
# extends such a store adds it empty (``missing_optional_columns``); an export leaves one out when
# no row holds a value, so a store from before it re-exports byte for byte. Not required to read
# a store (``required_columns``). ``cpu_seconds``: the unit's process time in its worker
# (forest fits, features, solves), beside its wall ``seconds``. ``ran_on``: where the unit ran, its
# host and, in a batch job, the job's id (``<host> job <id>``).
OPTIONAL_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "units": (("cpu_seconds", "REAL"), ("ran_on", "TEXT")),
    "results": (),
    "grid": (),
}
# Each table's key without the axes (the export's sort order; the axes go in before ``rep``) and
# its JSON columns (decoded into dicts on reading).
KEYS = {
    "units": ("dataset", "base", "rep"),
    "results": ("dataset", "base", "model", "rep"),
    "grid": ("dataset", "base", "model", "rep", "point"),
}
JSON_COLUMNS = ("params", "solver_status", "point", "solves")


@dataclass(frozen=True)
class Axis:
    """One protocol axis of a unit: a key column of every table.

    ``default`` gives its value in a store made before the axis existed, from that store's
    config's ``protocol`` section (a dict, possibly empty): such a store ran at one point of it.
    The protocol supplies a unit's value in ``UnitRecord.axes[name]``.
    """

    name: str
    sql_type: str
    default: Callable[[dict], Any]
    doc: str


def _train_fraction_before_axes(protocol: dict) -> float:
    return round(1.0 - float(protocol.get("test_fraction", 0.2)), 10)


# The declared axes, in key order. Stores and exports made before an axis hold a single point of
# it (before these two: one split of 1 - test_fraction, no noise) and read as that point.
AXES: list[Axis] = [
    Axis(
        "train_fraction",
        "REAL",
        _train_fraction_before_axes,
        "fraction of the rows in the training split (protocol.train_fractions; else 1 - test_fraction)",
    ),
    Axis("noise_eta", "REAL", lambda protocol: 0.0, "noise level of the unit (protocol.noise_eta)"),
]


def axis_names() -> tuple[str, ...]:
    """The declared axes' column names, in key order."""
    return tuple(axis.name for axis in AXES)


def axis_defaults(manifest: dict) -> tuple:
    """Every declared axis's value in a store made before it, from the store's manifest (config)."""
    protocol = (manifest.get("config") or {}).get("protocol") or {}
    return tuple(axis.default(protocol) for axis in AXES)


def varying_axes(frame: pd.DataFrame) -> list[str]:
    """The protocol axes a frame of units, results or grid rows varies over beyond dataset, base
    and rep. Every store records them; one that holds a single value (an experiment without axes:
    the 1 - test_fraction split, no noise) names no cell."""
    return [a for a in axis_names() if a in frame.columns and frame[a].nunique() > 1]


def key_columns(table: str, present: set[str] | None = None) -> list[str]:
    """The key of ``table`` in order, the axes going in before ``rep`` (only those in ``present``
    when given: the columns a store or export actually has)."""
    keys = list(KEYS[table])
    axes = [a for a in axis_names() if present is None or a in present]
    at = keys.index("rep")
    return keys[:at] + axes + keys[at:]


def create_tables_sql() -> str:
    """The SQL creating the manifest and every table (if absent) with the declared axes."""
    statements = ["CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);"]
    for table in TABLES:
        columns = [f"{name} {declared}" for name, declared in COLUMNS[table]]
        columns += [f"{axis.name} {axis.sql_type} NOT NULL" for axis in AXES]
        columns += [f"{name} {declared}" for name, declared in OPTIONAL_COLUMNS[table]]
        statements.append(
            f"CREATE TABLE IF NOT EXISTS {table} (\n    "
            + ", ".join(columns)
            + f",\n    PRIMARY KEY ({', '.join(key_columns(table))}));"
        )
    return "\n".join(statements) + "\n"


def required_columns(table: str) -> tuple[str, ...]:
    """The columns of ``table`` every store, of any age, has (it is read and extended through
    them): ``COLUMNS`` without ``LATER_COLUMNS``; the axes and ``OPTIONAL_COLUMNS`` a store made
    before them lacks and reads at their defaults."""
    return tuple(name for name, _ in COLUMNS[table] if name not in LATER_COLUMNS[table])


def missing_later_columns(table: str, present: set[str]) -> list[str]:
    """``ALTER TABLE`` statements giving a table from before some ``LATER_COLUMNS`` their columns
    (empty: NULL in every stored row)."""
    declared = dict(COLUMNS[table])
    return [
        f"ALTER TABLE {table} ADD COLUMN {name} {declared[name]}"
        for name in LATER_COLUMNS[table]
        if name not in present
    ]


def missing_axis_columns(table: str, present: set[str], defaults: tuple) -> list[str]:
    """``ALTER TABLE`` statements giving a table from before some axes their columns, filled with
    ``defaults`` (its key stays as it was, still unique: such a store holds one point of them)."""
    return [
        f"ALTER TABLE {table} ADD COLUMN {axis.name} {axis.sql_type} NOT NULL DEFAULT {value!r}"
        for axis, value in zip(AXES, defaults)
        if axis.name not in present
    ]


def missing_optional_columns(table: str, present: set[str]) -> list[str]:
    """``ALTER TABLE`` statements giving a table from before some optional columns their columns
    (empty: NULL in every stored row)."""
    return [
        f"ALTER TABLE {table} ADD COLUMN {name} {declared}"
        for name, declared in OPTIONAL_COLUMNS[table]
        if name not in present
    ]


def with_optional_columns(table: str, frame: pd.DataFrame) -> pd.DataFrame:
    """A table's frame with every optional column present, a REAL one as floats (NaN where a row,
    or a store made before the column, holds no value), a TEXT one as text or None: stores and
    exports of any age read alike."""
    for name, declared in OPTIONAL_COLUMNS[table]:
        if declared == "REAL":
            frame[name] = frame[name].astype(float) if name in frame else float("nan")
        elif name in frame:
            frame[name] = frame[name].astype(object).where(frame[name].notna(), None)
        else:
            frame[name] = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return frame
