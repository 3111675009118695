"""Verdicts on the papers' claims: each test on the paper's own table and on ours."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd

from afr_cli.catalogue.knowledge import paper
from afr_cli.catalogue.published import published_table
from afr_cli.publish.claims.judge import CANNOT, DOES_NOT, NOT_RUN, PARTLY, REPRODUCES, describe_test, judge
from afr_cli.publish.claims.ledger import judge_paper
from afr_cli.publish.context import ReportContext


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
            rows.append(
                {
                    "dataset": cell["dataset"],
                    "base": base,
                    "model": model,
                    "rep": rep,
                    "r2": value + noise,
                    "mae": 1.0,
                    "rmse": 1.0,
                    "params": {},
                    "selection": "inner-cv",
                }
            )
    return pd.DataFrame(rows)


WINS = {
    "id": "w",
    "quote": "q",
    "table": "3",
    "test": "wins",
    "a": ["RF", "rf"],
    "b": ["RF", "em-w-larf"],
    "at_least": "all",
}


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
    claim = {
        "id": "t7",
        "quote": "q",
        "table": "7",
        "test": "ttest",
        "a": ["RF", "larf"],
        "b": ["ERT", "larf"],
        "significant": False,
    }
    ours = _ours_from_paper("larf:7")
    v = judge("larf", claim, ours, 10)
    assert v.paper.text.startswith("+0.0075, p = 0.071") and v.verdict == REPRODUCES
    moved = _ours_from_paper("larf:7", {("ERT", "larf"): 0.02})  # a clear, consistent gain: significant
    v = judge("larf", claim, moved, 10)
    assert v.ours.passed is False and v.verdict == PARTLY


def test_no_store_is_not_run_and_best_of_counts_strict_wins():
    claim = {
        "id": "b",
        "quote": "q",
        "table": "8",
        "test": "best",
        "base": "RF",
        "strict": True,
        "models": ["sat-rf-y", "sat-rf-x", "sat-rf-yx"],
        "model": "sat-rf-yx",
        "at_least": "most",
    }
    assert judge("satrf", claim, None, 10).verdict == NOT_RUN
    v = judge("satrf", claim, _ours_from_paper("satrf:8"), 10)
    assert v.paper.text.startswith("9 of 11") and v.ours.text.startswith("9 of 11") and v.verdict == REPRODUCES


# ---------------------------------------------------------------- claims held to the paper's word


def _robust_verdicts() -> dict:
    from pathlib import Path

    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.claims.ledger import judge_paper
    from afr_cli.publish.context import ReportContext

    return {
        v.id: v for v in judge_paper(paper("robust_rf"), ReportContext(Path(__file__).resolve().parents[1] / "results"))
    }


def test_robust_rf_ledger_holds_the_papers_word():
    from afr_cli.publish.claims.judge import NOT_CHECKED

    verdicts = _robust_verdicts()
    assert len(verdicts) >= 4
    for alpha in ("0.2", "0.05"):
        # Table I shows 18 of 18; ours loses at gamma = 15 %: "all" makes it partly (was reproduces under "most")
        v = verdicts[f"t1-robust-beats-rf-a{alpha}"]
        assert v.claim["at_least"] == "all" and v.paper.text == "18 of 18"
        assert v.ours.text.startswith("16 of 18") and v.verdict == PARTLY
    figure = verdicts["f1-2-robust-beats-rf-diabetes"]  # Figures 1-2: worse on every Diabetes cell
    assert figure.ours.text == "0 of 18 (mean robust-rf-a0.002 − rf +0.208 RMSE)" and figure.verdict == DOES_NOT
    # the abstract, read as its sentence says: the robust RF against the plain RF on Table I's noisy
    # cells; the paper's table is consistent with it, ours loses one cell
    noise = verdicts["abstract-better-on-noisy-data"]
    assert noise.paper.text == "9 of 9" and noise.paper.passed
    assert noise.ours.text == "8 of 9 (worse on Boston [train_fraction=15, noise_eta=0.5])" and noise.verdict == PARTLY
    assert "noise_eta > 0" in describe_test(noise.claim)
    untested = verdicts["title-noisy-training-data"]
    assert untested.verdict == NOT_CHECKED and "test features only" in untested.claim["reason"]


def test_not_checked_needs_a_reason_and_the_ledger_says_it():
    import pytest

    from afr_cli.errors import AfrInputError
    from afr_cli.publish.claims.judge import NOT_CHECKED, reason

    claim = {"id": "n", "quote": "q", "test": "not_checked", "reason": "no experiment measures it"}
    v = judge("robust_rf", claim, None, 100)
    assert v.verdict == NOT_CHECKED and reason(v) == "no experiment measures it"
    with pytest.raises(AfrInputError, match="reason: missing"):
        judge("robust_rf", dict(claim, reason=""), None, 100)


def test_gain_contrast_pairs_the_cells_that_share_a_split():
    from afr_cli.publish.claims.judge import _drop_axis

    assert _drop_axis("Boston [train_fraction=15, noise_eta=0.5]", "noise_eta") == ("Boston [train_fraction=15]", 0.5)
    assert _drop_axis("Boston [noise_eta=0]", "noise_eta") == ("Boston", 0.0)


def test_agboost_agreement_headline_is_on_the_stated_100_repetitions():
    from pathlib import Path

    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.claims.ledger import agreement_block, paper_reps_label
    from afr_cli.publish.context import ReportContext

    agboost = paper("agboost")
    assert (agboost.stated_reps, agboost.reps) == (100, 10)
    block = agreement_block(agboost, ReportContext(Path(__file__).resolve().parents[1] / "results"))
    lines = [line for line in block.splitlines() if line.startswith("| 0-")]
    assert lines[0].startswith("| 0-99 (stated)") and lines[-1].startswith("| 0-9 (inferred protocol)")
    assert "the paper states 100" in paper_reps_label(agboost)
    assert paper_reps_label(paper("larf")) == "repetitions 0-9"


def test_robust_rf_effect_is_judged_per_cell_beside_the_cells():
    from pathlib import Path

    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.claims.ledger import effect_rows
    from afr_cli.publish.context import ReportContext

    rows = {
        r[0]: r for r in effect_rows(paper("robust_rf"), ReportContext(Path(__file__).resolve().parents[1] / "results"))
    }
    row = rows["robust-rf-a0.2 − rf (robust_rf:I)"]
    # 18 cells, the paper's sign on 16, within half the paper's effect on none: ours is 3 times it
    assert row[2:] == ["18", "16", "0", "-0.0211", "-0.0620"]


@functools.cache
def _judged(paper_id: str) -> tuple:
    """The paper's verdicts over the committed results/, judged once for this module (two tests
    read LARF's; a verdict is read, never changed)."""
    return tuple(judge_paper(paper(paper_id), ReportContext(Path(__file__).resolve().parents[1] / "results")))


