"""Friedman blocks: one tie rule on both sides, Wilcoxon–Holm cliques beside Nemenyi's,
a chosen alpha, and the critical difference drawn on the diagram. No store, no run: cheap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from afr_cli.analysis.posthoc import rank_cliques, wilcoxon_holm
from afr_cli.analysis.stats import friedman_nemenyi
from afr_cli.tables.friedman import (
    CD_BAR_Y,
    NEMENYI_COLOUR,
    TIE_RULE,
    WILCOXON_COLOUR,
    FriedmanBlock,
    RankedSide,
    at_printed_precision,
    cd_figure,
    friedman_notes,
    round_half_up,
    row_decimals,
)

STEPS = np.array([0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08])


def three_models(n: int) -> pd.DataFrame:
    """a beats b and c on every dataset by distinct margins; b against c alternates in sign."""
    steps = STEPS[:n]
    c = np.full(n, 0.5)
    b = c + steps * np.where(np.arange(n) % 2 == 0, 1.0, -1.0)  # +0.01, −0.02, +0.03, ...
    a = c + 0.2 + steps
    return pd.DataFrame({"a": a, "b": b, "c": c})


def test_wilcoxon_holm_by_hand_and_against_scipy():
    # 8 datasets: a − b and a − c are all positive with distinct |d|, so the exact two-sided p is
    # 2 / 2**8 = 0.0078125 for each; Holm over 3 pairs: the smallest × 3 = 0.0234375 < 0.05, the
    # next × 2 = 0.015625, raised to the running maximum 0.0234375. b − c alternates: R+ = 1 + 3 + 5
    # + 7 = 16 against R− = 20, far from significant. So a differs from both and b, c form the clique.
    from scipy.stats import wilcoxon

    table = three_models(8)
    ranks = friedman_nemenyi(table).mean_ranks
    tests = wilcoxon_holm(table, ranks)
    assert tests.models[0] == "a"
    p = dict(zip(tests.pairs, tests.p))
    holm = dict(zip(tests.pairs, tests.p_holm))
    for pair in (("a", "b"), ("a", "c")):
        assert p[pair] == 2 / 2**8
        assert holm[pair] == pytest.approx(0.0234375, abs=1e-15)
    for (x, y), value in p.items():
        assert value == pytest.approx(wilcoxon(table[x], table[y]).pvalue, abs=1e-12)
    bc = next(pair for pair in tests.pairs if set(pair) == {"b", "c"})
    assert holm[bc] > 0.5
    assert tests.differ("a", "b") and tests.differ("c", "a") and not tests.differ("b", "c")
    assert [set(c) for c in tests.cliques()] == [{"b", "c"}]


def test_holm_keeps_a_pair_alone_at_p_below_alpha_in_the_clique():
    # 6 datasets: the exact p of a − b is 2 / 64 = 0.03125 < 0.05 alone, but Holm over 3 pairs makes
    # it 0.09375: no pair differs and all three models are one clique; at alpha 0.1 a differs again
    table = three_models(6)
    ranks = friedman_nemenyi(table).mean_ranks
    tests = wilcoxon_holm(table, ranks)
    assert min(tests.p) == 0.03125 and min(tests.p_holm) == pytest.approx(0.09375)
    assert [set(c) for c in tests.cliques()] == [{"a", "b", "c"}]
    looser = wilcoxon_holm(table, ranks, alpha=0.1)
    assert [set(c) for c in looser.cliques()] == [{"b", "c"}]


def test_rank_cliques_are_runs_in_rank_order_with_no_pair_different():
    differ_pairs = {frozenset(p) for p in (("a", "c"),)}
    differ = lambda x, y: frozenset((x, y)) in differ_pairs  # noqa: E731
    assert rank_cliques(("a", "b", "c", "d"), differ) == [("a", "b"), ("b", "c", "d")]
    differ_pairs = {frozenset(p) for p in (("a", "c"), ("b", "d"), ("a", "d"))}
    assert rank_cliques(("a", "b", "c", "d"), differ) == [("a", "b"), ("b", "c"), ("c", "d")]
    assert rank_cliques(("a", "b"), lambda x, y: True) == []


def test_floating_point_noise_ties_at_the_printed_precision():
    # AGBoost's non-param and GBM on Airfoil are the same model up to 1e-16; at the paper's three
    # printed decimals they tie, as the paper's printed cells do, and χ² is the tie-corrected one
    from scipy.stats import friedmanchisquare

    raw = pd.DataFrame(
        {"agboost": [0.9, 0.81, 0.7], "gbm": [np.nextafter(0.8, 1.0), 0.8004, 0.6], "nonparam": [0.8, 0.8001, 0.5]},
        index=["Airfoil", "Other", "Third"],
    )
    assert raw.loc["Airfoil", "gbm"] != raw.loc["Airfoil", "nonparam"]
    rounded = at_printed_precision(raw, {"Airfoil": 3, "Other": 3, "Third": 3})
    assert rounded.loc["Airfoil", "gbm"] == rounded.loc["Airfoil", "nonparam"] == 0.8
    assert rounded.loc["Other", "gbm"] == rounded.loc["Other", "nonparam"] == 0.8
    before, after = friedman_nemenyi(raw), friedman_nemenyi(rounded)
    assert before.mean_ranks == (1.0, 2.0, 3.0)  # the noise ranks gbm above nonparam everywhere
    assert after.mean_ranks == pytest.approx((1.0, (2.5 + 2.5 + 2) / 3, (2.5 + 2.5 + 3) / 3))
    assert after.chi2 == pytest.approx(friedmanchisquare(*rounded.to_numpy().T).statistic, abs=1e-12)
    # the printed side is left as it is; half-up as the agreement rule reads a printed cell
    assert round_half_up(0.8125, 3) == 0.813 and round_half_up(0.8124, 3) == 0.812
    assert at_printed_precision(rounded, {"Airfoil": 3}).equals(rounded)


def test_row_decimals_take_the_most_the_paper_prints_on_a_row():
    # AGBoost Table III prints R² with three decimals on every row; LARF's MAE table prints four
    # significant digits, and its Friedman2 row mixes 111.7 with 72.71: the row's rule is 2 decimals
    agboost = row_decimals("agboost:III", ["Airfoil", "Friedman1"], ["agboost", "gbm", "nonparam"], "r2")
    assert agboost == {"Airfoil": 3, "Friedman1": 3}
    models = ["rf", "em-arf", "em-w-arf", "em-larf", "em-w-larf"]
    assert row_decimals("larf:4", ["Boston", "Friedman2", "Diabetes"], models, "mae") == {
        "Boston": 3,
        "Friedman2": 2,
        "Diabetes": 2,
    }


def _block(table: pd.DataFrame, alpha: float = 0.05) -> FriedmanBlock:
    result = friedman_nemenyi(table, alpha=alpha)
    side = RankedSide(table, result, wilcoxon_holm(table, result.mean_ranks, alpha))
    return FriedmanBlock("", "r2", side, side)


def test_notes_state_the_tie_rule_beside_chi2_and_both_post_hoc_tests_at_alpha():
    notes = friedman_notes(_block(three_models(8), alpha=0.1))
    assert notes[0].startswith("ours: χ²") and notes[1].startswith("paper: χ²") and notes[2] == TIE_RULE
    assert "ours and the paper's" in TIE_RULE and "decimals the paper prints" in TIE_RULE
    assert "Nemenyi, α = 0.1" in notes[3]
    assert "Holm-adjusted, α = 0.1): ours b, c | paper b, c" in notes[4]


def test_cd_diagram_draws_the_cd_and_both_sets_of_cliques():
    from matplotlib.colors import to_rgba

    block = _block(three_models(8))
    result = block.ours.friedman
    fig = cd_figure(block.ours, "t")
    ax = fig.axes[0]
    segments = [(tuple(c.get_colors()[0]), s) for c in ax.collections for s in c.get_segments()]
    cd_bars = [s for colour, s in segments if colour == to_rgba("black") and s[0][1] == s[1][1] == CD_BAR_Y]
    assert len(cd_bars) == 1 and cd_bars[0][1][0] - cd_bars[0][0][0] == pytest.approx(result.cd)
    red = [s for colour, s in segments if colour == to_rgba(NEMENYI_COLOUR)]
    blue = [s for colour, s in segments if colour == to_rgba(WILCOXON_COLOUR)]
    assert len(red) == len(result.cliques()) and len(blue) == len(block.ours.pairwise.cliques()) == 1
    assert any(f"CD = {result.cd:.2f} (Nemenyi, α = 0.05)" in t.get_text() for t in ax.texts)


def test_agboost_table3_ties_the_noise_on_our_side_and_leaves_the_paper_side_as_printed():
    # AGBoost's non-param and GBM are the same model on Airfoil (equal up to 1e-16 in the
    # committed store); ranked raw, ours gave χ² = 13.82, with the noise alone tied 14.37; at the
    # paper's three decimals the rows where the two round alike tie too: 15.44. The paper's side is
    # its printed numbers, as scipy ranks them (18.82).
    from pathlib import Path

    from scipy.stats import friedmanchisquare

    from afr_cli.publish.context import ReportContext
    from afr_cli.tables.friedman import friedman_blocks

    results = ReportContext(Path(__file__).resolve().parents[1] / "results").report_frames("agboost")
    (block,) = friedman_blocks(results, "agboost:III")
    ours, paper = block.ours, block.paper
    assert ours.scores.loc["Airfoil", "gbm"] == ours.scores.loc["Airfoil", "nonparam"]
    assert round(ours.friedman.chi2, 2) == 15.44
    assert ours.friedman.chi2 == pytest.approx(friedmanchisquare(*ours.scores.to_numpy().T).statistic, abs=1e-9)
    assert round(paper.friedman.chi2, 2) == 18.82
    assert paper.friedman.chi2 == pytest.approx(friedmanchisquare(*paper.scores.to_numpy().T).statistic, abs=1e-9)
    assert [set(c) for c in ours.pairwise.cliques()] == [{"gbm", "nonparam"}]
