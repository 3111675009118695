"""``afr status``: coverage, gaps, compute time and solver outcomes of a store."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run_afr

from afr_cli.store import ResultsStore, UnitRecord
from afr_cli.store.status import render_status, render_totals, store_status


def _row(model: str, status: dict, params: dict | None = None) -> dict:
    return {
        "model": model,
        "r2": 0.5,
        "mae": 1.0,
        "rmse": 1.2,
        "params": params or {},
        "selection": "inner-cv",
        "cv_score": 0.4,
        "solver_status": status,
        "seconds": 1.0,
    }


def _store(directory, units: list[tuple[str, str, int]]) -> None:
    store = ResultsStore(directory)
    store.create(
        {
            "experiment": "demo",
            "config_source": "configs/demo.yaml",
            "config_hash": "abc",
            "git_commit": "0123456789abcdef",
        }
    )
    for dataset, base, rep in units:
        rows = [
            _row("forest", {}),
            _row("sat-rf-y", {"OSQP:optimal": 3, "CLARABEL:optimal": 1, "fallbacks": 1}),
            _row("sat-rf-x", {"OSQP:optimal": 4}),
            # a best-of row repeats its components' counts: they must not be counted twice
            _row("sat-rf", {"OSQP:optimal": 7, "CLARABEL:optimal": 1, "fallbacks": 1}, {"component": "sat-rf-y"}),
        ]
        store.write_unit(UnitRecord(dataset, base, rep, rep, 80, 20, 0.5, 30.0, rows, []))


def test_even_store_reports_reps_compute_and_solves(tmp_path):
    _store(tmp_path, [(d, b, r) for d in ("Sparse", "Yacht") for b in ("RF", "ERT") for r in range(3)])
    status = store_status(tmp_path)
    assert status.units == 12 and status.gaps == []
    assert status.reps.loc["Yacht", "ERT"] == 3
    assert status.solves == {"OSQP:optimal": 84, "CLARABEL:optimal": 12, "fallbacks": 12}
    assert status.compute_minutes == 6.0
    text = render_status(status)
    assert "12 units: 2 datasets x 2 bases, 3 repetitions on every (dataset, base)" in text
    # no unit of this store records its CPU: the wall time is named as such, never as CPU
    assert "compute: 6.0 min of unit wall time summed over the units (no unit records its CPU time)" in text
    assert "fallbacks 12 (12.50 % of the solves); failed 0" in text and "code 0123456" in text
    assert "(a fallback: the first solver's answer failed afr's feasibility or optimality check" in text
    assert "Sparse" not in text  # the per-dataset table only when uneven or asked for
    assert "Sparse" in render_status(status, detail=True)


def test_uneven_store_and_gaps_are_shown(tmp_path):
    _store(tmp_path, [("Sparse", "RF", r) for r in (0, 1, 2, 3, 6, 9)] + [("Yacht", "RF", 0)])
    status = store_status(tmp_path)
    assert status.gaps == ["Sparse / RF: 6 repetitions up to 9, missing 4-5, 7-8"]
    text = render_status(status)
    assert "uneven: 1 to 6 repetitions per (dataset, base)" in text and "1 base," in text
    assert "gap: Sparse / RF" in text and "Yacht" in text


@pytest.mark.slow
def test_cli_lists_stores_under_root_and_rejects_a_missing_one(tmp_path):
    _store(tmp_path / "a", [("Sparse", "RF", 0)])
    _store(tmp_path / "nested" / "b", [("Yacht", "ERT", 0)])
    proc = run_afr("status", "--root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert str(tmp_path / "a") in proc.stdout and str(tmp_path / "nested" / "b") in proc.stdout
    assert_one_line_error(run_afr("status", str(tmp_path / "missing")), "missing", "no results store")
    assert_one_line_error(run_afr("status", "--root", str(tmp_path / "empty")), "no results stores")


def test_totals_sum_the_stores_and_scale_each_to_the_asked_repetitions(tmp_path):
    # 12 units of 30 s (3 reps of each (dataset, base)) and 2 units of 30 s (1 rep each): 7 min in all
    _store(tmp_path / "a", [(d, b, r) for d in ("Sparse", "Yacht") for b in ("RF", "ERT") for r in range(3)])
    _store(tmp_path / "b", [("Sparse", "RF", 0), ("Yacht", "RF", 0)])
    statuses = [store_status(tmp_path / "a"), store_status(tmp_path / "b")]
    assert statuses[0].mean_reps == 3.0 and statuses[1].mean_reps == 1.0
    text = render_totals(statuses, workers=2, at=6)
    assert (
        text.splitlines()[0] == "all 2 stores: 14 units, 7.0 min of unit wall time (3.5 min wall at best on 2 workers)"
    )
    # 6.0 min x 6/3 + 1.0 min x 6/1 = 18 min
    assert (
        text.splitlines()[1] == "at 6 repetitions each: 18.0 min of unit wall time (9.0 min wall at best on 2 workers)"
    )


def test_an_exports_status_comes_from_the_cache_but_an_unfinished_runs_progress_is_live(tmp_path, monkeypatch):
    """A committed export's status is derived once (afr_cli/store/cache.py); the progress of a run
    that stopped short of its target depends on the clock and its process, so it is computed
    again by every ``afr status``, never read from the cache."""
    import platform

    from afr_cli.store import status as status_module
    from afr_cli.store.export import STORE_FILE, export_store

    monkeypatch.setenv("AFR_EXPORT_CACHE", str(tmp_path / "cache"))
    store = ResultsStore(tmp_path / "s")
    target = {
        "datasets": ["Yacht"],
        "bases": ["RF"],
        "reps": 4,
        "units": 4,
        "host": platform.node(),
        "pid": 2**22 + 12345,
        "workers": 1,
    }  # no such process: the run stopped
    store.create(
        {
            "experiment": "demo",
            "config_hash": "abc",
            "git_commit": "0123456789abcdef",
            "runs": [{"started_at": "2026-01-01T00:00:00+00:00", "target": target}],
        }
    )
    for rep in range(2):
        store.write_unit(UnitRecord("Yacht", "RF", rep, rep, 80, 20, 0.5, 30.0, [_row("forest", {})], []))
    export_store(tmp_path / "s")
    (tmp_path / "s" / STORE_FILE).unlink()
    first = store_status(tmp_path / "s")
    assert "2 of 4 units (50 %)" in first.progress and "stopped" in first.progress
    monkeypatch.setattr(status_module, "run_progress", lambda manifest, units, now=None: "  live progress")
    again = store_status(tmp_path / "s")
    assert again.progress == "  live progress" and again.units == 2  # the rest from the cache
    monkeypatch.setenv("AFR_EXPORT_CACHE", "off")
    assert render_status(store_status(tmp_path / "s")) == render_status(again)
