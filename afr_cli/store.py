"""The results store of one experiment: SQLite, one transaction per unit, resumable.

A *unit* is (dataset, base, repetition): one split, its forests, every model and grid point.
A unit is written whole in one transaction (its ``units`` row, one ``results`` row per model
and one ``grid`` row per model and grid point) or not at all, so a run killed at any moment
leaves only complete units; the next run skips them and computes the rest.

The SQLite file is the *working* store (git-ignored); its committed form is the export beside it
(``export/``, see ``afr_cli.store_export``). Readers go through ``open_existing``, which reads the
store when there is one and the export otherwise. A store is opened read-only wherever only
reading is needed, and a file that is not a readable store is a one-line ``AfrInputError``.
The journal is SQLite's rollback journal, not WAL: a read-only reader then creates no files at all
(WAL readers leave ``-wal``/``-shm`` files behind), and a reader during a run waits for the unit
being written (one short transaction) instead of seeing a half-checkpointed file.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.store_faults import missing_column

STORE_FILE = "store.sqlite"
TABLES = ("units", "results", "grid")
SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    dataset TEXT NOT NULL, base TEXT NOT NULL, rep INTEGER NOT NULL,
    split_seed INTEGER NOT NULL, n_train INTEGER NOT NULL, n_test INTEGER NOT NULL,
    forest_seconds REAL NOT NULL, seconds REAL NOT NULL, finished_at TEXT NOT NULL,
    train_fraction REAL NOT NULL, noise_eta REAL NOT NULL,
    PRIMARY KEY (dataset, base, train_fraction, noise_eta, rep));
CREATE TABLE IF NOT EXISTS results (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    r2 REAL, mae REAL, rmse REAL, params TEXT NOT NULL, selection TEXT NOT NULL,
    cv_score REAL, solver_status TEXT NOT NULL, seconds REAL NOT NULL,
    train_fraction REAL NOT NULL, noise_eta REAL NOT NULL,
    PRIMARY KEY (dataset, base, model, train_fraction, noise_eta, rep));
CREATE TABLE IF NOT EXISTS grid (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    point TEXT NOT NULL, cv_r2 REAL, cv_mae REAL, test_r2 REAL, test_mae REAL, test_rmse REAL,
    solves TEXT,
    train_fraction REAL NOT NULL, noise_eta REAL NOT NULL,
    PRIMARY KEY (dataset, base, model, train_fraction, noise_eta, rep, point));
"""
# The protocol axes of a unit (training fraction, noise level): key columns of every table.
# Stores and exports made before them hold one split of 1 - test_fraction without noise: they
# are read as such (``axis_defaults``) and gain the columns when a run extends them.
AXIS_COLUMNS = ("train_fraction", "noise_eta")


def varying_axes(frame: pd.DataFrame) -> list[str]:
    """The protocol axes a frame of units, results or grid rows varies over beyond dataset, base
    and rep. Every store records them; one that holds a single value (an experiment without axes:
    the 1 - test_fraction split, no noise) names no cell."""
    return [a for a in AXIS_COLUMNS if a in frame.columns and frame[a].nunique() > 1]


def axis_defaults(manifest: dict) -> tuple[float, float]:
    """(train_fraction, noise_eta) of a store made before the protocol axes, from its config."""
    protocol = (manifest.get("config") or {}).get("protocol") or {}
    return round(1.0 - float(protocol.get("test_fraction", 0.2)), 10), 0.0

# Each table's key (the export's sort order) and its JSON columns (decoded into dicts on reading).
KEYS = {"units": ("dataset", "base", "rep"), "results": ("dataset", "base", "model", "rep"),
        "grid": ("dataset", "base", "model", "rep", "point")}
JSON_COLUMNS = ("params", "solver_status", "point", "solves")


