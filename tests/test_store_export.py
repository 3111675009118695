"""The committed export of a store: exact round trip, byte-stable, readable alone, seeds a run."""

from __future__ import annotations

import io
import json
import lzma
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.errors import AfrInputError
from afr_cli.store import KEYS, TABLES, ResultsStore, UnitRecord, load_results
from afr_cli.store.export import EXPORT_DIR, GRID_DIGITS, ExportedStore, export_store, has_export, seed_store

CONFIG = {
    "name": "export-test",
    "seed": 5,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 5, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0, 0.5, 1], "tau": [1, 10]}},
    ],
}


def _raw(directory: Path) -> dict:
    """Every table's rows exactly as SQLite holds them, in key order, and the manifest's text."""
    with sqlite3.connect(f"file:{directory / 'store.sqlite'}?mode=ro", uri=True) as conn:
        out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY {', '.join(KEYS[t])}").fetchall() for t in TABLES}
        out["manifest"] = conn.execute("SELECT key, value FROM manifest ORDER BY key").fetchall()
    return out


def _run(config: Path, out: Path, reps: int) -> None:
    exp = load_experiment(config, [f"protocol.reps={reps}"], out)
    run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *a: None)


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "export.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return path


@pytest.fixture(scope="module")
def full(config, tmp_path_factory) -> Path:
    """Both repetitions in one uninterrupted run: what a seeded, extended store must equal."""
    out = tmp_path_factory.mktemp("full")
    _run(config, out, 2)
    return out


def _awkward_store(directory: Path) -> None:
    """Values an export must keep exactly: ints beside floats, strings that look like numbers, an
    empty string, NULL metrics, a nested value, per-solve logs, and a column of a later schema."""
    store = ResultsStore(directory)
    store.create({"experiment": "awkward", "config_hash": "h", "runs": [{"reps": 1, "note": 'x,y\n"z"'}]})
    results = [
        {
            "model": "m",
            "r2": 0.1 + 0.2,
            "mae": None,
            "rmse": 1e-300,
            "params": {"eps": 1, "tau": 0.1, "name": "1", "empty": "", "list": [1, 2.5]},
            "selection": "inner-cv",
            "cv_score": None,
            "solver_status": {"ECOS:optimal": 3},
            "seconds": 2.0 / 3,
        }
    ]
    grid = [
        {
            "model": "m",
            "point": {"eps": e, "tau": 0.1},
            "cv_r2": 1 / 3,
            "cv_mae": None,
            "test_r2": -0.0,
            "test_mae": float(e) + 1e-17,
            "test_rmse": 123456789.123456789,
        }
        for e in (0, 0.25, 1)
    ]
    for rep in (0, 1):
        store.write_unit(UnitRecord("D,1", "RF", rep, 7, 10, 5, 0.5, 1.25, results, grid))
    with sqlite3.connect(store.path) as conn:
        conn.execute("ALTER TABLE grid ADD COLUMN later TEXT")
        conn.execute("""UPDATE grid SET later = '{"stage": [["DAQP", "optimal", 0.5, 1.25]]}' WHERE rep = 0""")


def test_store_export_store_gives_identical_rows(tmp_path, full):
    shutil.copytree(full, tmp_path / "full")  # the module's store keeps its default export
    for source in (tmp_path / "awkward", tmp_path / "full"):
        if source == tmp_path / "awkward":
            _awkward_store(source)
        export_store(source, grid_cv=True, grid_solves=True, grid_digits=0)
        copy = tmp_path / f"copy-{source.name}"
        shutil.copytree(source / EXPORT_DIR, copy / EXPORT_DIR)
        seed_store(copy)
        assert _raw(copy) == _raw(source)
        for table in TABLES:  # and the readers give the same frames from the export as from the store
            pd.testing.assert_frame_equal(
                ExportedStore(source).frame(table), ResultsStore(source).frame(table), check_exact=True
            )