def _verdicts(paper_id: str) -> dict:
    return {v.id: v for v in _judged(paper_id)}


def test_a_negligible_gain_is_judged_with_the_rope_and_the_p_value_beside_it():
    """LARF t8/t9, "R² insignificantly increases with the number of trees": a
    claim of practical equivalence, not of p >= 0.05, whose p-value verdict flips with the repetitions."""
    verdicts = _verdicts("larf")
    for claim in ("t8-trees-rf", "t9-trees-ert"):
        v = verdicts[claim]
        assert v.test == "negligible" and v.verdict == REPRODUCES, claim
        assert v.ours.text == "+0.0022, P(equivalent, ±0.01) = 1.000, n = 11", claim
        assert v.other_reading == "by the p-value" and v.verdict_other == PARTLY, claim  # p < 0.05 on 100 repetitions
    assert verdicts["t9-trees-ert"].verdict_paper_reps == PARTLY  # the mean is negative on repetitions 0-9


def test_a_significance_the_paper_never_tested_is_read_for_its_direction():
    """SAT-RF t6-t7, "the use of ERTs significantly improves the models": the paper runs no test, so
    its table is read for the sign (it was "the paper is inconsistent" by a t-test it never ran)."""
    v = _verdicts("satrf")["t6-t7-ert-improves"]
    assert v.paper.passed and v.verdict == REPRODUCES
    assert v.ours.text.startswith("+0.0202, p = 0.016")
    assert v.other_reading == "with the ROPE" and v.ours_other.text == "+0.0202, P(B better, ±0.01) = 0.883, n = 11"
    assert v.verdict_other == PARTLY


def test_each_ledger_states_its_reading_rules_and_where_a_verdict_changes():
    from afr_cli.publish.claims.ledger import render_ledger, summary_block

    larf = paper("larf")
    verdicts = list(_judged("larf"))  # judge_paper(larf) over results/
    text = render_ledger(larf, verdicts)
    assert "How this ledger reads the paper's words:" in text
    assert '"most" is more than half' in text and "practical equivalence" in text
    row = next(line for line in text.splitlines() if line.startswith("| t8-trees-rf "))
    assert row.rstrip(" |").endswith("repetitions 0-9: same; by the p-value: partly")
    summary = summary_block(larf, verdicts)
    line = next(line for line in summary.splitlines() if "rf@1000 (RF) − rf@100 (RF)" in line)
    assert "The sentence: “It can be observed in Table 8 and Table 9" in line and "Why this reading:" in line
