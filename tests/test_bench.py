"""``afr bench``: bad options are rejected before any work starts; every benchmark runs and agrees with itself."""

from __future__ import annotations

import pytest

from conftest import assert_one_line_error, run_afr


@pytest.mark.parametrize("args, needles", [
    (["qp", "--format", "xml"], ["--format", "table, json"]),
    (["satrf", "--solver", "gurobi"], ["--solver", "ECOS"]),
    (["larf", "--n", "5"], ["--n 5", "n must be >= 20"]),
])
def test_bad_bench_options_fail_at_once(args, needles):
    assert_one_line_error(run_afr("bench", *args, timeout=60), *needles)


def test_each_benchmark_runs_small_and_its_two_paths_agree():
    """Not a timing test: the benchmarks run end to end at toy sizes, and the fast path computes
    what the naive one does (the larf benchmark reports the first level's largest difference; the
    satrf benchmark asserts equal predictions; the qp benchmark the objective gap between solvers)."""
    import json

    qp = json.loads(run_afr("bench", "qp", "--n", "60", "--trees", "8", "--repeats", "1", "--format", "json").stdout)
    assert qp["ratio"] > 0 and set(qp["solvers"]) >= {"ECOS", "OSQP", "CLARABEL"}
    assert all(abs(s["objective_gap_to_ecos"]) < 1e-4 for s in qp["solvers"].values())
    satrf = json.loads(run_afr("bench", "satrf", "--n", "60", "--trees", "8", "--format", "json").stdout)
    assert satrf["points"] == 25 and satrf["ratio"] > 0
    larf = json.loads(run_afr("bench", "larf", "--n", "60", "--trees", "8", "--max-m", "2", "--format", "json").stdout)
    assert larf["grid_points"] == 5 * 2 * 4 and larf["qp_solves"] == 5 * 2 * 2 + 2 * 2  # tau0 is moot without leaves
    assert larf["first_level_max_abs_diff"] < 1e-9
    assert larf["peak_mb"] > 0
