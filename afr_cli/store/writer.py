"""The SQLite results store of one experiment: one transaction per unit, resumable.

A *unit* is (dataset, base, repetition): one split, its forests, every model and grid point.
A unit is written whole in one transaction (its ``units`` row, one ``results`` row per model
and one ``grid`` row per model and grid point) or not at all, so a run killed at any moment
leaves only complete units; the next run skips them and computes the rest.

The SQLite file is the *working* store (git-ignored); its committed form is the export beside it
(``export/``, see ``afr_cli.store.export``). Readers go through ``afr_cli.store.reader``, which
reads the store when there is one and the export otherwise (both satisfy ``ResultsReader``). A store is opened
read-only wherever only reading is needed, and a file that is not a readable store is a one-line ``AfrInputError``.
The journal is SQLite's rollback journal, not WAL: a read-only reader then creates no files at all
(WAL readers leave ``-wal``/``-shm`` files behind), and a reader during a run waits for the unit
being written (one short transaction) instead of seeing a half-checkpointed file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.store.schema import (
    JSON_COLUMNS,
    SQLITE_HEADER,
    STORE_FILE,
    TABLES,
    axis_defaults,
    axis_names,
    create_tables_sql,
    key_columns,
    missing_axis_columns,
    missing_later_columns,
    missing_optional_columns,
    with_optional_columns,
)


@dataclass
class UnitRecord:
    """Everything one unit writes: its own row, one result row per model, grid rows, and its point
    on the protocol axes (``axes``, by name; an axis left out is stored at its default, from the
    store's config: ``schema.axis_defaults``)."""

    dataset: str
    base: str
    rep: int
    split_seed: int
    n_train: int
    n_test: int
    forest_seconds: float
    seconds: float
    results: list[dict]
    grid: list[dict]
    axes: dict[str, float] = field(default_factory=dict)
    cpu_seconds: float | None = None  # process time in the worker (None: not measured)
    ran_on: str | None = None  # where it ran: host, and the batch job (engine.provenance); None: not recorded


class ResultsStore:
    """One experiment's SQLite store in ``directory/store.sqlite`` (rollback journal)."""

    source = "store"

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.path = self.directory / STORE_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    # -- writing ------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=60)
            conn.execute("PRAGMA journal_mode=DELETE")  # also converts a store made in WAL mode
            conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as err:
            raise AfrInputError(f"{self.path}: cannot open the results store for writing ({err})") from None
        return conn

    def check_writable(self) -> None:
        """A one-line error, before anything is written, when the store cannot be written here
        (a read-only directory, file or file system)."""
        target = self.path if self.exists() else self.directory
        while not target.exists():
            target = target.parent
        if not os.access(target, os.W_OK) or (target == self.path and not os.access(self.directory, os.W_OK)):
            raise AfrInputError(
                f"{target}: cannot write the results store here (read-only); use --out DIR for a writable directory"
            )

    def create(self, manifest: dict) -> None:
        """Create the store (or reset it when ``manifest`` differs and the caller allowed it); a
        store from before some columns or protocol axes gains them (empty, or the axes at the
        ``axis_defaults`` of its config)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn, conn:
            conn.executescript(create_tables_sql())
            defaults = axis_defaults(manifest)
            for table in TABLES:
                present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
                for statement in (
                    missing_later_columns(table, present)  # the oldest first
                    + missing_axis_columns(table, present, defaults)
                    + missing_optional_columns(table, present)
                ):
                    conn.execute(statement)
            conn.executemany(
                "INSERT OR REPLACE INTO manifest VALUES (?, ?)",
                [(k, json.dumps(v, default=str)) for k, v in manifest.items()],
            )

    def delete(self) -> None:
        """Remove the store's files (``--fresh``)."""
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def write_unit(self, unit: UnitRecord) -> None:
        """Write one unit in a single transaction; a unit already present is left as it is."""
        names = axis_names()
        unknown = sorted(set(unit.axes) - set(names))
        if unknown:
            raise ValueError(f"unit axes {unknown} are not declared; declared: {', '.join(names)}")
        with closing(self._connect()) as conn, conn:
            defaults = dict(zip(names, axis_defaults(self._manifest(conn)))) if set(unit.axes) != set(names) else {}
            axes = tuple(unit.axes[a] if a in unit.axes else defaults[a] for a in names)
            cur = conn.execute(
                _insert(
                    "units",
                    "dataset, base, rep, split_seed, n_train, n_test, forest_seconds, seconds, "
                    "finished_at, cpu_seconds, ran_on",
                    "INSERT OR IGNORE",
                ),
                (
                    unit.dataset,
                    unit.base,
                    unit.rep,
                    unit.split_seed,
                    unit.n_train,
                    unit.n_test,
                    unit.forest_seconds,
                    unit.seconds,
                    datetime.now(UTC).isoformat(),
                    unit.cpu_seconds,
                    unit.ran_on,
                    *axes,
                ),
            )
            if cur.rowcount == 0:
                return
            conn.executemany(
                _insert(
                    "results",
                    "dataset, base, model, rep, r2, mae, rmse, params, selection, cv_score, solver_status, seconds",
                ),
                [
                    (
                        unit.dataset,
                        unit.base,
                        r["model"],
                        unit.rep,
                        r["r2"],
                        r["mae"],
                        r["rmse"],
                        json.dumps(r["params"], sort_keys=True),
                        r["selection"],
                        r["cv_score"],
                        json.dumps(r["solver_status"], sort_keys=True),
                        r["seconds"],
                        *axes,
                    )
                    for r in unit.results
                ],
            )
            conn.executemany(
                _insert(
                    "grid", "dataset, base, model, rep, point, cv_r2, cv_mae, test_r2, test_mae, test_rmse, solves"
                ),
                [
                    (
                        unit.dataset,
                        unit.base,
                        g["model"],
                        unit.rep,
                        json.dumps(g["point"], sort_keys=True),
                        g["cv_r2"],
                        g["cv_mae"],
                        g["test_r2"],
                        g["test_mae"],
                        g["test_rmse"],
                        json.dumps(g.get("solves", []), separators=(",", ":")),
                        *axes,
                    )
                    for g in unit.grid
                ],
            )

    # -- reading (read-only) ------------------------------------------------------------------
    def read_connection(self) -> sqlite3.Connection:
        """A read-only connection (``mode=ro``; ``immutable`` where not even the WAL index can be
        made, e.g. a read-only directory), or a one-line error naming the file and what is wrong.
        On an error, the WAL files the attempt created are removed: nothing is left behind."""
        self._check_file()
        created = [p for p in self._wal_files() if not p.exists()]
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            for suffix in ("", "&immutable=1"):
                conn = sqlite3.connect(uri + suffix, uri=True, timeout=60)
                try:
                    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                    return conn
                except sqlite3.OperationalError as err:
                    conn.close()
                    if "unable to open" not in str(err) and "readonly" not in str(err):
                        raise self._unreadable(err) from None
                except sqlite3.DatabaseError as err:
                    conn.close()
                    raise self._unreadable(err) from None
            raise AfrInputError(f"{self.path}: cannot open the results store read-only")
        except AfrInputError:
            self._remove_empty(created)
            raise

    def _wal_files(self) -> list[Path]:
        return [Path(f"{self.path}-wal"), Path(f"{self.path}-shm")]

    @staticmethod
    def _remove_empty(created: list[Path]) -> None:
        """Remove WAL files a failed read created (the WAL is empty: a reader never writes it)."""
        wal = created[0] if created and created[0].name.endswith("-wal") else None
        if wal is not None and wal.exists() and wal.stat().st_size > 0:
            return
        for path in created:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass

    def _check_file(self) -> None:
        """Empty, not SQLite, or shorter than its header says (truncated): a one-line error
        before SQLite opens the file (which could otherwise leave WAL files behind)."""
        try:
            size = self.path.stat().st_size
            with open(self.path, "rb") as handle:
                header = handle.read(100)
        except OSError as err:
            raise AfrInputError(f"{self.path}: cannot read the results store ({err.strerror})") from None
        if size == 0:
            raise AfrInputError(f"{self.path}: empty file, not a results store; delete it or use --out DIR")
        if not header.startswith(SQLITE_HEADER) or len(header) < 100:
            raise AfrInputError(
                f"{self.path}: not an SQLite database (damaged or not a results store); delete it or use --out DIR"
            )
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages, counter, valid_for = (int.from_bytes(header[i : i + 4], "big") for i in (28, 24, 92))
        wal = Path(f"{self.path}-wal")
        if pages and counter == valid_for and not (wal.exists() and wal.stat().st_size) and size < pages * page_size:
            raise AfrInputError(
                f"{self.path}: truncated results store ({size} bytes, its header says "
                f"{pages * page_size}); delete it or use --out DIR"
            )

    def _unreadable(self, err: Exception) -> AfrInputError:
        if "no such table" in str(err) or "no such column" in str(err):
            return AfrInputError(f"{self.path}: not an afr results store ({err})")
        return AfrInputError(
            f"{self.path}: unreadable results store ({err}: truncated or damaged); delete it or use --out DIR"
        )

    def _query(self, sql: str) -> list[tuple]:
        with closing(self.read_connection()) as conn:
            try:
                return conn.execute(sql).fetchall()
            except sqlite3.DatabaseError as err:
                raise self._unreadable(err) from None

    def manifest(self) -> dict:
        try:
            return {k: json.loads(v) for k, v in self._query("SELECT key, value FROM manifest ORDER BY key")}
        except json.JSONDecodeError as err:
            raise AfrInputError(f"{self.path}: manifest: a value is not JSON ({err})") from None

    @staticmethod
    def _manifest(conn: sqlite3.Connection) -> dict:
        """The manifest through an open (writing) connection."""
        return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM manifest")}

    def done_units(self) -> set[tuple[str, str, int]]:
        return set(self._query("SELECT dataset, base, rep FROM units"))

    def done_unit_keys(self) -> set[tuple]:
        """(dataset, base, *axes, rep) of every stored unit, the declared axes in order (an axis the
        store has no column for, read as it is: its units at its config's ``axis_defaults``)."""
        have = {name for name, _ in self.columns("units")}
        defaults = axis_defaults(self.manifest())
        axes = ", ".join(c if c in have else repr(v) for c, v in zip(axis_names(), defaults))
        return set(self._query(f"SELECT dataset, base, {axes}, rep FROM units"))

    def columns(self, table: str) -> list[tuple[str, str]]:
        """(name, declared type) of every column of ``table``, in table order."""
        rows = self._query(f"PRAGMA table_info({table})")
        if not rows:
            raise AfrInputError(f"{self.path}: not an afr results store (no table {table})")
        return [(r[1], r[2]) for r in rows]

    def _order(self, table: str) -> str:
        """The key order of ``table``, the protocol axes included where the table has them."""
        return ", ".join(key_columns(table, {name for name, _ in self.columns(table)}))

    def rows(self, table: str) -> list[tuple]:
        """Every row of ``table`` in key order (the export's order)."""
        return self._query(f"SELECT * FROM {table} ORDER BY {self._order(table)}")

    def frame(self, table: str) -> pd.DataFrame:
        """One table as a DataFrame, JSON columns decoded."""
        with closing(self.read_connection()) as conn:
            try:
                df = pd.read_sql_query(f"SELECT * FROM {table} ORDER BY {self._order(table)}", conn)
            except (sqlite3.DatabaseError, pd.errors.DatabaseError) as err:
                raise self._unreadable(err) from None
        for col in JSON_COLUMNS:
            if col in df:  # pandas reads NULL as NaN in a column that also holds text
                df[col] = df[col].map(lambda v: json.loads(v) if isinstance(v, str) else None)
        return with_optional_columns(table, df)


def _insert(table: str, columns: str, verb: str = "INSERT") -> str:
    """The INSERT statement of one row of ``table``: ``columns`` (comma-separated), then every axis."""
    names = [c.strip() for c in columns.split(",")] + list(axis_names())
    return f"{verb} INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
