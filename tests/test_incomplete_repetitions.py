"""A repetition a run stopped half-way through (some of its datasets stored, not all) is left out
of the tables and named by ``afr status``: no table averages one dataset over 3 repetitions and
another over 2 without a word."""

from __future__ import annotations

from afr_cli.commands.table import _complete_repetitions
from afr_cli.store import ResultsStore, UnitRecord, load_results
from afr_cli.store.holdings import incomplete_repetitions
from afr_cli.store.status import incomplete_text, render_status, store_status
from afr_cli.tables.summary import render_summary


def _row(model: str, r2: float) -> dict:
    return {
        "model": model,
        "r2": r2,
        "mae": 1.0,
        "rmse": 1.2,
        "params": {},
        "selection": "inner-cv",
        "cv_score": 0.4,
        "solver_status": {},
        "seconds": 1.0,
    }


def _interrupted_store(directory, reps: int = 3) -> None:
    """Repetitions 0..reps-2 on both datasets, the last one on Sparse only: an interrupted run
    whose target (recorded at its start) was both datasets x RF x ``reps`` repetitions."""
    target = {"datasets": ["Sparse", "Yacht"], "bases": ["RF"], "reps": reps, "units": 2 * reps, "workers": 2}
    runs = [{"started_at": "2026-01-01T00:00:00+00:00", "reps": reps, "target": target}]
    store = ResultsStore(directory)
    store.create({"experiment": "demo", "config_hash": "abc", "runs": runs})
    units = [(d, r) for r in range(reps - 1) for d in ("Sparse", "Yacht")] + [("Sparse", reps - 1)]
    for dataset, rep in units:
        rows = [_row("rf", 0.5 + rep / 10), _row("mine", 0.4)]
        store.write_unit(UnitRecord(dataset, "RF", rep, rep, 80, 20, 0.5, 30.0, rows, []))


def test_the_half_stored_repetition_is_found_from_the_runs_target(tmp_path):
    _interrupted_store(tmp_path)
    store = ResultsStore(tmp_path)
    assert incomplete_repetitions(store.manifest(), store.frame("units")) == {2: (1, 2)}
    text = render_status(store_status(tmp_path))
    assert "incomplete: rep 2 holds 1 of 2 units (an interrupted run); the tables leave it out" in text
    assert incomplete_text({3: (1, 2), 4: (1, 2), 5: (0, 2), 9: (1, 2)}) == "reps 3-5, 9 hold 3 of 8 units"


def test_the_tables_leave_it_out_and_say_so(tmp_path, capsys):
    _interrupted_store(tmp_path)
    everything = load_results(tmp_path)
    assert render_summary(everything, "r2", "md").startswith("R²: mean over 2–3 reps (datasets or models hold")
    kept = _complete_repetitions(tmp_path, everything)
    assert sorted(kept["rep"].unique()) == [0, 1]
    assert render_summary(kept, "r2", "md").startswith("R²: mean over 2 reps;")
    note = capsys.readouterr().err
    assert "2 complete repetitions; rep 2 holds 1 of 2 units, incomplete (an interrupted run): left out" in note


def test_a_dataset_the_run_never_reached_is_missing_not_uneven(tmp_path):
    store = ResultsStore(tmp_path)
    target = {"datasets": ["Sparse", "Yacht"], "bases": ["RF"], "reps": 4, "units": 8}
    store.create({"experiment": "demo", "runs": [{"started_at": "2026-01-01T00:00:00+00:00", "target": target}]})
    for rep in range(3):  # Sparse's first 3 repetitions, nothing of Yacht yet
        store.write_unit(UnitRecord("Sparse", "RF", rep, rep, 80, 20, 0.5, 30.0, [_row("rf", 0.5)], []))
    assert incomplete_repetitions(store.manifest(), store.frame("units")) == {}


def test_a_store_holding_its_target_whole_loses_nothing(tmp_path, capsys):
    _interrupted_store(tmp_path)
    ResultsStore(tmp_path).write_unit(UnitRecord("Yacht", "RF", 2, 2, 80, 20, 0.5, 30.0, [_row("rf", 0.7)], []))
    store = ResultsStore(tmp_path)
    assert incomplete_repetitions(store.manifest(), store.frame("units")) == {}
    assert len(_complete_repetitions(tmp_path, load_results(tmp_path))) == 11
    assert "incomplete" not in capsys.readouterr().err + render_status(store_status(tmp_path))
