"""``afr table`` and ``afr status`` answered from their memo (afr_cli/commands/answer_memo.py).

A second run with the same inputs replays the first one's stdout and stderr byte for byte and
imports no pandas, numpy or SciPy; a changed export (or a store added where ``--compare`` looks)
is read again, never served stale; a working store, a failed command and a run's live progress
are never kept; and the store finding that keys the memo without pandas agrees with the reader's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_afr

from afr_cli.commands.answer_memo import ANSWER_KIND, package_files
from afr_cli.store import ResultsStore, UnitRecord, discover, find_stores, has_results
from afr_cli.store.cache import content_key
from afr_cli.store.export import EXPORT_DIR, EXPORT_MANIFEST, export_store
from afr_cli.store.schema import STORE_FILE

ROOT = Path(__file__).resolve().parents[1]
NUMERICAL = ("pandas", "numpy", "scipy")
PROBE = """
import contextlib, io, json, sys
sys.argv = ["afr", *json.loads(sys.argv[1])]
from afr_cli.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main()
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code or 0, "out": out.getvalue(), "err": err.getvalue(), "modules": sorted(sys.modules)}))
"""


def _store(
    directory: Path, models=("rf", "eps-abrf"), reps: int = 2, shift: float = 0.0, run: dict | None = None, base="RF"
):
    """A tiny store (two datasets, one base) written unit by unit; ``shift`` moves the R² of every
    model but the first."""
    store = ResultsStore(directory)
    store.create({"experiment": "memo", "config_hash": "h", "runs": [run or {"reps": reps}]})
    for rep in range(reps):
        for d, dataset in enumerate(("Friedman1", "Diabetes")):
            results = [
                {
                    "model": m,
                    "r2": 0.5 + (0.1 + 0.03 * d + shift) * i + 0.01 * rep,
                    "mae": 1.0 + rep,
                    "rmse": 2.0,
                    "params": {},
                    "selection": "inner-cv",
                    "cv_score": 0.4,
                    "solver_status": {},
                    "seconds": 0.1,
                }
                for i, m in enumerate(models)
            ]
            store.write_unit(UnitRecord(dataset, base, rep, rep, 30, 10, 0.5, 1.0, results, []))
    return store


def _export(directory: Path, **kwargs) -> Path:
    """An export alone, as a fresh clone holds it (the store removed)."""
    _store(directory, **kwargs)
    export_store(directory)
    (directory / STORE_FILE).unlink()
    return directory


def _env(cache: Path | str) -> dict[str, str]:
    return {**os.environ, "AFR_EXPORT_CACHE": str(cache)}


def _answers(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / ANSWER_KIND).glob("*/*") if not p.name.startswith("."))


def _run(tmp: Path, cache: Path | str, *args: str) -> tuple[int, str, str]:
    proc = run_afr(*args, cwd=tmp, env=_env(cache))
    return proc.returncode, proc.stdout, proc.stderr


def test_the_store_finding_without_pandas_agrees_with_the_reader(tmp_path):
    assert (discover.STORE_FILE, discover.EXPORT_DIR, discover.EXPORT_MANIFEST) == (
        STORE_FILE,
        EXPORT_DIR,
        EXPORT_MANIFEST,
    )
    results = ROOT / "results"
    assert discover.stores_below(results) == find_stores(results) != []
    assert discover.stores_under(results) == sorted(d for d in results.iterdir() if d.is_dir() and has_results(d))
    odd = {
        "sqlite-folder": lambda d: (d / STORE_FILE).mkdir(parents=True),
        "dangling-link": lambda d: (d.mkdir(), (d / STORE_FILE).symlink_to(d / "gone")),
        "manifest-folder": lambda d: (d / EXPORT_DIR / EXPORT_MANIFEST).mkdir(parents=True),
        "empty": lambda d: d.mkdir(),
    }
    for name, make in odd.items():
        make(tmp_path / name)
        assert discover.holds_results(tmp_path / name) == has_results(tmp_path / name), name
    assert discover.stores_below(tmp_path) == find_stores(tmp_path)


def test_a_fingerprint_is_the_exports_content(tmp_path):
    a = _export(tmp_path / "a")
    b = shutil.copytree(a, tmp_path / "b")
    assert discover.export_fingerprint(a) == discover.export_fingerprint(b) is not None  # where it is: no part
    _export(tmp_path / "b", shift=0.01)
    assert discover.export_fingerprint(b) != discover.export_fingerprint(a)
    _store(tmp_path / "live")
    export_store(tmp_path / "live")
    assert discover.export_fingerprint(tmp_path / "live") is None  # a working store beside it: read live
    assert discover.export_fingerprint(tmp_path / "none") is None


def _package_digest() -> str:
    return content_key(*package_files())


def _steadily(check: Callable[[Path], None], tmp_path: Path) -> None:
    """``check`` run in a fresh folder until afr's own files did not change while it ran (at most
    three times). An edit to afr_cli is a new memo key, as it must be: in a checkout being edited
    beside the test, a run the check expects to be replayed could be computed afresh."""
    for attempt in range(3):
        before = _package_digest()
        folder = tmp_path / f"attempt{attempt}"
        folder.mkdir()
        try:
            check(folder)
            return
        except AssertionError:
            if attempt == 2 or _package_digest() == before:
                raise


def _mean_diff(csv: str) -> float:
    """The mean difference of the first base of ``afr table --compare --format csv``."""
    header, row = csv.splitlines()[:2]
    return float(row.split(",")[header.split(",").index("mean_diff")])


@pytest.mark.slow
def test_a_hit_replays_the_answer_and_imports_no_numerical_library(tmp_path):
    """Fresh interpreters (the fork server has imported everything): the first run computes and
    records, the second replays the same bytes without pandas, numpy or SciPy."""

    def check(tmp: Path) -> None:
        _export(tmp / "results" / "s")
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp),
            "AFR_EXPORT_CACHE": str(tmp / "cache"),
            **{k: os.environ[k] for k in ("PYTHONPATH",) if k in os.environ},
        }
        for args in (["table", "--results", "results/s"], ["status"]):
            runs = []
            for _ in range(2):
                proc = subprocess.run(
                    [sys.executable, "-c", PROBE, json.dumps(args)],
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tmp,
                    timeout=300,
                )
                assert proc.returncode == 0, proc.stderr
                runs.append(json.loads(proc.stdout.splitlines()[-1]))
            first, second = runs
            assert first["code"] == second["code"] == 0 and first["out"]
            assert (second["out"], second["err"]) == (first["out"], first["err"])
            assert {m.split(".")[0] for m in first["modules"]} >= {"pandas", "numpy"}  # the miss computed
            assert [m for m in second["modules"] if m.split(".")[0] in NUMERICAL] == [], args
        assert len(_answers(tmp / "cache")) == 2

    _steadily(check, tmp_path)


@pytest.mark.slow
def test_a_changed_export_or_an_added_store_is_read_again(tmp_path):
    def check(tmp: Path) -> None:
        cache = tmp / "cache"
        _export(tmp / "results" / "s")
        args = ("table", "--compare", "rf", "eps-abrf", "--format", "csv")  # the stores chosen: a note on stderr
        first = _run(tmp, cache, *args)
        assert first[0] == 0 and "note: --compare rf eps-abrf: using results/s " in first[2]
        assert _mean_diff(first[1]) == pytest.approx(0.115)
        assert len(_answers(cache)) == 1
        assert _run(tmp, cache, *args) == first  # replayed: stdout and stderr as they were
        assert len(_answers(cache)) == 1

        _export(tmp / "results" / "s", shift=0.05)  # the same store, other numbers
        changed = _run(tmp, cache, *args)
        assert changed[0] == 0 and _mean_diff(changed[1]) == pytest.approx(0.165)
        assert len(_answers(cache)) == 2

        _export(tmp / "results" / "t", base="ERT")  # another store holds them too, on another base
        added = _run(tmp, cache, *args)
        assert added[0] == 0 and "using results/s, results/t " in added[2] and "\nERT,r2," in added[1]

        status = _run(tmp, cache, "status", "results/s")
        _export(tmp / "results" / "s", reps=3, shift=0.05)
        restatus = _run(tmp, cache, "status", "results/s")
        assert "6 units" in restatus[1] and restatus != status
        assert restatus == _run(tmp, "off", "status", "results/s")  # what a run without any cache prints

    _steadily(check, tmp_path)


@pytest.mark.slow
def test_working_stores_failures_and_live_progress_are_never_kept(tmp_path):
    cache = tmp_path / "cache"
    store = _store(tmp_path / "live")
    before = _run(tmp_path, cache, "status", "live")
    store.write_unit(
        UnitRecord("Friedman1", "RF", 2, 2, 30, 10, 0.5, 1.0, [{**_row(), "model": m} for m in ("rf", "eps-abrf")], [])
    )
    after = _run(tmp_path, cache, "status", "live")
    assert before[0] == after[0] == 0 and "4 units" in before[1] and "5 units" in after[1]
    assert _run(tmp_path, cache, "table", "--results", "live")[0] == 0
    assert _answers(cache) == []  # a working store is read live, every time

    _export(tmp_path / "s")
    failed = _run(tmp_path, cache, "table", "--results", "s", "--format", "xml")
    assert failed[0] == 2 and failed[2].startswith("error: --format")
    assert _answers(cache) == []

    run = {
        "reps": 5,
        "started_at": "2020-01-01T00:00:00+00:00",
        "target": {
            "datasets": ["Friedman1", "Diabetes"],
            "bases": ["RF"],
            "reps": 5,
            "units": 10,
            "workers": 2,
            "host": "another-host",
            "pid": 1,
        },
    }
    _export(tmp_path / "pending", run=run)
    progress = _run(tmp_path, cache, "status", "pending")
    assert progress[0] == 0 and "latest run (started 2020-01-01" in progress[1]
    assert _answers(cache) == []  # its ETA depends on the clock: computed every time


def _row() -> dict:
    return {
        "r2": 0.6,
        "mae": 1.0,
        "rmse": 2.0,
        "params": {},
        "selection": "inner-cv",
        "cv_score": 0.4,
        "solver_status": {},
        "seconds": 0.1,
    }
