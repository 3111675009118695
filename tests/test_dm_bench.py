"""``afr bench dm`` at toy size: it runs, its three paths agree, bad options fail at once."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import assert_one_line_error, run_afr
from sklearn.datasets import make_friedman1

from afr_cli.benchmarks.dm import naive_predict
from afr_cli.ensembles import get_ensemble
from afr_cli.models import DecisionMachine


@pytest.mark.slow
def test_bench_dm_runs_small_and_its_paths_agree():
    r = json.loads(run_afr("bench", "dm", "--n", "300", "--trees", "6", "--train", "120", "--format", "json").stdout)
    assert r["agree"] is True and r["n"] == 300 and r["T"] == 6
    assert r["naive_over_matrix"] > 0 and r["matrix_over_sklearn"] > 0 and r["peak_mb"]["matrix"] > 0


def test_naive_loop_is_the_forest():
    X, y = make_friedman1(200, noise=1.0, random_state=0)
    forest = get_ensemble("ert").fit(X[:100], y[:100], 0, n_estimators=4)
    assert np.array_equal(naive_predict(DecisionMachine.from_ensemble(forest), X[100:]), forest.predict(X[100:]))


@pytest.mark.slow
def test_bad_bench_dm_option():
    assert_one_line_error(run_afr("bench", "dm", "--train", "5", timeout=60), "--train", ">= 20")