@dataclass
class UnitRecord:
    """Everything one unit writes: its own row, one result row per model, grid rows."""

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
    train_fraction: float = 0.8
    noise_eta: float = 0.0


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
            raise AfrInputError(f"{target}: cannot write the results store here (read-only); "
                                f"use --out DIR for a writable directory")

    def create(self, manifest: dict) -> None:
        """Create the store (or reset it when ``manifest`` differs and the caller allowed it); a
        store from before the protocol axes gains their columns (``axis_defaults`` of its config)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn, conn:
            conn.executescript(_SCHEMA)
            if "solves" not in {row[1] for row in conn.execute("PRAGMA table_info(grid)")}:
                conn.execute("ALTER TABLE grid ADD COLUMN solves TEXT")  # stores made before per-solve logs
            add_axis_columns(conn, axis_defaults(manifest))
            conn.executemany("INSERT OR REPLACE INTO manifest VALUES (?, ?)",
                             [(k, json.dumps(v, default=str)) for k, v in manifest.items()])

    def delete(self) -> None:
        """Remove the store's files (``--fresh``)."""
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def write_unit(self, unit: UnitRecord) -> None:
        """Write one unit in a single transaction; a unit already present is left as it is."""
        from datetime import datetime, timezone

        with closing(self._connect()) as conn, conn:
            axes = (unit.train_fraction, unit.noise_eta)
            cur = conn.execute(
                "INSERT OR IGNORE INTO units (dataset, base, rep, split_seed, n_train, n_test, forest_seconds, "
                "seconds, finished_at, train_fraction, noise_eta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (unit.dataset, unit.base, unit.rep, unit.split_seed, unit.n_train, unit.n_test,
                 unit.forest_seconds, unit.seconds, datetime.now(timezone.utc).isoformat(), *axes))
            if cur.rowcount == 0:
                return
            conn.executemany(
                "INSERT INTO results (dataset, base, model, rep, r2, mae, rmse, params, selection, cv_score, "
                "solver_status, seconds, train_fraction, noise_eta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(unit.dataset, unit.base, r["model"], unit.rep, r["r2"], r["mae"], r["rmse"],
                  json.dumps(r["params"], sort_keys=True), r["selection"], r["cv_score"],
                  json.dumps(r["solver_status"], sort_keys=True), r["seconds"], *axes) for r in unit.results])
            conn.executemany(
                "INSERT INTO grid (dataset, base, model, rep, point, cv_r2, cv_mae, test_r2, test_mae, test_rmse, "
                "solves, train_fraction, noise_eta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(unit.dataset, unit.base, g["model"], unit.rep, json.dumps(g["point"], sort_keys=True),
                  g["cv_r2"], g["cv_mae"], g["test_r2"], g["test_mae"], g["test_rmse"],
                  json.dumps(g.get("solves", []), separators=(",", ":")), *axes) for g in unit.grid])

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
            raise AfrInputError(f"{self.path}: not an SQLite database (damaged or not a results store); "
                                f"delete it or use --out DIR")
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages, counter, valid_for = (int.from_bytes(header[i:i + 4], "big") for i in (28, 24, 92))
        wal = Path(f"{self.path}-wal")
        if pages and counter == valid_for and not (wal.exists() and wal.stat().st_size) and size < pages * page_size:
            raise AfrInputError(f"{self.path}: truncated results store ({size} bytes, its header says "
                                f"{pages * page_size}); delete it or use --out DIR")

    def _unreadable(self, err: Exception) -> AfrInputError:
        if "no such table" in str(err) or "no such column" in str(err):
            return AfrInputError(f"{self.path}: not an afr results store ({err})")
        return AfrInputError(f"{self.path}: unreadable results store ({err}: truncated or damaged); "
                             f"delete it or use --out DIR")

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

    def done_units(self) -> set[tuple[str, str, int]]:
        return set(self._query("SELECT dataset, base, rep FROM units"))

    def done_unit_keys(self) -> set[tuple[str, str, float, float, int]]:
        """(dataset, base, train_fraction, noise_eta, rep) of every stored unit (a store from before
        the protocol axes, read as it is: its units at its config's ``axis_defaults``)."""
        have = {name for name, _ in self.columns("units")}
        defaults = axis_defaults(self.manifest())
        axes = ", ".join(c if c in have else repr(float(v)) for c, v in zip(AXIS_COLUMNS, defaults))
        return set(self._query(f"SELECT dataset, base, {axes}, rep FROM units"))

    def columns(self, table: str) -> list[tuple[str, str]]:
        """(name, declared type) of every column of ``table``, in table order."""
        rows = self._query(f"PRAGMA table_info({table})")
        if not rows:
            raise AfrInputError(f"{self.path}: not an afr results store (no table {table})")
        return [(r[1], r[2]) for r in rows]

    def _order(self, table: str) -> str:
        """The key order of ``table``, the protocol axes included where the table has them."""
        have = {name for name, _ in self.columns(table)}
        keys = list(KEYS[table])
        axes = [a for a in AXIS_COLUMNS if a in have]
        at = keys.index("rep")
        return ", ".join(keys[:at] + axes + keys[at:])

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
        return df


def add_axis_columns(conn: sqlite3.Connection, defaults: tuple[float, float]) -> None:
    """Give a store from before the protocol axes their columns, filled with ``defaults`` (its key
    stays (dataset, base, rep), still unique: such a store holds one training fraction and noise)."""
    for table in TABLES:
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for column, value in zip(AXIS_COLUMNS, defaults):
            if column not in have:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} REAL NOT NULL DEFAULT {float(value)!r}")


def has_results(directory: str | Path) -> bool:
    """Whether ``directory`` holds a results store or its export (a ``store.sqlite`` that is not a
    file counts: reading it is then a one-line error, never a silent fall back to the export)."""
    from afr_cli.store_export import has_export

    return os.path.lexists(Path(directory) / STORE_FILE) or has_export(directory)


def find_stores(root: str | Path) -> list[Path]:
    """Every directory below ``root`` holding a store or an export, in path order."""
    from afr_cli.store_export import EXPORT_DIR, EXPORT_MANIFEST

    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.rglob(STORE_FILE)}
    found |= {p.parent.parent for p in root.rglob(f"{EXPORT_DIR}/{EXPORT_MANIFEST}")}
    return sorted(found)


def open_existing(directory: str | Path):
    """The results of ``directory`` for reading: its SQLite store when there is one, else its
    committed export (both offer ``frame``, ``manifest``, ``done_units``); a one-line error if neither."""
    from afr_cli.store_export import ExportedStore, has_export

    store = ResultsStore(directory)
    if store.path.exists() or store.path.is_symlink():  # a directory or a damaged file is an error,
        lacking = missing_column(store.columns)          # never a silent fall back to the export
        if lacking:
            raise AfrInputError(f"{store.path}: not a complete afr results store: table {lacking[0]} lacks "
                                f"the column {lacking[1]}; delete it or use --out DIR")
        return store
    if has_export(directory):
        return ExportedStore(directory)
    raise AfrInputError(f"{directory}: no results store here (expected {STORE_FILE} or its export); "
                        f"run `afr run CONFIG` first")


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
