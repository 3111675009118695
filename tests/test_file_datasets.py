"""Datasets from the user's files and loaders: every check is a one-line error that
writes nothing; CSV and Parquet files run and compare like the papers' datasets; the manifest
records each file's identity and a changed file refuses to extend its store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr
from own_family_fixture import SHARP_FAMILY_MODULE
from sklearn.datasets import load_diabetes

from afr_cli.data.checks import rows_needed, smallest_training_rows
from afr_cli.data.files import detect_separator
from afr_cli.store.reader import open_existing


def _manifest(store: Path) -> dict:
    """The store's manifest through the one reader interface (a store of one's own has no
    export: `afr run` writes one for the paper folders' reference stores only)."""
    return open_existing(store).manifest()


def _frame(rows: int = 60) -> pd.DataFrame:
    return load_diabetes(as_frame=True).frame.head(rows).rename(columns={"target": "progression"})


def _config(tmp: Path, entry: dict, **extra) -> Path:
    cfg = {
        "name": "own-data",
        "seed": 2,
        "protocol": {"reps": 2},
        "datasets": [entry],
        "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}},
        ],
        **extra,
    }
    path = tmp / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _refused(tmp: Path, text: str, *needles: str, entry: dict | None = None, protocol: dict | None = None) -> None:
    """Both ``afr validate`` and ``afr run`` stop with one line naming the file; nothing is written."""
    (tmp / "data.csv").write_text(text)
    extra = {"protocol": protocol} if protocol else {}
    config = _config(tmp, entry or {"name": "Mine", "file": "data.csv", "target": "y"}, **extra)
    before = _snapshot(tmp)
    for command in (["validate", str(config)], ["run", str(config), "--out", str(tmp / "store"), "-q", "-j", "1"]):
        assert_one_line_error(run_afr(*command), "data.csv", *needles)
        assert _snapshot(tmp) == before


def _csv(columns: list[str], rows: list[list]) -> str:
    return "\n".join([",".join(columns)] + [",".join(map(str, r)) for r in rows]) + "\n"


def _good_rows(n: int = 12) -> list[list]:
    return [[i, (i * 7) % 5, i * 0.5 + (i % 3)] for i in range(n)]


def test_a_missing_target_column_is_named_with_the_columns_there_are(tmp_path):
    _refused(tmp_path, _csv(["a", "b", "c"], _good_rows()), "target: no column 'y'", "columns: a, b, c")


def test_a_non_numeric_column_says_which_row_and_how_to_drop_it(tmp_path):
    rows = [[i, "Paris" if i == 4 else i, i * 1.5] for i in range(12)]
    _refused(
        tmp_path,
        _csv(["a", "city", "y"], rows),
        "column 'city': not numeric",
        "row 5",
        "'Paris'",
        "drop: [city]",
        "encode",
    )


def test_a_missing_value_names_its_column_and_first_row(tmp_path):
    rows = _good_rows()
    rows[6][1] = ""
    _refused(tmp_path, _csv(["a", "b", "y"], rows), "column 'b'", "missing value", "row 7")


def test_an_infinite_value_names_its_column_and_first_row(tmp_path):
    rows = _good_rows()
    rows[3][0] = "inf"
    _refused(tmp_path, _csv(["a", "b", "y"], rows), "column 'a'", "infinite value", "row 4")


def test_a_constant_target_is_refused(tmp_path):
    rows = [[i, i % 3, 4.0] for i in range(12)]
    _refused(tmp_path, _csv(["a", "b", "y"], rows), "target 'y': constant", "every row is 4")


def test_duplicate_column_names_are_refused(tmp_path):
    _refused(tmp_path, _csv(["a", "a", "y"], _good_rows()), "column 'a'", "used by 2 columns", "unique")


def test_an_unnamed_column_such_as_a_written_index_is_refused(tmp_path):
    _refused(tmp_path, _csv(["", "a", "y"], _good_rows()), "column 1 has no name", "index=False")


def test_fewer_rows_than_the_protocol_needs_at_its_smallest_training_split(tmp_path):
    protocol = {"reps": 2, "train_fractions": [0.5, 0.8], "inner_folds": 5}
    _refused(
        tmp_path,
        _csv(["a", "b", "y"], _good_rows(12)),
        "12 rows",
        f"at least {rows_needed((0.5, 0.2), 5)}",
        "test fraction 0.5",
        "5 inner folds",
        protocol=protocol,
    )


def test_a_features_or_drop_column_that_is_not_there_is_named(tmp_path):
    _refused(
        tmp_path,
        _csv(["a", "b", "y"], _good_rows()),
        "drop: no column 'zz'",
        entry={"name": "Mine", "file": "data.csv", "target": "y", "drop": ["zz"]},
    )


def test_rows_needed_follows_the_protocol_split():
    assert smallest_training_rows(10, (0.2,)) == (8, 2)
    assert rows_needed((0.2,), 3) == 8  # 2 test rows, and 6 training rows make 3 folds of 2
    assert rows_needed((0.5,), 3) == 12


