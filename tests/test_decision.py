"""The one decision rule of a comparison: a winner or equivalence only at P(event) >= 0.95, else
undecided with the probabilities in words, and a word when the evidence points both ways."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pandas as pd

from afr_cli.analysis.bayesian import RopeProbabilities
from afr_cli.analysis.decision import (
    A_BETTER,
    B_BETTER,
    EQUIVALENT,
    NO_TEST,
    UNDECIDED,
    conflict_text,
    decide_paired,
    rule,
)
from afr_cli.tables import compare_models, render_comparison_lead, render_model_comparison
from afr_cli.tables.compare_decision import decide_models


def _frame(per_dataset: dict[str, float], reps: int = 15, noise: float = 0.01, seed: int = 0) -> pd.DataFrame:
    """Models a and b, b's R² higher than a's by ``per_dataset[dataset]`` on average (plus noise)."""
    rng = np.random.default_rng(seed)
    rows = []
    for dataset, shift in per_dataset.items():
        for rep in range(reps):
            common = rng.normal(0, 0.02)
            for model, delta in (("a", 0.0), ("b", shift + rng.normal(0, noise))):
                rows.append(
                    {
                        "dataset": dataset,
                        "base": "RF",
                        "model": model,
                        "rep": rep,
                        "r2": 0.6 + common + delta,
                        "mae": 0.4,
                        "rmse": 0.5,
                        "params": {},
                        "selection": "inner-cv",
                        "train_fraction": 0.8,
                    }
                )
    return pd.DataFrame(rows)


def test_rule_names_an_event_only_at_095():
    assert rule(RopeProbabilities(0.01, 0.03, 0.96)) == (B_BETTER, 0.96)
    assert rule(RopeProbabilities(0.96, 0.03, 0.01)) == (A_BETTER, 0.96)
    assert rule(RopeProbabilities(0.0, 0.95, 0.05)) == (EQUIVALENT, 0.95)
    assert rule(RopeProbabilities(0.2, 0.3, 0.5)) == (UNDECIDED, 0.5)
    verdict, p = rule(RopeProbabilities(math.nan, math.nan, math.nan))
    assert verdict == NO_TEST and math.isnan(p)


def test_opposite_evidence_is_said():
    assert conflict_text({"signed-rank": "a", "per-dataset wins": "a", "hierarchical mean": "b"}, "rf", "larf") == (
        "the evidence over the datasets points in opposite directions: hierarchical mean favours larf; "
        "signed-rank, per-dataset wins favour rf"
    )
    assert conflict_text({"signed-rank": "b", "per-dataset wins": "none"}) == ""


def test_decide_paired_on_arrays():
    rng = np.random.default_rng(1)
    clear = [0.05 + rng.normal(0, 0.01, 10) for _ in range(6)]
    d = decide_paired(clear, 0.2, 0.01, samples=600, burn_in=100)
    assert d.verdict == B_BETTER and d.probability >= 0.95 and d.test == "hierarchical"
    assert d.probabilities.right == d.probability and d.region_shares is not None
    flipped = decide_paired([-x for x in clear], 0.2, 0.01, samples=600, burn_in=100)
    assert flipped.verdict == A_BETTER
    one = decide_paired([clear[0]], 0.2, 0.01)
    assert one.test == "correlated t" and one.verdict == B_BETTER
    short = decide_paired([np.array([0.1]), np.array([0.2])], 0.2, 0.01)
    assert short.verdict == NO_TEST and "at least 2" in short.reason


def test_a_majority_of_losses_with_one_big_win_is_not_called_better():
    """The audit's case: b loses on 4 of 5 datasets, wins big on one; the old answer said 'probably
    better' at P = 0.54. The rule says undecided, and that the evidence points both ways."""
    frame = _frame({"Wine": -0.03, "Diabetes": -0.02, "Boston": -0.025, "Yacht": -0.02, "Airfoil": 0.3})
    comparison = compare_models(frame, "a", "b")
    lead = render_comparison_lead(comparison)
    first = lead.splitlines()[0]
    assert "undecided between a and b" in first and "probably" not in first
    assert "opposite directions" in first
    assert "Decision rule: a winner, or practical equivalence, is named only when" in lead
    data = json.loads(render_model_comparison(comparison, "json"))
    decision = data["bases"][0]["decision"]
    assert decision["verdict"] == "undecided" and decision["threshold"] == 0.95
    events = decision["event_probabilities"]
    assert max(events.values()) < 0.95 and decision["region_shares"] is not None
    hier = data["bases"][0]["hierarchical"]
    assert set(hier["population_mean"]) == {"p_a_better", "p_equivalent", "p_b_better"}
    assert "region shares" in hier["p_meaning"]


def test_decide_models_is_the_entry_point_and_reads_the_first_reps():
    frame = _frame({d: 0.05 for d in ("Wine", "Diabetes", "Boston", "Yacht", "Airfoil")}, reps=12)
    decisions = decide_models(frame, "a", "b")
    assert list(decisions) == ["RF"] and decisions["RF"].verdict == B_BETTER
    text = render_comparison_lead(compare_models(frame, "a", "b")).splitlines()[0]
    assert text.startswith("Answer (base RF): b is better than a on R²") and "P = " in text
    first_three = decide_models(frame, "a", "b", reps=3)
    assert first_three["RF"].test == "hierarchical"


def test_settles_at_is_the_count_from_which_the_verdict_stays():
    from afr_cli.tables.compare_decision import settles_at, stability_counts

    assert settles_at([(5, "undecided"), (10, "b_better"), (20, "b_better"), (30, "b_better")]) == 10
    assert settles_at([(5, "b_better"), (10, "undecided"), (20, "b_better")]) == 20
    assert settles_at([]) is None
    assert stability_counts(100) == [5, 10, 20, 30, 50, 100]
    assert stability_counts(12) == [5, 10, 12]


def test_stability_on_the_command_line(tmp_path):
    from afr_forkserver import Invocation, run_afr_forked

    from tests.test_tables import _write_store

    shifts = {d: 0.04 for d in ("Wine", "Diabetes", "Boston", "Yacht", "Airfoil")}
    _write_store(tmp_path / "s", _frame(shifts, reps=12, noise=0.03))
    runs = run_afr_forked(
        [
            Invocation(args, tmp_path, dict(os.environ))
            for args in (
                ("table", "--results", "s", "--compare", "a", "b", "--stability"),
                ("table", "--results", "s", "--compare", "a", "b", "--stability", "--format", "json"),
                ("table", "--results", "s", "--stability"),
            )
        ]
    )
    md, as_json, alone = runs
    assert md.returncode == 0, md.stderr
    assert "| 5 reps " in md.stdout and "| 12 reps " in md.stdout and "settles at" in md.stdout
    data = json.loads(as_json.stdout)
    steps = data["bases"][0]["steps"]
    assert [s["reps"] for s in steps] == [5, 10, 12] and steps[-1]["verdict"] == "b_better"
    assert data["bases"][0]["final_verdict"] == "b_better" and data["bases"][0]["settles_at"] in (5, 10, 12)
    assert set(steps[0]["event_probabilities"]) == {"p_a_better", "p_equivalent", "p_b_better"}
    assert alone.returncode == 2 and "--stability: needs --compare A B" in alone.stderr
