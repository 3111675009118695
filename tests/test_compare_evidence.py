"""What `afr table --compare` adds (the answer first, then the evidence beyond the papers' tests): the
one-sentence answer, the hierarchical Bayesian test and the effect intervals per base, --metric all,
the relative form of error metrics with the warning naming the datasets that dominate, no NaN
where a test does not apply, and the message for stores sharing a base but no dataset."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from afr_cli.errors import AfrInputError
from afr_cli.store import cache as export_cache
from afr_cli.tables import compare_evidence, compare_models, render_comparison_lead, render_model_comparison
from afr_cli.tables.compare import comparison_dict
from afr_cli.tables.compare_all import render_all
from afr_cli.tables.compare_evidence import dominant_datasets
from tests.test_tables import _write_store

DATASETS = ["Wine", "Diabetes", "Boston", "Concrete", "Yacht", "Airfoil"]
SMALL_SAMPLER = (600, 200)  # in-process tests: a smaller chain than the CLI's, for speed


@pytest.fixture(autouse=True)
def small_sampler(monkeypatch, tmp_path):
    """A short chain, and a cache folder of the test's own (the hierarchical test is memoized there)."""
    monkeypatch.setenv(export_cache.CACHE_ENV, str(tmp_path / "export-cache"))
    monkeypatch.setattr(compare_evidence, "COMPARE_SAMPLES", SMALL_SAMPLER[0])
    monkeypatch.setattr(compare_evidence, "COMPARE_BURN_IN", SMALL_SAMPLER[1])


def _frame(shift: float, datasets=DATASETS, reps: int = 12, bases=("RF",), scale=None, seed: int = 0) -> pd.DataFrame:
    """Models a and b on ``datasets`` × ``reps``: b's R² is higher by ``shift`` (plus noise); the
    errors are (1 − R²) times the dataset's ``scale`` (default 1), so lower error goes with b."""
    rng = np.random.default_rng(seed)
    rows = []
    for base in bases:
        for dataset in datasets:
            size = (scale or {}).get(dataset, 1.0)
            for rep in range(reps):
                common = rng.normal(0, 0.02)
                for model, delta in (("a", 0.0), ("b", shift + rng.normal(0, 0.005))):
                    r2 = 0.6 + common + delta
                    rows.append(
                        {
                            "dataset": dataset,
                            "base": base,
                            "model": model,
                            "rep": rep,
                            "r2": r2,
                            "mae": size * (1 - r2),
                            "rmse": 1.2 * size * (1 - r2),
                            "params": {},
                            "selection": "inner-cv",
                            "train_fraction": 0.8,
                        }
                    )
    return pd.DataFrame(rows)


def _has_nan(text: str) -> bool:
    return re.search(r"\bnan\b", text, re.IGNORECASE) is not None


def test_each_base_carries_the_hierarchical_posterior_and_effect_intervals():
    comparison = compare_models(_frame(0.03, bases=("RF", "ERT")), "a", "b")
    data = comparison_dict(comparison)
    assert data["answer"].startswith("Answer: on base RF, b is better than a on R²")
    for base in data["bases"]:
        hier = base["hierarchical"]
        assert hier["applicable"] and hier["rope"] == 0.01 and not hier["rope_relative"]
        assert (hier["samples"], hier["burn_in"], hier["seed"]) == (*SMALL_SAMPLER, 0) and hier["n_datasets"] == 6
        assert hier["p_a_better"] + hier["p_equivalent"] + hier["p_b_better"] == pytest.approx(1.0)
        assert hier["p_b_better"] > 0.9 and set(hier["mc_se"]) == {"p_a_better", "p_equivalent", "p_b_better"}
        intervals = base["effect_intervals"]
        for name in ("mean_diff", "cohen_dz", "rank_biserial"):
            assert intervals[name]["low"] <= intervals[name]["estimate"] <= intervals[name]["high"]
        assert intervals["cohen_dz"]["label"] == "large" and "Cohen (1988)" in intervals["cohen_dz"]["label_source"]
        assert intervals["rank_biserial"]["label"] == "large"
    md = render_model_comparison(comparison, "md")
    assert "hierarchical Bayesian test (Corani et al. 2017) over 6 datasets × 12 repetitions" in md
    assert "intervals (95 %): mean b − a" in md and "(noncentral t), large (Cohen 1988 for d)" in md