def test_the_delimiter_is_detected():
    assert detect_separator("a;b;y\n1;2;3\n") == ";"
    assert detect_separator("a\tb\ty\n1\t2\t3\n") == "\t"
    assert detect_separator("a,b,y\n1,2,3\n") == ","


def test_datasets_info_shows_what_afr_would_read(tmp_path):
    frame = _frame()
    frame.to_csv(tmp_path / "d.tsv", sep="\t", index=False)
    before = _snapshot(tmp_path)
    proc = run_afr("datasets", "info", str(tmp_path / "d.tsv"), "--target", "progression", "--drop", "sex")
    assert proc.returncode == 0, proc.stderr
    assert "rows          60 " in proc.stdout
    assert "features      9: age, bmi, bp" in proc.stdout
    assert f"mean {frame.progression.mean():.6g}" in proc.stdout
    assert "problems      none" in proc.stdout
    assert_one_line_error(
        run_afr("datasets", "info", str(tmp_path / "d.tsv"), "--target", "nope"), "d.tsv", "target: no column 'nope'"
    )
    assert _snapshot(tmp_path) == before


def test_a_dataset_entry_that_is_not_usable_is_a_one_line_error(tmp_path):
    (tmp_path / "data.csv").write_text(_csv(["a", "b", "y"], _good_rows()))
    cases = [
        ({"name": "Mine", "file": "nope.csv", "target": "y"}, "datasets[0].file: no such file"),
        ({"name": "Wine", "file": "data.csv", "target": "y"}, "'Wine' is a registered dataset"),
        ({"name": "Mine", "file": "data.csv"}, "datasets[0].target: missing"),
        ({"name": "Mine", "file": "data.csv", "target": "y", "colour": 1}, "datasets[0].colour: unknown key"),
        ({"name": "Mine", "loader": "nomodule"}, "datasets[0].loader: must be module:function"),
        ("my.csv", "unknown dataset 'my.csv'"),
    ]
    for entry, needle in cases:
        assert_one_line_error(run_afr("validate", str(_config(tmp_path, entry))), needle)