def test_by_default_only_the_cv_scores_and_solve_logs_are_left_out(tmp_path, full):
    shutil.copytree(full, tmp_path / "s")
    export_store(tmp_path / "s", grid_cv=False, grid_solves=False)
    shutil.copytree(tmp_path / "s" / EXPORT_DIR, tmp_path / "copy" / EXPORT_DIR)
    seed_store(tmp_path / "copy")
    raw, seeded = _raw(tmp_path / "s"), _raw(tmp_path / "copy")
    assert {t: v for t, v in seeded.items() if t != "grid"} == {t: v for t, v in raw.items() if t != "grid"}
    # grid columns: key 0-4, cv_r2 and cv_mae 5-6, test scores 7-9 (to GRID_DIGITS significant digits),
    # solves 10, protocol axes 11-12
    assert [
        r[:5] + (None, None) + tuple(float(f"{v:.{GRID_DIGITS}g}") for v in r[7:10]) + (None,) + r[11:]
        for r in raw["grid"]
    ] == seeded["grid"]
    assert any(float(f"{v:.{GRID_DIGITS}g}") != v for r in raw["grid"] for v in r[7:10])  # digits were dropped
    assert any(r[10] not in (None, "[]") for r in raw["grid"])  # there was a log to leave out
    grid = ExportedStore(tmp_path / "s").frame("grid")
    assert "cv_r2" not in grid and "solves" not in grid and grid["test_r2"].notna().all()


def test_grid_digits_is_kept_by_a_re_export_and_bad_values_are_refused(tmp_path, full):
    shutil.copytree(full, tmp_path / "s")
    export_store(tmp_path / "s", grid_digits=4)
    export_store(tmp_path / "s")  # None: the export's own choice
    meta = json.loads((tmp_path / "s" / EXPORT_DIR / "manifest.json").read_text())
    assert meta["grid_digits"] == 4
    grid, results = ExportedStore(tmp_path / "s").frame("grid"), ExportedStore(tmp_path / "s").frame("results")
    assert (grid["test_r2"] == grid["test_r2"].map(lambda v: float(f"{v:.4g}"))).all()
    pd.testing.assert_frame_equal(results, ResultsStore(tmp_path / "s").frame("results"), check_exact=True)
    before = {p.name: p.read_bytes() for p in (tmp_path / "s" / EXPORT_DIR).iterdir()}
    with pytest.raises(AfrInputError, match="grid_digits: 18 is not allowed"):
        export_store(tmp_path / "s", grid_digits=18)
    assert {p.name: p.read_bytes() for p in (tmp_path / "s" / EXPORT_DIR).iterdir()} == before


def test_exporting_twice_gives_identical_bytes(tmp_path, full):
    shutil.copytree(full, tmp_path / "s")
    first = {p.name: p.read_bytes() for p in (tmp_path / "s" / EXPORT_DIR).iterdir()}
    assert export_store(tmp_path / "s") == []  # unchanged data: no file rewritten
    second = {p.name: p.read_bytes() for p in (tmp_path / "s" / EXPORT_DIR).iterdir()}
    assert first == second and set(first) == {"manifest.json", "units.csv.xz", "results.csv.xz", "grid.csv.xz"}
    # a store rebuilt from the export exports to the same bytes again
    shutil.copytree(tmp_path / "s" / EXPORT_DIR, tmp_path / "c" / EXPORT_DIR)
    seed_store(tmp_path / "c")
    (tmp_path / "c" / EXPORT_DIR / "grid.csv.xz").unlink()
    export_store(tmp_path / "c")
    assert {p.name: p.read_bytes() for p in (tmp_path / "c" / EXPORT_DIR).iterdir()} == first
    assert lzma.decompress(first["grid.csv.xz"]).decode().startswith("dataset,base,model,rep,point.eps,point.tau,")
    meta = json.loads(first["manifest.json"])
    assert meta["tables"]["grid"]["as_columns"] == {"point": ["eps", "tau"]}


