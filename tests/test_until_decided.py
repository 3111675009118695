"""``afr run CONFIG --until-decided A B``: repetitions in batches until the comparison of A and B
is decided on every base (or the maximum is reached), the reason recorded in the store; a later
run extends the store to exactly the rows of a run that went to the full count at once."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.engine.until_decided import UNDECIDED, BaseVerdict, Decision, stop_reason
from afr_cli.store import ResultsStore, load_results
from afr_cli.store.status import render_status, store_status

# a forest of 30 deep trees against one tree's worth of it (eps-ABRF's softmax at a temperature so
# low that each point follows the single tree closest to it): a clear winner on Friedman1
CONFIG = {
    "name": "clear-winner",
    "seed": 3,
    "protocol": {"reps": 20, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 30, "min_samples_leaf": 1}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "one-tree", "family": "eps-abrf", "params": {"eps": 0.0, "tau": 0.001}},
    ],
}
KEY = ["dataset", "base", "model", "rep"]


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    path = tmp_path_factory.mktemp("until") / "clear.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    return path


def _rows(out) -> pd.DataFrame:
    df = load_results(out)
    df["params"] = df["params"].map(lambda p: tuple(sorted(p.items())))
    return df[[*KEY, "r2", "mae", "params", "cv_score"]].sort_values(KEY).reset_index(drop=True)


@pytest.mark.slow
def test_a_clear_winner_stops_early_says_why_and_extends_to_a_full_runs_rows(config, tmp_path):
    early, full = tmp_path / "early", tmp_path / "full"
    common = ["--jobs", "1", "-q"]
    stopped = run_afr(
        "run", str(config), "--until-decided", "rf", "one-tree", "--batch", "5", "--out", str(early), *common
    )
    assert stopped.returncode == 0, stopped.stderr
    reason = stopped.stdout.strip().splitlines()[-1]
    assert reason.startswith(
        "stopped at 5 repetitions: decided on every base at P >= 0.95 (base RF@30: rf better than one-tree"
    )
    assert sorted(load_results(early)["rep"].unique()) == list(range(5))  # not the config's 20
    record = ResultsStore(early).manifest()["stopped"]
    assert record["reps"] == 5 and record["decided"] and record["reason"] == reason
    assert record["command"].startswith(f"afr run {config} --until-decided rf one-tree --batch 5")
    assert f"until decided: {reason}" in render_status(store_status(early))
    table = run_afr("table", "--results", str(early))
    assert f"an --until-decided run {reason}" in table.stderr
    # a plain run with more repetitions extends it; its rows equal a run to 8 at once
    assert run_afr("run", str(config), "--reps", "8", "--out", str(early), *common).returncode == 0
    assert run_afr("run", str(config), "--reps", "8", "--out", str(full), *common).returncode == 0
    pd.testing.assert_frame_equal(_rows(early), _rows(full), check_exact=True)
    assert len(_rows(full)) == 8 * 2
    assert "later runs have extended the store beyond it" in render_status(store_status(early))
    # asked again, it starts from the 8 repetitions stored: decided on them, nothing to compute
    again = run_afr(
        "run", str(config), "--until-decided", "rf", "one-tree", "--batch", "5", "--out", str(early), *common
    )
    assert again.stdout.strip().splitlines()[-1].startswith("stopped at 8 repetitions: decided on every base")
    assert len(_rows(early)) == 8 * 2
    # one repetition is too few for any test: the maximum is reached, undecided
    one = tmp_path / "one"
    at_one = run_afr(
        "run", str(config), "--until-decided", "rf", "one-tree", "--max-reps", "1", "--out", str(one), *common
    )
    assert at_one.stdout.strip().splitlines()[-1] == (
        "stopped at 1 repetition: reached the maximum (1), undecided (base RF@30: no test decides yet "
        "(the correlated t-test over repetitions needs at least 2 repetitions))"
    )
    assert ResultsStore(one).manifest()["stopped"]["decided"] is False


def test_options_are_checked_in_one_line(config, tmp_path):
    out = str(tmp_path / "x")
    unknown = run_afr("run", str(config), "--until-decided", "rf", "forest", "--out", out)
    assert_one_line_error(unknown, "--until-decided", "unknown model 'forest'", "rf, one-tree")
    alone = run_afr("run", str(config), "--max-reps", "30", "--out", out)
    assert_one_line_error(alone, "--max-reps and --batch go with --until-decided")
    assert_one_line_error(run_afr("run", str(config), "--until-decided", "rf", "one-tree", "--batch", "0"), "--batch")
    assert not (tmp_path / "x").exists()


def test_the_record_says_decided_or_the_maximum_reached_undecided():
    sure = BaseVerdict("RF", "b better than a", 0.97, "a test")
    unsure = BaseVerdict("ERT", "a and b practically equivalent", 0.6, "a test")
    decided = stop_reason(Decision((sure,)), 30, 100)
    assert decided["decided"] and decided["reason"] == (
        "stopped at 30 repetitions: decided on every base at P >= 0.95 (base RF: b better than a at P = 0.970 (a test))"
    )
    undecided = stop_reason(Decision((sure, unsure)), 100, 100)
    assert not undecided["decided"]
    assert undecided["reason"].startswith("stopped at 100 repetitions: reached the maximum (100), undecided (base RF")
    assert "base ERT: a and b practically equivalent at P = 0.600" in undecided["reason"]
    assert not Decision(()).decided  # no base compared: nothing decided
    # the rule left it undecided: never decided, whatever the probability of its most probable event
    vague = BaseVerdict("DT", UNDECIDED, 0.8, "the population's mean difference")
    assert not vague.decided
    assert (
        "base DT: undecided (the most probable event at P = 0.800 < 0.95"
        in stop_reason(Decision((vague,)), 9, 9)["reason"]
    )
