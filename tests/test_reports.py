"""``afr report`` regenerates summaries and paper comparisons from the stores that exist."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr


@pytest.mark.slow
def test_report_writes_summaries_comparisons_and_tests(tmp_path):
    cfg = {
        "name": "abrf_rf",
        "seed": 3,
        "protocol": {"reps": 2},
        "datasets": ["Sparse", "Friedman1", "Friedman2"],
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "softmax", "family": "eps-abrf", "params": {"eps": 0.0}},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}},
        ],
    }
    path = tmp_path / "abrf_rf.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert run_afr("run", str(path), "--out", str(tmp_path / "abrf_rf"), "-q", "--jobs", "1").returncode == 0
    # the report reads both of its stores (a report missing one is skipped): a tiny ERT store beside
    ert = {
        **cfg,
        "name": "abrf_ert",
        "datasets": ["Sparse"],
        "models": cfg["models"][:1],
        "bases": [{"id": "ERT", "kind": "ert", "n_estimators": 8, "min_samples_leaf": 5}],
    }
    (tmp_path / "abrf_ert.yaml").write_text(yaml.safe_dump(ert))
    assert (
        run_afr(
            "run", str(tmp_path / "abrf_ert.yaml"), "--out", str(tmp_path / "abrf_ert"), "-q", "--jobs", "1"
        ).returncode
        == 0
    )
    proc = run_afr("report", "abrf", "--root", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    summary = pd.read_csv(tmp_path / "abrf_rf" / "summary.csv")
    assert list(summary.columns) == ["dataset", "base", "model", "metric", "mean", "std", "n_reps"]
    assert set(summary.model) == {"rf", "softmax", "eps-abrf"}
    table9 = pd.read_csv(tmp_path / "abrf" / "paper-satrf-9.csv")
    cell = table9[(table9.dataset == "Sparse") & (table9.model == "eps-abrf (RF)")].iloc[0]
    ours = summary[(summary.dataset == "Sparse") & (summary.model == "eps-abrf") & (summary.metric == "r2")]["mean"]
    assert abs(cell["ours"] - ours.iloc[0]) < 1e-3 and cell["published"] == 0.529
    assert "paired t-test" in (tmp_path / "abrf" / "compare.md").read_text()
    assert proc.stdout.startswith("wrote ") and len(proc.stdout.splitlines()) == 1  # one line, not one per file
    # nothing changed since: no file is rewritten (not even its modification time moves), one line says so
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    again = run_afr("report", "abrf", "--root", str(tmp_path))
    assert again.returncode == 0 and again.stdout.splitlines() == [
        f"nothing changed: every file afr report writes from {tmp_path} is current (none written)"
    ]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps
    assert_one_line_error(run_afr("report", "nope", "--root", str(tmp_path)), "nope", "abrf")
    assert_one_line_error(
        run_afr("report", "abrf", "--site-only", "--root", str(tmp_path)),
        "--site-only",
        "allowed: afr report --site-only [--root DIR]",
    )
    assert not (tmp_path / "site").exists()  # refused before anything is written
    # --reps 1: every number from repetition 0 only, the files say so, and they go beside the
    # all-repetition files without touching them
    all_reps_table = (tmp_path / "abrf" / "paper-satrf-9.md").read_text()
    reps1 = run_afr("report", "abrf", "--root", str(tmp_path), "--reps", "1")
    assert reps1.returncode == 0 and "note" not in reps1.stderr
    more = run_afr("report", "abrf", "--root", str(tmp_path), "--reps", "5")  # the store holds 2
    assert more.returncode == 0
    assert f"note: --reps 5: only 2 repetitions are stored in {tmp_path / 'abrf_rf'}; those are used" in more.stderr
    first = pd.read_csv(tmp_path / "abrf_rf" / "summary-reps1.csv")
    assert set(first.n_reps) == {1} and set(pd.read_csv(tmp_path / "abrf_rf" / "summary.csv").n_reps) == {2}
    assert "Repetitions 0-0 of each dataset (1)." in (tmp_path / "abrf" / "reps1" / "paper-satrf-9.md").read_text()
    assert (tmp_path / "abrf" / "paper-satrf-9.md").read_text() == all_reps_table
    assert "Repetitions 0-1 of each dataset (2)." in all_reps_table
    assert_one_line_error(run_afr("report", "abrf", "--root", str(tmp_path), "--reps", "0"), "--reps", ">= 1")
