"""The results store of one experiment: SQLite (WAL), one transaction per unit, resumable.

A *unit* is (dataset, base, repetition): one split, its forests, every model and grid point.
A unit is written whole in one transaction (its ``units`` row, one ``results`` row per model
and one ``grid`` row per model and grid point) or not at all, so a run killed at any moment
leaves only complete units; the next run skips them and computes the rest.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from afr_cli.errors import AfrInputError

STORE_FILE = "store.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units (
    dataset TEXT NOT NULL, base TEXT NOT NULL, rep INTEGER NOT NULL,
    split_seed INTEGER NOT NULL, n_train INTEGER NOT NULL, n_test INTEGER NOT NULL,
    forest_seconds REAL NOT NULL, seconds REAL NOT NULL, finished_at TEXT NOT NULL,
    PRIMARY KEY (dataset, base, rep));
CREATE TABLE IF NOT EXISTS results (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    r2 REAL, mae REAL, rmse REAL, params TEXT NOT NULL, selection TEXT NOT NULL,
    cv_score REAL, solver_status TEXT NOT NULL, seconds REAL NOT NULL,
    PRIMARY KEY (dataset, base, model, rep));
CREATE TABLE IF NOT EXISTS grid (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    point TEXT NOT NULL, cv_r2 REAL, cv_mae REAL, test_r2 REAL, test_mae REAL, test_rmse REAL,
    solves TEXT,
    PRIMARY KEY (dataset, base, model, rep, point));
"""


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


class ResultsStore:
    """One experiment's SQLite store in ``directory/store.sqlite`` (WAL journal)."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self.path = self.directory / STORE_FILE

    def exists(self) -> bool:
        return self.path.is_file()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def create(self, manifest: dict) -> None:
        """Create the store (or reset it when ``manifest`` differs and the caller allowed it)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as conn, conn:
            conn.executescript(_SCHEMA)
            if "solves" not in {row[1] for row in conn.execute("PRAGMA table_info(grid)")}:
                conn.execute("ALTER TABLE grid ADD COLUMN solves TEXT")  # stores made before per-solve logs
            conn.executemany("INSERT OR REPLACE INTO manifest VALUES (?, ?)",
                             [(k, json.dumps(v, default=str)) for k, v in manifest.items()])

    def delete(self) -> None:
        """Remove the store's files (``--fresh``)."""
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def manifest(self) -> dict:
        with closing(self._connect()) as conn:
            return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM manifest")}

    def done_units(self) -> set[tuple[str, str, int]]:
        with closing(self._connect()) as conn:
            return set(conn.execute("SELECT dataset, base, rep FROM units"))

    def write_unit(self, unit: UnitRecord) -> None:
        """Write one unit in a single transaction; a unit already present is left as it is."""
        from datetime import datetime, timezone

        with closing(self._connect()) as conn, conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO units VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (unit.dataset, unit.base, unit.rep, unit.split_seed, unit.n_train, unit.n_test,
                 unit.forest_seconds, unit.seconds, datetime.now(timezone.utc).isoformat()))
            if cur.rowcount == 0:
                return
            conn.executemany(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(unit.dataset, unit.base, r["model"], unit.rep, r["r2"], r["mae"], r["rmse"],
                  json.dumps(r["params"], sort_keys=True), r["selection"], r["cv_score"],
                  json.dumps(r["solver_status"], sort_keys=True), r["seconds"]) for r in unit.results])
            conn.executemany(
                "INSERT INTO grid (dataset, base, model, rep, point, cv_r2, cv_mae, test_r2, test_mae, test_rmse, "
                "solves) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(unit.dataset, unit.base, g["model"], unit.rep, json.dumps(g["point"], sort_keys=True),
                  g["cv_r2"], g["cv_mae"], g["test_r2"], g["test_mae"], g["test_rmse"],
                  json.dumps(g.get("solves", []), separators=(",", ":"))) for g in unit.grid])

    def frame(self, table: str) -> pd.DataFrame:
        """One table as a DataFrame, JSON columns decoded."""
        with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)) as conn:
            df = pd.read_sql_query(f"SELECT * FROM {table} ORDER BY dataset, base, rep", conn)
        for col in ("params", "solver_status", "point", "solves"):
            if col in df:
                df[col] = df[col].map(lambda v: None if v is None else json.loads(v))
        return df


def open_existing(directory: str | Path) -> ResultsStore:
    """A store that must already exist, or a one-line error naming the directory."""
    store = ResultsStore(directory)
    if not store.exists():
        raise AfrInputError(f"{directory}: no results store here (expected {STORE_FILE}); run `afr run CONFIG` first")
    return store


def load_results(results_dir: str | Path) -> pd.DataFrame:
    """The results rows of a store: dataset, base, model, rep, r2, mae, rmse, params, selection, ..."""
    return open_existing(results_dir).frame("results")


def load_grid(results_dir: str | Path) -> pd.DataFrame:
    """Per grid point: inner-CV and test scores (surfaces, best-test selection)."""
    return open_existing(results_dir).frame("grid")
