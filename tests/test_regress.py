"""``afr regress``: the CI guard fails on a number moved beyond tolerance either way, a missing
number, a moved baseline or a moved expected gap."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.tables.regress import GOLDEN_COLUMNS, compare


def _summary(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=GOLDEN_COLUMNS)


KINDS = {"RF": "rf", "ERT": "ert"}  # base id -> ensemble kind, as the regress config's bases say
GOLDEN = _summary(
    [
        ("Sparse", "RF", "sat-rf-y", "r2", 0.500),
        ("Sparse", "RF", "sat-rf-y", "mae", 2.00),
        ("Sparse", "RF", "forest", "r2", 0.470),
    ]
)


def _status(report, model: str, metric: str, check: str = "golden") -> str:
    t = report.table
    return t[(t.model == model) & (t.metric == metric) & (t.check == check)].status.iloc[0]


def test_equal_or_slightly_worse_numbers_pass():
    run = _summary(
        [
            ("Sparse", "RF", "sat-rf-y", "r2", 0.495),
            ("Sparse", "RF", "sat-rf-y", "mae", 2.03),
            ("Sparse", "RF", "forest", "r2", 0.470),
        ]
    )
    report = compare(run, GOLDEN, "forest", KINDS)
    assert not report.failed, report.table
    # the forest is also checked against the published Sparse RF baseline (0.470)
    assert _status(report, "forest", "r2", "published larf:3") == "ok"


def test_worse_r2_beyond_tolerance_fails_and_so_does_a_better_one():
    run = _summary(
        [
            ("Sparse", "RF", "sat-rf-y", "r2", 0.485),
            ("Sparse", "RF", "sat-rf-y", "mae", 1.80),
            ("Sparse", "RF", "forest", "r2", 0.470),
        ]
    )
    report = compare(run, GOLDEN, "forest", KINDS)
    assert report.failed
    assert _status(report, "sat-rf-y", "r2") == "REGRESSED"
    assert _status(report, "sat-rf-y", "mae") == "MOVED UP"


def test_an_inflated_score_alone_fails():
    # a leak of test rows into training raises scores: it must fail CI, not pass as an improvement
    run = _summary(
        [
            ("Sparse", "RF", "sat-rf-y", "r2", 0.530),
            ("Sparse", "RF", "sat-rf-y", "mae", 2.00),
            ("Sparse", "RF", "forest", "r2", 0.470),
        ]
    )
    report = compare(run, GOLDEN, "forest", KINDS)
    assert report.failed and _status(report, "sat-rf-y", "r2") == "MOVED UP"
    above = _summary([("Sparse", "RF", "forest", "r2", 0.480)])
    assert _status(compare(above, above, "forest", KINDS), "forest", "r2", "published larf:3") == "MOVED UP"


def test_bostons_known_gap_is_guarded_as_an_expected_value():
    # Boston's forests sit 0.011 / 0.014 below the paper (a documented data difference): the
    # check holds them at the expected value, so the gap can neither widen nor close silently
    at_gap = _summary([("Boston", "RF", "forest", "r2", 0.8035), ("Boston", "ERT", "forest", "r2", 0.8175)])
    report = compare(at_gap, at_gap, "forest", KINDS)
    assert not report.failed, report.table
    assert set(report.table.check) == {"golden", "expected gap to larf:3", "expected gap to larf:5"}
    closed = _summary([("Boston", "RF", "forest", "r2", 0.814)])
    assert _status(compare(closed, closed, "forest", KINDS), "forest", "r2", "expected gap to larf:3") == "MOVED UP"


def test_worse_mae_beyond_two_percent_fails():
    run = _summary(
        [
            ("Sparse", "RF", "sat-rf-y", "r2", 0.500),
            ("Sparse", "RF", "sat-rf-y", "mae", 2.05),
            ("Sparse", "RF", "forest", "r2", 0.470),
        ]
    )
    assert _status(compare(run, GOLDEN, "forest", KINDS), "sat-rf-y", "mae") == "REGRESSED"


def test_a_missing_number_fails():
    run = _summary([("Sparse", "RF", "sat-rf-y", "r2", 0.500), ("Sparse", "RF", "forest", "r2", 0.470)])
    report = compare(run, GOLDEN, "forest", KINDS)
    assert report.failed and _status(report, "sat-rf-y", "mae") == "MISSING"


def test_a_forest_off_the_published_baseline_fails_even_when_golden_moved_with_it():
    moved = GOLDEN.copy()
    moved.loc[moved.model == "forest", "mean"] = 0.460
    run = _summary(
        [
            ("Sparse", "RF", "sat-rf-y", "r2", 0.500),
            ("Sparse", "RF", "sat-rf-y", "mae", 2.00),
            ("Sparse", "RF", "forest", "r2", 0.460),
        ]
    )
    report = compare(run, moved, "forest", KINDS)
    assert _status(report, "forest", "r2") == "ok"
    assert _status(report, "forest", "r2", "published larf:3") == "REGRESSED" and report.failed


@pytest.mark.slow
def test_cli_update_then_pass_then_fail_on_a_raised_golden(tmp_path):
    # A base id the papers do not use, so only the golden check applies to this tiny forest.
    cfg = {
        "name": "mini-regress",
        "seed": 5,
        "protocol": {"reps": 2},
        "datasets": ["Friedman1"],
        "bases": [{"id": "tiny", "kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
        "models": [
            {"id": "forest", "family": "forest"},
            {"id": "sat-rf-y", "family": "sat-rf-y", "grid": {"eps": [0.0, 1.0], "gamma": [0.5]}},
        ],
    }
    config = tmp_path / "regress.yaml"
    config.write_text(yaml.safe_dump(cfg))
    golden = tmp_path / "golden.csv"
    args = ("regress", "--config", str(config), "--golden", str(golden), "--jobs", "1", "-q")
    assert_one_line_error(run_afr(*args), "golden.csv", "--update")
    assert run_afr(*args, "--update").returncode == 0
    written = pd.read_csv(golden)
    assert set(written.model) == {"forest", "sat-rf-y"} and set(written.metric) == {"r2", "mae", "rmse"}
    passed = run_afr(*args)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "0 failed" in passed.stdout
    raised = written.copy()
    is_r2 = (raised.model == "sat-rf-y") & (raised.metric == "r2")
    raised.loc[is_r2, "mean"] += 0.05
    raised.to_csv(golden, index=False)
    failed = run_afr(*args)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, failed.stdout


def test_a_base_id_is_checked_against_the_column_of_its_own_ensemble_kind():
    # "ERT" is a forest in the LARF paper and a GBM's learner in AGBoost: only the matching kind's
    # published column applies; AGBoost's DT learners have their own (Table II's GBM column).
    run = _summary([("Sparse", "ERT", "gbm", "r2", 0.574), ("Sparse", "DT", "gbm", "r2", 0.598)])
    table = compare(run, run, "gbm", {"ERT": "gbm-ert", "DT": "gbm-dt"}).table
    checks = set(zip(table.base, table.check))
    assert ("ERT", "published larf:5") not in checks and ("DT", "published agboost:II") in checks
    assert table[table.check == "published agboost:II"].status.iloc[0] == "ok"
    forest = compare(run.assign(model="forest"), run.assign(model="forest"), "forest", {"ERT": "ert"}).table
    assert forest[forest.check == "published larf:5"].status.iloc[0] == "MOVED UP"  # 0.574 vs 0.452
