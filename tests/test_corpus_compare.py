"""Comparisons never mix, and the inputs around them are refused in one line,
each case a real ``afr`` process (children of one fork server, tests/afr_forkserver.py):

- repeated ``--results``: a model held by two stores is refused; A and B from two stores are
  paired only when the stores made the same splits;
- a repetition where one model's score is NaN is dropped for both models and counted (md, JSON,
  csv's stderr); JSON says b - a for every difference and writes ±inf apart from null;
- ``--tol`` refused like ``--rope``; a data file with a header and no rows; a seed past the
  allowed range; a target constant on a split (R² undefined), in ``validate`` and ``run``.

Every case checks its exit code, its stderr (one ``error:`` line for a bad input, or no
traceback), the output it promises, and that no file below its directory changed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from afr_forkserver import Invocation, run_afr_forked

pytestmark = pytest.mark.slow

DATASETS = ("Diabetes", "Friedman1", "Wine")
REPS = 5
# Diabetes loses every repetition of model b, Wine one: 6 dropped, Diabetes out of the tests
UNDEFINED = {("b", "Diabetes", r) for r in range(REPS)} | {("b", "Wine", 2)}
TINY = {
    "name": "corpus",
    "seed": 3,
    "protocol": {"reps": 4, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 3, "min_samples_leaf": 2}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "a", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0], "tau": [1.0]}},
    ],
}


_WRITTEN: dict[tuple, bytes] = {}  # (models, undefined, seeding, seed) -> the store file's bytes


def write_store(
    directory: Path, models: tuple[str, ...], undefined=frozenset(), seeding: str = "rep-index", seed: int = 1
) -> Path:
    """A small store: ``models`` on DATASETS x REPS (base RF), R² NaN where ``undefined`` says;
    split seeds as ``seeding`` makes them. Left as one file, as a committed store is.

    Several cases hold the same store: the first writes it, the others get a copy of its file (its
    fifteen units each written in a transaction of its own take a fraction of a second)."""
    key = (models, frozenset(undefined), seeding, seed)
    if key in _WRITTEN:
        directory.mkdir(parents=True)
        (directory / "store.sqlite").write_bytes(_WRITTEN[key])
        return directory
    _write_store(directory, models, undefined, seeding, seed)
    _WRITTEN[key] = (directory / "store.sqlite").read_bytes()
    return directory


def _write_store(directory: Path, models: tuple[str, ...], undefined, seeding: str, seed: int) -> None:
    from afr_cli.store import ResultsStore, UnitRecord

    store = ResultsStore(directory)
    store.create(
        {
            "experiment": "corpus",
            "config_hash": "x",
            "config": {"name": "corpus", "seed": seed, "protocol": {"reps": REPS, "seeding": seeding}},
        }
    )
    for d, dataset in enumerate(DATASETS):
        for rep in range(REPS):
            rows = []
            for i, model in enumerate(models):
                step = i
                # dyadic numbers: every difference between models is exact (sd 0 where it is constant)
                r2 = float("nan") if (model, dataset, rep) in undefined else 0.5 + step / 16 + rep / 256 + d / 32
                mae = 1.0 - step / 16 + rep * (1 + d) / 1024
                rows.append(
                    {
                        "model": model,
                        "r2": r2,
                        "mae": mae,
                        "rmse": 1.2 * mae,
                        "params": {},
                        "selection": "inner-cv",
                        "cv_score": None,
                        "solver_status": {},
                        "seconds": 0.0,
                    }
                )
            split = rep if seeding == "rep-index" else 1000 * seed + rep
            store.write_unit(UnitRecord(dataset, "RF", rep, split, 80, 20, 0.0, 0.0, rows, []))
    conn = sqlite3.connect(store.path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


def _config(tmp: Path, **changes) -> Path:
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump({**TINY, **changes}))
    return path


def _sparse_config(tmp: Path, **protocol) -> Path:
    """40 rows whose target is non-zero on two: most test splits of 8 rows hold only zeros."""
    lines = ["x1,x2,y"] + [f"{i / 40:.4f},{(i * 7 % 40) / 40:.4f},{5.0 if i in (3, 27) else 0.0}" for i in range(40)]
    (tmp / "sparse.csv").write_text("\n".join(lines) + "\n")
    return _config(
        tmp, datasets=[{"name": "S", "file": "sparse.csv", "target": "y"}], protocol={**TINY["protocol"], **protocol}
    )


def _header_only(tmp: Path, text: str = "a,b,y\n") -> Path:
    (tmp / "empty.csv").write_text(text)
    return _config(tmp, datasets=[{"name": "E", "file": "empty.csv", "target": "y"}])


def _pair(tmp: Path, b_seeding: str = "rep-index", b_seed: int = 1) -> tuple[str, ...]:
    write_store(tmp / "A", ("rf",))
    write_store(tmp / "B", ("b",), seeding=b_seeding, seed=b_seed)
    return ("table", "--results", "A", "--results", "B", "--compare", "rf", "b")


def _nan(tmp: Path, *args: str) -> tuple[str, ...]:
    write_store(tmp / "s", ("rf", "b"), UNDEFINED)
    return ("table", "--results", "s", "--compare", "rf", "b", *args)


def _flat(tmp: Path, *args: str) -> tuple[str, ...]:
    """b better than rf by the same amount on every dataset: sd 0, t = ±inf."""
    write_store(tmp / "s", ("rf", "b"))
    return ("table", "--results", "s", "--compare", "rf", "b", *args)


@dataclass
class Case:
    """``setup(tmp)`` builds the files and returns afr's arguments; ``check(proc)`` asserts what the
    output must hold (beyond the exit code, no traceback and nothing written)."""

    name: str
    setup: Callable[[Path], tuple[str, ...]]
    code: int = 2
    needles: tuple[str, ...] = ()  # in the one error line (code 2) or in stdout (code 0)
    check: Callable[[subprocess.CompletedProcess], None] | None = None


def _json(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout)


def _check_nan_json(proc):
    base = _json(proc)["bases"][0]
    assert base["dropped"] == {"repetitions": 6, "by_dataset": {"Diabetes": 5, "Wine": 1}, "left_out": ["Diabetes"]}
    assert base["reps"] == [4, 5] and [d["dataset"] for d in base["datasets"]] == ["Friedman1", "Wine"]


def _check_mae_direction(proc):
    out = _json(proc)
    assert out["difference"] == "b - a"
    for base in out["bases"]:
        for d in base["datasets"]:  # b has the lower MAE: b - a < 0, the correlated t-test's mean too
            assert d["b_minus_a"] < 0 and d["correlated_ttest"]["mean"] == pytest.approx(d["b_minus_a"])
            assert d["correlated_ttest"]["ci_low"] <= d["b_minus_a"] <= d["correlated_ttest"]["ci_high"]
        assert base["ttest"]["mean_diff"] < 0


def _check_constant(proc):
    """The same difference on every dataset: no spread to test against, so t, p and d_z are undefined
    (null), never an infinite t with p = 0."""
    base = _json(proc)["bases"][0]
    assert base["ttest"]["t"] is None and base["ttest"]["p"] is None and base["effect_sizes"]["cohen_dz"] is None
    assert base["datasets"][0]["correlated_ttest"]["scale"] is not None


def _check_csv_note(proc):
    assert proc.stdout.splitlines()[0].startswith("base,metric,a,b,n,")
    assert "note: base RF: 6 repetitions where rf's or b's R² is undefined (NaN) dropped for both models" in proc.stderr


CASES = [
    # --tol as --rope
    *(
        Case(
            f"tol-{label}",
            lambda t, v=value: (
                "table",
                "--results",
                str(write_store(t / "s", ("rf",))),
                "--paper",
                "satrf:9",
                "--tol",
                v,
            ),
            needles=("--tol", value),
        )
        for label, value in (("nan", "nan"), ("negative", "-1"), ("infinite", "inf"))
    ),
    # repeated --results
    Case(
        "model-in-two-stores-compare",
        lambda t: (
            write_store(t / "A", ("rf", "b"))
            and write_store(t / "B", ("rf",))
            and ("table", "--results", "A", "--results", "B", "--compare", "rf", "b")
        ),
        needles=("'rf'", "A and B", "drop one --results"),
    ),
    Case(
        "model-in-two-stores-summary",
        lambda t: (
            write_store(t / "A", ("rf", "b"))
            and write_store(t / "B", ("b",))
            and ("table", "--results", "A", "--results", "B")
        ),
        needles=("'b'", "A and B"),
    ),
    Case(
        "model-in-two-stores-compare-all",
        lambda t: (
            write_store(t / "A", ("rf", "c"))
            and write_store(t / "B", ("b", "c"))
            and ("table", "--results", "A", "--results", "B", "--compare", "rf", "b", "--all")
        ),
        needles=("'c'",),
    ),
    Case(
        "one-store-given-twice",
        lambda t: (
            write_store(t / "s", ("rf", "b"))
            and ("table", "--results", "s", "--results", "./s/", "--compare", "rf", "b")
        ),
        needles=("given twice",),
    ),
    Case("other-splits-derived", lambda t: _pair(t, "derived", 7), needles=("not run on the same splits", "Diabetes")),
    Case(
        "other-splits-derived-json",
        lambda t: (*_pair(t, "derived", 7), "--format", "json"),
        needles=("not run on the same splits",),
    ),
    # data and config inputs
    Case(
        "csv-header-only-validate", lambda t: ("validate", str(_header_only(t))), needles=("empty.csv", "no data rows")
    ),
    Case(
        "csv-header-blank-lines-validate",
        lambda t: ("validate", str(_header_only(t, "a,b,y\n\n\n"))),
        needles=("no data rows",),
    ),
    Case(
        "csv-header-only-run",
        lambda t: ("run", str(_header_only(t)), "--out", "s", "-q", "--jobs", "1"),
        needles=("no data rows",),
    ),
    Case(
        "seed-past-64-bits-validate",
        lambda t: ("validate", str(_config(t)), "--set", "seed=99999999999999999999999"),
        needles=("seed", "[0, 4294967295]"),
    ),
    Case(
        "seed-past-32-bits-run",
        lambda t: ("run", str(_config(t)), "--out", "s", "-q", "--set", "seed=4294967296"),
        needles=("seed", "[0, 4294967295]"),
    ),
    Case(
        "data-seed-past-64-bits",
        lambda t: ("validate", str(_config(t)), "--set", "data_seed=" + "9" * 40),
        needles=("data_seed", "[0, 4294967295]"),
    ),
    Case(
        "fraction-past-a-float",
        lambda t: ("validate", str(_config(t)), "--set", "protocol.test_fraction=" + "9" * 400),
        needles=("test_fraction",),
    ),
    Case(
        "constant-test-split-validate",
        lambda t: ("validate", str(_sparse_config(t))),
        needles=("sparse.csv", "(S, repetition 0)", "R² is undefined"),
    ),
    Case(
        "constant-test-split-run",
        lambda t: ("run", str(_sparse_config(t)), "--out", "s", "-q", "--jobs", "1"),
        needles=("(S, repetition 0)",),
    ),
    Case(
        "constant-test-split-run-select-by-mae",
        lambda t: ("run", str(_sparse_config(t, select_by="mae")), "--out", "s", "-q", "--jobs", "1"),
        needles=("3 of 4 splits", "(S, repetition 2)"),
    ),
    # what a comparison prints (exit 0)
    Case(
        "nan-dropped-md",
        lambda t: _nan(t),
        0,
        needles=(
            "note: base RF: 6 repetitions where rf's or b's R² is undefined (NaN) dropped for both models (Diabetes 5, "
            "Wine 1); left out of the tests, no repetition with both scores defined: Diabetes",
            "each dataset's means over the 4 to 5 repetitions (splits) both models hold; 6 repetitions",
        ),
    ),
    Case("nan-dropped-json", lambda t: _nan(t, "--format", "json"), 0, check=_check_nan_json),
    Case("nan-dropped-csv", lambda t: _nan(t, "--format", "csv"), 0, check=_check_csv_note),
    Case(
        "mae-json-one-direction",
        lambda t: _flat(t, "--metric", "mae", "--format", "json"),
        0,
        check=_check_mae_direction,
    ),
    Case("constant-difference-json", lambda t: _flat(t, "--format", "json"), 0, check=_check_constant),
    Case(
        "two-stores-same-splits",
        lambda t: _pair(t),
        0,
        needles=("over the 5 repetitions (splits) both models hold", "| Wine "),
    ),
    Case(
        "other-model-in-two-stores-compare-only",
        lambda t: (
            write_store(t / "A", ("rf", "c"))
            and write_store(t / "B", ("b", "c"))
            and ("table", "--results", "A", "--results", "B", "--compare", "rf", "b")
        ),
        0,
        needles=("over the 5 repetitions",),
    ),
]


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path below root: a file's bytes, None for a directory."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, dict, dict]]:
    """Every case set up, then run as a child of one fork server, two at a time."""
    prepared = []
    for case in CASES:
        tmp = tmp_path_factory.mktemp(case.name)
        args = case.setup(tmp)
        prepared.append((case, tmp, args, _snapshot(tmp)))
    env = {**os.environ, "MPLBACKEND": "Agg"}
    procs = run_afr_forked([Invocation(tuple(args), tmp, env) for _, tmp, args, _ in prepared], jobs=2)
    return {case.name: (proc, before, _snapshot(tmp)) for (case, tmp, _, before), proc in zip(prepared, procs)}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_case(case: Case, outcomes):
    proc, before, after = outcomes[case.name]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == case.code, (proc.returncode, proc.stderr)
    if case.code == 2:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
        for needle in case.needles:
            assert needle in lines[0], (needle, lines[0])
    else:
        for needle in case.needles:
            assert needle in proc.stdout, (needle, proc.stdout)
    if case.check is not None:
        case.check(proc)
    assert after == before, "a command must leave every file as it was"