def test_the_answer_comes_first_and_names_few_repetitions_and_datasets():
    comparison = compare_models(_frame(0.03, datasets=DATASETS[:3], reps=3), "a", "b")
    lead = render_comparison_lead(comparison)
    first = lead.splitlines()[0]
    assert first.startswith("Answer (base RF): b is better than a on R², mean b − a +0.0293 (P = ")
    assert "only 3 datasets, Diabetes, Wine, Boston, and only 3 repetitions" in first
    assert "by the hierarchical Bayesian test" in first
    ten = render_comparison_lead(compare_models(_frame(0.03, reps=10), "a", "b")).splitlines()[0]
    assert "over 6 datasets and 10 repetitions" in ten and "only" not in ten  # neither is few


def test_one_dataset_prints_no_nan_and_says_why_no_test_over_datasets_applies():
    comparison = compare_models(_frame(-0.03, datasets=["Wine"], reps=2), "a", "b")
    text = render_comparison_lead(comparison) + render_model_comparison(comparison, "md")
    assert not _has_nan(text), text
    assert text.splitlines()[0].startswith("Answer (base RF): b is worse than a on R²")
    assert "by the Bayesian correlated t-test over only 1 dataset, Wine, and only 2 repetitions" in text
    assert "tests over datasets need at least 2 datasets; base RF has 1" in text
    assert "hierarchical Bayesian test over datasets × repetitions: not applicable" in text
    data = comparison_dict(comparison)
    base = data["bases"][0]
    assert not base["hierarchical"]["applicable"] and "at least 2 datasets" in base["hierarchical"]["reason"]
    assert set(base["not_applicable"]) == {"ttest", "wilcoxon", "signed_rank", "effect_sizes"}
    assert base["effect_intervals"] == {
        "applicable": False,
        "reason": "an interval over datasets needs at least 2 datasets; here 1",
    }


def test_error_metrics_are_relative_and_warn_when_a_dataset_dominates():
    scale = {"Yacht": 100.0}  # one dataset's errors 100 times the others'
    comparison = compare_models(_frame(0.03, scale=scale), "a", "b", metric="mae")
    lead = render_comparison_lead(comparison)
    assert "warning: base RF: the mean b − a MAE over datasets of different scales is dominated by Yacht" in lead
    assert "ln(b/a) per dataset" in lead
    base = comparison_dict(comparison)["bases"][0]
    assert base["effect_intervals"]["dominated_by"] == ["Yacht"]
    relative = base["effect_intervals"]["relative"]
    assert relative["of"] == "ln(b / a) per dataset" and relative["ratio"] < 1.0  # b's errors lower
    hier = base["hierarchical"]
    assert hier["rope_relative"] and "% of A's MAE" in hier["rope_text"] and hier["p_b_better"] > 0.9
    assert hier["mean_difference"]["of"] == "ln(b / a)" and hier["mean_difference"]["mean"] < 0
    even = compare_models(_frame(0.03), "a", "b", metric="mae")  # one scale: no warning
    assert "warning" not in render_comparison_lead(even)


def test_dominant_datasets_rule():
    assert dominant_datasets(list("abcdef"), np.array([10.0, 0.1, 0.2, 0.1, 0.3, 0.2])) == ("a",)
    assert dominant_datasets(list("abcdef"), np.array([1.0, 1.1, 0.9, 1.0, 1.0, 1.0])) == ()
    assert dominant_datasets(["a"], np.array([3.0])) == ()


def test_metric_all_sets_the_three_metrics_side_by_side_with_their_directions():
    comparisons = [compare_models(_frame(0.03), "a", "b", m) for m in ("r2", "mae", "rmse")]
    md = render_all(comparisons, "md")
    assert md.splitlines()[0].startswith("R² (higher is better): Answer (base RF): b is better than a")
    assert md.splitlines()[1].startswith("MAE (lower is better): Answer")
    for name, direction in (("R²", "higher is better"), ("MAE", "lower is better"), ("RMSE", "lower is better")):
        assert re.search(rf"\| RF +\| {name} +\| {direction} ", md), name
    data = json.loads(render_all(comparisons, "json"))
    assert set(data["metrics"]) == {"r2", "mae", "rmse"}
    assert data["directions"] == {"r2": "higher is better", "mae": "lower is better", "rmse": "lower is better"}
    assert data["metrics"]["mae"]["bases"][0]["hierarchical"]["rope_relative"] is True
    csv = render_all(comparisons, "csv")
    assert sorted(pd.read_csv(pd.io.common.StringIO(csv))["metric"]) == ["mae", "r2", "rmse"]


