"""Protocol axes are declared key columns: stores made before an axis read as they are (the axis at
its default), the two axes of today round-trip, and a third axis declared here round-trips through
writer, export and reader with no migration code."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing

import pytest

from afr_cli.store import ResultsReader, ResultsStore, UnitRecord, open_existing, schema, varying_axes
from afr_cli.store.export import ExportedStore, export_store, seed_store

# The schema of a store made before the protocol axes (and before the per-solve log), as its SQL was.
PRE_AXES_SQL = """
CREATE TABLE manifest (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE units (
    dataset TEXT NOT NULL, base TEXT NOT NULL, rep INTEGER NOT NULL,
    split_seed INTEGER NOT NULL, n_train INTEGER NOT NULL, n_test INTEGER NOT NULL,
    forest_seconds REAL NOT NULL, seconds REAL NOT NULL, finished_at TEXT NOT NULL,
    PRIMARY KEY (dataset, base, rep));
CREATE TABLE results (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    r2 REAL, mae REAL, rmse REAL, params TEXT NOT NULL, selection TEXT NOT NULL,
    cv_score REAL, solver_status TEXT NOT NULL, seconds REAL NOT NULL,
    PRIMARY KEY (dataset, base, model, rep));
CREATE TABLE grid (
    dataset TEXT NOT NULL, base TEXT NOT NULL, model TEXT NOT NULL, rep INTEGER NOT NULL,
    point TEXT NOT NULL, cv_r2 REAL, cv_mae REAL, test_r2 REAL, test_mae REAL, test_rmse REAL,
    PRIMARY KEY (dataset, base, model, rep, point));
"""
MANIFEST = {"config": {"protocol": {"test_fraction": 0.3}}, "config_hash": "abc"}


def _rows(rep: int) -> tuple[list[dict], list[dict]]:
    results = [
        {
            "model": "rf",
            "r2": 0.5 + rep / 10,
            "mae": 1.0,
            "rmse": 2.0,
            "params": {"tau": 1},
            "selection": "inner-cv",
            "cv_score": 0.4,
            "solver_status": {},
            "seconds": 0.1,
        }
    ]
    grid = [
        {
            "model": "rf",
            "point": {"tau": 1},
            "cv_r2": 0.4,
            "cv_mae": 1.1,
            "test_r2": 0.5 + rep / 10,
            "test_mae": 1.0,
            "test_rmse": 2.0,
            "solves": [],
        }
    ]
    return results, grid


def _unit(rep: int, **axes) -> UnitRecord:
    return UnitRecord("D", "RF", rep, 7, 70, 30, 0.5, 1.0, *_rows(rep), axes)


def _pre_axes_store(directory) -> ResultsStore:
    directory.mkdir(parents=True, exist_ok=True)
    store = ResultsStore(directory)
    with closing(sqlite3.connect(store.path)) as conn, conn:
        conn.executescript(PRE_AXES_SQL)
        conn.executemany("INSERT INTO manifest VALUES (?, ?)", [(k, json.dumps(v)) for k, v in MANIFEST.items()])
        for rep in (0, 1):
            conn.execute("INSERT INTO units VALUES ('D', 'RF', ?, 7, 70, 30, 0.5, 1.0, 'then')", (rep,))
            conn.execute(
                "INSERT INTO results VALUES ('D', 'RF', 'rf', ?, ?, 1.0, 2.0, '{\"tau\": 1}', 'inner-cv', "
                "0.4, '{}', 0.1)",
                (rep, 0.5 + rep / 10),
            )
            conn.execute(
                "INSERT INTO grid VALUES ('D', 'RF', 'rf', ?, '{\"tau\": 1}', 0.4, 1.1, ?, 1.0, 2.0)",
                (rep, 0.5 + rep / 10),
            )
    return store


def test_store_from_before_the_axes_reads_as_it_is(tmp_path):
    store = _pre_axes_store(tmp_path / "old")
    results = open_existing(store.directory).frame("results")
    assert "train_fraction" not in results.columns and "noise_eta" not in results.columns
    assert list(results["r2"]) == [0.5, 0.6] and varying_axes(results) == []
    # its units at its config's point: 1 - test_fraction, no noise
    assert store.done_unit_keys() == {("D", "RF", 0.7, 0.0, 0), ("D", "RF", 0.7, 0.0, 1)}
    export_store(store.directory, grid_cv=True, grid_solves=True)
    export = ExportedStore(store.directory)
    assert [c for c, _ in export.columns("units")] == [c for c, _ in schema.COLUMNS["units"]]
    assert export.done_unit_keys() == store.done_unit_keys()
    assert export.frame("results").equals(results)
    # extending it (create) gives it the axis columns, filled with its point; no row changes
    store.create(MANIFEST)
    store.write_unit(_unit(2))
    extended = store.frame("results")
    assert list(extended["train_fraction"]) == [0.7] * 3 and list(extended["noise_eta"]) == [0.0] * 3
    assert list(extended["r2"]) == [0.5, 0.6, 0.7]


def test_store_with_the_two_axes_round_trips(tmp_path):
    store = ResultsStore(tmp_path / "two")
    store.create(MANIFEST)
    for rep in (0, 1):
        for fraction, eta in ((0.15, 0.0), (0.5, 0.5)):
            store.write_unit(_unit(rep, train_fraction=fraction, noise_eta=eta))
    keys = store.done_unit_keys()
    assert ("D", "RF", 0.15, 0.0, 1) in keys and ("D", "RF", 0.5, 0.5, 0) in keys and len(keys) == 4
    assert varying_axes(store.frame("results")) == ["train_fraction", "noise_eta"]
    export_store(store.directory, grid_cv=True, grid_solves=True)
    exported = ExportedStore(store.directory)
    assert exported.done_unit_keys() == keys
    assert isinstance(store, ResultsReader) and isinstance(exported, ResultsReader)  # one reading interface
    assert (store.source, exported.source) == ("store", "export")
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "export").symlink_to(store.directory / "export")
    seeded = seed_store(clone)
    for table in ("units", "results", "grid"):
        assert seeded.rows(table)[0][:4] == store.rows(table)[0][:4]
        assert (
            seeded.frame(table)
            .drop(columns="finished_at", errors="ignore")
            .equals(store.frame(table).drop(columns="finished_at", errors="ignore"))
        )


def test_a_third_axis_is_one_declaration(tmp_path, monkeypatch):
    # a store of today's two axes, made before the third is declared
    before = ResultsStore(tmp_path / "before")
    before.create(MANIFEST)
    before.write_unit(_unit(0, train_fraction=0.5, noise_eta=0.0))
    export_store(before.directory)
    exported_before = (before.directory / "export" / "results.csv.xz").read_bytes()

    seed_offset = schema.Axis(
        "seed_offset",
        "INTEGER",
        lambda protocol: protocol.get("seed_offset", 0),
        "an offset added to every seed (declared by this test)",
    )
    monkeypatch.setattr(schema, "AXES", [*schema.AXES, seed_offset])

    # the store made before reads as it was, the new axis at its default
    assert before.done_unit_keys() == {("D", "RF", 0.5, 0.0, 0, 0)}
    assert ExportedStore(before.directory).done_unit_keys() == {("D", "RF", 0.5, 0.0, 0, 0)}
    assert "seed_offset" not in before.frame("results").columns
    export_store(before.directory)
    assert (before.directory / "export" / "results.csv.xz").read_bytes() == exported_before
    # extending it adds the column at the default
    before.create(MANIFEST)
    before.write_unit(_unit(1, train_fraction=0.5, noise_eta=0.0, seed_offset=0))
    assert list(before.frame("units")["seed_offset"]) == [0, 0]

    # a new store varies over it: writer -> export -> reader -> seeded store, no migration code
    store = ResultsStore(tmp_path / "three")
    store.create(MANIFEST)
    for offset in (0, 3):
        store.write_unit(_unit(0, train_fraction=0.5, noise_eta=0.0, seed_offset=offset))
    assert ("seed_offset", "INTEGER") in store.columns("grid")
    assert store.done_unit_keys() == {("D", "RF", 0.5, 0.0, 0, 0), ("D", "RF", 0.5, 0.0, 3, 0)}
    assert varying_axes(store.frame("results")) == ["seed_offset"]
    export_store(store.directory, grid_cv=True, grid_solves=True)
    exported = ExportedStore(store.directory)
    assert exported.done_unit_keys() == store.done_unit_keys()
    assert list(exported.frame("grid")["seed_offset"]) == [0, 3]
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "export").symlink_to(store.directory / "export")
    seeded = seed_store(clone)
    assert seeded.done_unit_keys() == store.done_unit_keys()
    assert seeded.frame("results").equals(store.frame("results"))
    with pytest.raises(ValueError, match="not declared"):
        store.write_unit(_unit(1, depth=2))