@pytest.mark.slow
def test_read_commands_work_from_an_export_alone(tmp_path, full):
    shutil.copytree(full, tmp_path / "s")
    args = {
        "table": ["table", "--results", str(tmp_path / "s"), "--std"],
        "best": ["table", "--results", str(tmp_path / "s"), "--selection", "best-test", "--format", "csv"],
        "status": ["status", str(tmp_path / "s")],
    }
    before = {k: run_afr(*a) for k, a in args.items()}
    (tmp_path / "s" / "store.sqlite").unlink()
    assert has_export(tmp_path / "s")
    for key, a in args.items():
        after = run_afr(*a)
        assert after.returncode == 0 and before[key].returncode == 0, after.stderr
        expected = before[key].stdout.replace(f"{tmp_path / 's'}:", f"{tmp_path / 's'} (export):")
        if key == "best":  # means of grid scores kept to GRID_DIGITS: the printed 6th decimal may round apart
            ours, theirs = (pd.read_csv(io.StringIO(text)) for text in (after.stdout, expected))
            pd.testing.assert_frame_equal(ours, theirs, check_exact=False, rtol=0, atol=1.01e-6)
        else:
            assert after.stdout == expected, key
    plot = run_afr(
        "plot",
        "surface",
        "--results",
        str(tmp_path / "s"),
        "--dataset",
        "Friedman1",
        "--model",
        "eps-abrf",
        "--x",
        "tau",
        "--y",
        "eps",
        "--out",
        str(tmp_path / "p.png"),
    )
    assert plot.returncode == 0 and (tmp_path / "p.png").stat().st_size > 1000, plot.stderr
    assert not (tmp_path / "s" / "store.sqlite").exists()  # reading never builds a store


def test_run_seeds_a_missing_store_from_the_export_and_extends_it(tmp_path, config, full):
    _run(config, tmp_path / "a", 1)
    clone = tmp_path / "clone"
    shutil.copytree(tmp_path / "a" / EXPORT_DIR, clone / EXPORT_DIR)  # a fresh clone: the export only
    _run(config, clone, 2)
    seeded, uninterrupted = load_results(clone), load_results(full)
    cols = ["dataset", "base", "model", "rep", "r2", "mae", "rmse", "params", "selection", "cv_score"]
    pd.testing.assert_frame_equal(seeded[cols], uninterrupted[cols], check_exact=True)
    assert ResultsStore(clone).manifest()["runs"][-1]["units_stored_before"] == 1
    # the run refreshed the export: it now holds both repetitions
    assert ExportedStore(clone).done_units() == {("Friedman1", "RF@5", 0), ("Friedman1", "RF@5", 1)}
    assert ExportedStore(clone).done_unit_keys() == {
        ("Friedman1", "RF@5", 0.8, 0.0, 0),
        ("Friedman1", "RF@5", 0.8, 0.0, 1),
    }


def test_sizes_extrapolate_the_tables_and_keep_as_stored_exports(tmp_path, full):
    from afr_cli.store.sizes import RESULTS_BUDGET_MB, export_sizes, other_bytes, render_sizes

    for name in ("a", "b"):
        shutil.copytree(full, tmp_path / "results" / name)
    root = tmp_path / "results"
    (size,) = [s for s in export_sizes(root) if s.directory.name == "a"]
    tables = sum(p.stat().st_size for p in (root / "a" / EXPORT_DIR).glob("*.csv.xz"))
    assert size.reps == 2 and size.table_bytes == tables
    assert size.at(4) == size.fixed_bytes + 2 * tables
    last = render_sizes(root, 4, [root / "b"]).splitlines()[-1]
    expected = (size.fixed_bytes + 2 * tables + size.fixed_bytes + tables + other_bytes(root)) / 1e6
    assert "at 4 repetitions (but 1 export(s) as stored)" in last and f"{expected:.2f} MB" in last
    assert last.endswith(f"(budget {RESULTS_BUDGET_MB} MB)")
    proc = run_afr("export", "--sizes", "--root", str(root), "--as-stored", str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "--as-stored" in proc.stderr and "no export below" in proc.stderr


def test_a_store_extended_from_its_export_reads_back_with_and_without_solve_logs(tmp_path, full):
    """Seeded rows lack the per-solve log (NULL), new rows have it: pandas reads such a column's
    NULLs as NaN, which must still decode as 'no log'."""
    shutil.copytree(full, tmp_path / "s")
    with sqlite3.connect(tmp_path / "s" / "store.sqlite") as conn:
        conn.execute("UPDATE grid SET solves = NULL WHERE rep = 0")
    grid = ResultsStore(tmp_path / "s").frame("grid")
    assert (
        grid.loc[grid.rep == 0, "solves"].isna().all()
        and grid.loc[grid.rep == 0, "solves"].map(type).eq(type(None)).all()
    )
    assert grid.loc[grid.rep == 1, "solves"].map(lambda v: isinstance(v, list)).all()
