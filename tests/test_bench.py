"""``afr bench``: bad options are rejected before any work starts; every benchmark runs and agrees with itself."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run_afr


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needles",
    [
        (["qp", "--format", "xml"], ["--format", "table, json"]),
        (["qp", "--dataset", "Iris"], ["--dataset", "Airfoil"]),
        (["satrf", "--solver", "gurobi"], ["--solver", "ECOS"]),
        (["larf", "--n", "5"], ["--n 5", "n must be >= 20"]),
    ],
)
def test_bad_bench_options_fail_at_once(args, needles):
    assert_one_line_error(run_afr("bench", *args, timeout=60), *needles)


@pytest.mark.slow
def test_each_benchmark_runs_small_and_its_two_paths_agree():
    """Not a timing test: the benchmarks run end to end at toy sizes, and the fast path computes
    what the naive one does (the larf benchmark reports the first level's largest difference; the
    satrf benchmark asserts equal predictions; the qp benchmark the objective gap between solvers)."""
    import json

    import numpy as np

    qp = json.loads(
        run_afr("bench", "qp", "--dataset", "Diabetes", "--trees", "8", "--repeats", "1", "--format", "json").stdout
    )
    assert set(qp["shapes"]) == {
        "eps-abrf T=100",
        "sat-rf-y w+v",
        "sat-rf-y2 two heads",
        "larf eps-w T+M",
        "larf 1000 trees",
        "eps-abrf L1",
    }
    for name, row in qp["shapes"].items():
        assert {"AUTO", "ECOS", "CLARABEL"} <= set(row) and row["reference"] == "ECOS (tight)", name
        assert set(row["AUTO"]) >= {"ms", "gap"} and row["AUTO"]["ms"] > 0, name
        assert abs(row["AUTO"]["gap"]) < 1e-7, name  # the fast path is as good as tight ECOS
        assert abs(row["ECOS"]["gap"]) < 1e-6, name
    assert qp["shapes"]["eps-abrf L1"]["AUTO"]["status"] == "HIGHS:optimal"
    assert qp["shapes"]["larf 1000 trees"]["weights"] == 80 + 5  # 10 T trees + M heads
    naive = qp["naive"]
    assert np.isfinite(naive["ratio"]) and abs(naive["objective_gap"]) < 1e-6  # the two paths agree
    assert qp["warm_start"]["points"] == 16 and qp["warm_start"]["max_gap"] < 1e-7
    satrf = json.loads(run_afr("bench", "satrf", "--n", "60", "--trees", "8", "--format", "json").stdout)
    assert satrf["points"] == 25 and np.isfinite(satrf["ratio"]) and satrf["max_abs_diff"] < 1e-9
    larf = json.loads(run_afr("bench", "larf", "--n", "60", "--trees", "8", "--max-m", "2", "--format", "json").stdout)
    assert larf["grid_points"] == 5 * 2 * 4 and larf["qp_solves"] == 5 * 2 * 2 + 2 * 2  # tau0 is moot without leaves
    assert larf["first_level_max_abs_diff"] < 1e-9
    assert 0 < larf["peak_mb"] < 2048 and np.isfinite(larf["ratio_first_level"])


@pytest.mark.slow
def test_bench_unit_compares_auto_with_a_store_made_by_another_solver(tmp_path):
    import json

    import numpy as np
    import yaml

    cfg = {
        "name": "tiny",
        "protocol": {"reps": 1, "inner_folds": 2},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
        "solver": "ECOS",
        # eps-ABRF only: on a 6-tree LARF problem ECOS at its default tolerance stops 1e-4 (relative)
        # above AUTO's objective, which moves R^2 by 1e-5; the bench would report that, rightly
        "models": [
            {"id": "abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5, 1.0]}},
            {"id": "abrf-tau", "family": "eps-abrf", "params": {"eps": 0.75, "tau": 10.0}},
        ],
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(cfg))
    store = tmp_path / "store"
    assert run_afr("run", str(path), "--out", str(store), "--jobs", "1", "-q").returncode == 0
    r = json.loads(
        run_afr(
            "bench",
            "unit",
            str(path),
            "--dataset",
            "Friedman1",
            "--against",
            "ecos",
            "--store",
            str(store),
            "--reps",
            "10",
            "--format",
            "json",
        ).stdout
    )
    assert set(r["solvers"]) == {"AUTO", "ECOS"} and np.isfinite(r["ratio"])
    assert r["max_abs_dr2_between"] < 1e-6  # the same unit, only the solver differs
    assert set(r["max_abs_dr2_vs_store"]) == {"abrf", "abrf-tau"}
    assert max(r["max_abs_dr2_vs_store"].values()) < 1e-6
    assert r["reps"] == 10 and r["extrapolated_auto_cpu_min"] > 0
    assert_one_line_error(
        run_afr("bench", "unit", str(path), "--dataset", "Friedman1", "--against", "auto"), "--against", "ECOS"
    )


def test_bench_floor_times_shared_work_against_today_and_finds_the_rows_identical(tmp_path):
    import json

    import yaml

    cfg = {
        "name": "trees",
        "protocol": {"reps": 1, "seeding": "rep-index"},
        "datasets": ["Friedman1"],
        "bases": [{"id": f"RF@{n}", "kind": "rf", "n_estimators": n} for n in (5, 10, 20)],
        "models": [
            {"id": "forest", "family": "forest"},
            {"id": "abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}},
        ],
    }
    path = tmp_path / "trees.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = run_afr("bench", "floor", str(path), "--dataset", "Friedman1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["units"] == 3 and r["tasks"] == 1  # three tree counts, one forest
    assert r["identical"] is True and r["largest_move"] == 0.0
    assert r["today"]["cpu_s"] > 0 and r["new"]["cpu_s"] > 0 and r["ratio"] > 0
    assert r["trees"] == "fast"
    text = run_afr("bench", "floor", str(path), "--dataset", "Friedman1", "--trees", "sklearn").stdout
    assert "rows identical: True" in text and "ratio" in text and "shared work, sklearn trees" in text
    assert_one_line_error(run_afr("bench", "floor", str(path), "--dataset", "Iris"), "--dataset", "Friedman1")