def test_models_sharing_a_base_but_no_dataset_are_told_so():
    frame = _frame(0.03, datasets=["Wine", "Diabetes"])
    apart = frame[
        ((frame.model == "a") & (frame.dataset == "Wine")) | ((frame.model == "b") & (frame.dataset == "Diabetes"))
    ]
    with pytest.raises(AfrInputError, match=r"share base RF but no dataset on it \(RF: a on Wine, b on Diabetes\)"):
        compare_models(apart, "a", "b")
    other_base = pd.concat([frame[frame.model == "a"], frame[frame.model == "b"].assign(base="ERT")])
    with pytest.raises(AfrInputError, match="share no base"):
        compare_models(other_base, "a", "b")


@pytest.mark.slow
def test_compare_cli_json_metric_all_and_messages(tmp_path):
    from afr_forkserver import Invocation, run_afr_forked

    _write_store(tmp_path / "s", _frame(0.03, reps=3, bases=("RF", "ERT")))
    _write_store(tmp_path / "one", _frame(0.03, datasets=["Wine"], reps=2))
    frame = _frame(0.03, datasets=["Wine", "Diabetes"], reps=2)
    _write_store(tmp_path / "sa", frame[(frame.model == "a") & (frame.dataset == "Wine")])
    _write_store(tmp_path / "sb", frame[(frame.model == "b") & (frame.dataset == "Diabetes")])
    env = dict(os.environ)
    runs = run_afr_forked(
        [
            Invocation(args, tmp_path, env)
            for args in (
                ("table", "--results", "s", "--compare", "a", "b", "--format", "json"),
                ("table", "--results", "s", "--compare", "a", "b", "--metric", "all"),
                ("table", "--results", "one", "--compare", "a", "b"),
                ("table", "--results", "sa", "--results", "sb", "--compare", "a", "b"),
                ("table", "--results", "s", "--metric", "all"),
            )
        ]
    )
    as_json, every, one, apart, no_compare = runs
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    assert [b["base"] for b in data["bases"]] == ["RF", "ERT"]
    assert all(b["hierarchical"]["applicable"] and b["effect_intervals"]["applicable"] for b in data["bases"])
    assert data["bases"][0]["hierarchical"]["samples"] == 3000  # the CLI's own sampler size
    assert every.returncode == 0 and "| MAE " in every.stdout and "lower is better" in every.stdout
    assert one.returncode == 0 and one.stdout.startswith("Answer (base RF):") and not _has_nan(one.stdout)
    assert apart.returncode == 2 and "share base RF but no dataset" in apart.stderr
    assert len(apart.stderr.strip().splitlines()) == 1
    assert no_compare.returncode == 2 and "--metric: 'all' is allowed with --compare only" in no_compare.stderr


def test_average_ranks_match_scipys_rankdata_in_blocks_too(monkeypatch):
    from scipy.stats import rankdata

    from afr_cli.analysis import signed_rank

    x = np.round(np.random.default_rng(3).normal(size=(50, 9)), 1)  # many ties
    assert np.array_equal(signed_rank.average_ranks_by_row(x), rankdata(x, axis=-1))
    monkeypatch.setattr(signed_rank, "RANK_CHUNK", 200)  # two rows per block
    assert np.array_equal(signed_rank.average_ranks_by_row(x), rankdata(x, axis=-1))


def test_one_repetition_prints_no_nan_and_the_answer_falls_back_to_a_test_that_applies():
    three = compare_models(_frame(0.03, datasets=DATASETS[:3], reps=1), "a", "b")
    text = render_comparison_lead(three) + render_model_comparison(three, "md")
    assert not _has_nan(text), text
    first = text.splitlines()[0]  # no hierarchical test on one repetition: undecided, the signed-rank shares labelled
    assert "undecided between a and b" in first and "region shares (not event probabilities)" in first
    assert "| n/a: 1 repetition" in text
    per = comparison_dict(three)["bases"][0]["datasets"][0]["correlated_ttest"]
    assert per["p_b_better"] is None and "at least 2 repetitions" in per["reason"]
    one = compare_models(_frame(0.03, datasets=["Wine"], reps=1), "a", "b")
    text = render_comparison_lead(one) + render_model_comparison(one, "md")
    assert not _has_nan(text), text
    assert text.startswith(
        "Answer (base RF): no test decides between a and b on R²: mean b − a +0.0293 over only "
        "1 dataset, Wine, and only 1 repetition"
    )