@pytest.mark.slow
def test_csv_and_parquet_files_run_and_compare_like_the_papers_datasets(tmp_path):
    frame = _frame(120)
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "diabetes.csv", sep=";", index=False)
    frame.to_parquet(tmp_path / "data" / "diabetes.parquet")
    config = _config(tmp_path, {"name": "MyCSV", "file": "data/diabetes.csv", "target": "progression"})
    cfg = yaml.safe_load(config.read_text())
    cfg["datasets"].append({"name": "MyParquet", "file": "data/diabetes.parquet", "target": "progression"})
    config.write_text(yaml.safe_dump(cfg))
    store = tmp_path / "store"
    proc = run_afr("run", str(config), "--out", str(store), "-q", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    proc = run_afr("table", "--results", str(store), "--compare", "rf", "eps-abrf")
    assert proc.returncode == 0, proc.stderr
    # a row of the per-dataset comparison: as many cells as its header (dataset, A, B, B − A and the
    # Bayesian correlated t-test's columns)
    header = next(line for line in proc.stdout.splitlines() if line.startswith("| dataset"))
    for name in ("MyCSV", "MyParquet"):
        assert any(
            line.startswith(f"| {name}") and line.count("|") == header.count("|") >= 5
            for line in proc.stdout.splitlines()
        )
    assert "over n = 2 datasets" in proc.stdout
    status = run_afr("status", str(store))
    assert "2 datasets x 1 base, 2 repetitions" in status.stdout, status.stdout
    manifest = _manifest(store)
    data = manifest["data"]
    assert data["MyCSV"]["file"] == "data/diabetes.csv" and data["MyCSV"]["rows"] == 120
    assert data["MyParquet"]["columns"] == [c for c in frame.columns if c != "progression"]
    import hashlib

    assert (
        data["MyParquet"]["sha256"] == hashlib.sha256((tmp_path / "data" / "diabetes.parquet").read_bytes()).hexdigest()
    )

    # a changed file refuses to extend the store, naming the file and both hashes; nothing is written
    changed = frame.copy()
    changed.loc[3, "age"] = 0.5
    changed.to_csv(tmp_path / "data" / "diabetes.csv", sep=";", index=False)
    new_hash = hashlib.sha256((tmp_path / "data" / "diabetes.csv").read_bytes()).hexdigest()
    before = _snapshot(tmp_path)
    assert_one_line_error(
        run_afr("run", str(config), "--out", str(store), "-q", "--reps", "3"),
        "diabetes.csv",
        "dataset MyCSV changed",
        data["MyCSV"]["sha256"],
        new_hash,
    )
    assert _snapshot(tmp_path) == before


LOADER_PLUGIN = '''
import numpy as np


def friedman_like():
    """(X, y) of a small synthetic problem, as a loader returns them."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(50, 4))
    return X, 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2]
'''


@pytest.mark.slow
def test_a_loader_from_a_plugin_file_runs_and_its_arrays_are_hashed(tmp_path):
    (tmp_path / "my_loaders.py").write_text(LOADER_PLUGIN)
    config = _config(tmp_path, {"name": "Loaded", "loader": "my_loaders:friedman_like"}, plugins=["my_loaders.py"])
    store = tmp_path / "store"
    proc = run_afr("run", str(config), "--out", str(store), "-q", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    from afr_cli.data.files import array_sha256

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(50, 4))
    y = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 5 * X[:, 2]
    record = _manifest(store)["data"]["Loaded"]
    assert record == {"loader": "my_loaders:friedman_like", "sha256": array_sha256(X, y), "rows": 50, "columns": 4}


@pytest.mark.slow
def test_dask_workers_get_file_datasets_and_plugin_families_from_the_parent(tmp_path):
    """The parent reads the file and ships the arrays; workers import the plugin from its source
    text carried in the config: a Dask run stores exactly what a local run does."""
    distributed = pytest.importorskip("distributed")
    from afr_cli.store import load_results

    _frame(80).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "my_loaders.py").write_text(LOADER_PLUGIN + "\n\n" + SHARP_FAMILY_MODULE)
    config = _config(tmp_path, {"name": "Mine", "file": "d.csv", "target": "progression"}, plugins=["my_loaders.py"])
    cfg = yaml.safe_load(config.read_text())
    cfg["datasets"].append({"name": "Loaded", "loader": "my_loaders:friedman_like"})
    cfg["models"].append({"id": "sharp", "family": "sharp-abrf", "grid": {"eps": [0.0, 0.5]}})
    config.write_text(yaml.safe_dump(cfg))
    proc = run_afr("run", str(config), "--out", str(tmp_path / "local"), "-q", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        proc = run_afr(
            "run",
            str(config),
            "--backend",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--out",
            str(tmp_path / "dask"),
            "-q",
        )
    assert proc.returncode == 0, proc.stderr
    local, dask = (
        load_results(tmp_path / d).sort_values(["dataset", "rep", "model"]).reset_index(drop=True)
        for d in ("local", "dask")
    )
    assert set(local.model) == {"rf", "eps-abrf", "sharp"} and set(local.dataset) == {"Mine", "Loaded"}
    pd.testing.assert_frame_equal(
        local.drop(columns=[c for c in local.columns if "second" in c]),
        dask.drop(columns=[c for c in dask.columns if "second" in c]),
        check_exact=True,
    )


@pytest.mark.slow
def test_datasets_option_names_a_file_dataset_and_the_manifest_keeps_earlier_ones(tmp_path):
    _frame(60).to_csv(tmp_path / "a.csv", index=False)
    _frame(70).to_csv(tmp_path / "b.tsv", sep="\t", index=False)
    config = _config(tmp_path, {"name": "A", "file": "a.csv", "target": "progression"})
    cfg = yaml.safe_load(config.read_text())
    cfg["datasets"].append({"name": "B", "file": "b.tsv", "target": "progression"})
    config.write_text(yaml.safe_dump(cfg))
    store = tmp_path / "store"
    for name in ("B", "A"):
        proc = run_afr("run", str(config), "--out", str(store), "-q", "-j", "1", "--datasets", name)
        assert proc.returncode == 0, proc.stderr
        assert f"{name} / RF@8 (2 reps)" in proc.stdout
    data = _manifest(store)["data"]
    assert {k: v["rows"] for k, v in data.items()} == {"A": 60, "B": 70}


def test_a_header_without_rows_is_refused_in_one_line(tmp_path):
    from afr_cli.data.files import read_file_dataset
    from afr_cli.errors import AfrInputError

    for i, text in enumerate(("a,b,y\n", "a,b,y\n\n\n", "a;b;y\r\n")):
        path = tmp_path / f"e{i}.csv"
        path.write_text(text)
        with pytest.raises(AfrInputError, match="a header and no data rows"):
            read_file_dataset(path, "y")


def test_splits_whose_target_is_constant_are_named_by_dataset_and_repetition(tmp_path):
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.protocol import UnitSeeds
    from afr_cli.engine.split_targets import check_split_targets, undefined_r2_splits
    from afr_cli.errors import AfrInputError

    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "c",
                "seed": 3,
                "protocol": {"reps": 4, "inner_folds": 2, "select_by": "mae"},
                "datasets": ["Friedman1"],
                "bases": [{"kind": "rf", "n_estimators": 3}],
                "models": [{"id": "rf", "family": "forest"}],
            }
        )
    )
    exp = load_experiment(config, [])
    y = np.zeros(40)
    y[[3, 27]] = 5.0
    found = undefined_r2_splits(exp, "S", y)
    constant = [
        rep for rep in range(4) if np.ptp(y[UnitSeeds(exp, "S", None, rep).split_rows(40)[1]]) == 0
    ]  # computed apart
    assert found == [f"(S, repetition {rep})" for rep in constant] and constant
    with pytest.raises(
        AfrInputError,
        match=rf"f.csv: the target is constant on the scored rows of {len(constant)} "
        r"of 4 splits: \(S, repetition",
    ):
        check_split_targets(exp, "S", y, "f.csv")
    check_split_targets(exp, "S", np.arange(40.0), "f.csv")  # a target that varies everywhere passes
