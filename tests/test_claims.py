"""Verdicts on the papers' claims: each test on the paper's own table and on ours."""

from __future__ import annotations

import pandas as pd

from afr_cli.publish.claims.judge import CANNOT, DOES_NOT, NOT_RUN, PARTLY, REPRODUCES, judge
from afr_cli.papers import published_table


def _ours_from_paper(spec: str, shift: dict | None = None, reps: int = 2) -> pd.DataFrame:
    """Results whose means equal a published table's R² cells (plus a per-(base, model) shift)."""
    table = published_table(spec)
    table = table[table.metric == "r2"]
    rows = []
    for cell in table.to_dict("records"):
        model = cell["model"].partition("@")[0]
        base = cell["base"] + (f"@{cell['model'].partition('@')[2]}" if "@" in cell["model"] else "")
        value = cell["value"] + (shift or {}).get((cell["base"], cell["model"]), 0.0)
        for rep, noise in zip(range(reps), (-0.0001, 0.0001)):
            rows.append({"dataset": cell["dataset"], "base": base, "model": model, "rep": rep, "r2": value + noise,
                         "mae": 1.0, "rmse": 1.0, "params": {}, "selection": "inner-cv"})
    return pd.DataFrame(rows)


WINS = {"id": "w", "quote": "q", "table": "3", "test": "wins", "a": ["RF", "rf"], "b": ["RF", "em-w-larf"],
        "at_least": "all"}


def test_a_claim_the_papers_table_supports_reproduces_on_its_own_numbers():
    ours = _ours_from_paper("larf:3")
    v = judge("larf", WINS, ours, 10)
    assert v.paper.text == "11 of 11" and v.ours.text == "11 of 11" and v.verdict == REPRODUCES


def test_stores_with_constant_protocol_axes_name_datasets_as_the_paper_prints_them():
    # a store written since the protocol axes records train_fraction and noise_eta on every row
    ours = _ours_from_paper("larf:3", {("RF", "em-w-larf"): -1.0}).assign(train_fraction=0.8, noise_eta=0.0)
    v = judge("larf", WINS, ours, 10)
    assert v.ours.text.startswith("0 of 11") and "[" not in v.ours.text and v.verdict == DOES_NOT


def test_fewer_wins_than_claimed_is_partly_and_none_does_not():
    lower = {("RF", "em-w-larf"): -0.03}  # worse than rf on the datasets where the gap was < 0.03
    v = judge("larf", WINS, _ours_from_paper("larf:3", lower), 10)
    assert v.verdict in (PARTLY, DOES_NOT) and v.ours.count < 11
    v = judge("larf", WINS, _ours_from_paper("larf:3", {("RF", "em-w-larf"): -1.0}), 10)
    assert v.ours.text.startswith("0 of 11") and v.verdict == DOES_NOT


def test_a_claim_its_own_table_contradicts_cannot_be_judged():
    # "all attention-based models outperform the original RF": epsM-ARF is below RF on 5 in the paper
    claim = dict(WINS, b=["RF", "em-arf"])
    v = judge("larf", claim, _ours_from_paper("larf:3"), 10)
    assert v.paper.text.startswith("5 of 11") and v.verdict == CANNOT


def test_a_ttest_claimed_not_significant_but_significant_in_ours_is_partly():
    claim = {"id": "t7", "quote": "q", "table": "7", "test": "ttest", "a": ["RF", "larf"], "b": ["ERT", "larf"],
             "significant": False}
    ours = _ours_from_paper("larf:7")
    v = judge("larf", claim, ours, 10)
    assert v.paper.text.startswith("+0.0075, p = 0.071") and v.verdict == REPRODUCES
    moved = _ours_from_paper("larf:7", {("ERT", "larf"): 0.02})  # a clear, consistent gain: significant
    v = judge("larf", claim, moved, 10)
    assert v.ours.passed is False and v.verdict == PARTLY


def test_no_store_is_not_run_and_best_of_counts_strict_wins():
    claim = {"id": "b", "quote": "q", "table": "8", "test": "best", "base": "RF", "strict": True,
             "models": ["sat-rf-y", "sat-rf-x", "sat-rf-yx"], "model": "sat-rf-yx", "at_least": "most"}
    assert judge("satrf", claim, None, 10).verdict == NOT_RUN
    v = judge("satrf", claim, _ours_from_paper("satrf:8"), 10)
    assert v.paper.text.startswith("9 of 11") and v.ours.text.startswith("9 of 11") and v.verdict == REPRODUCES
