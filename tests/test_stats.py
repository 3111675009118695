"""Demšar paired t-test, Wilcoxon, the recomputation of the papers' printed t-tests, `afr stats`."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from afr_cli.analysis.stats import matches_printed, paired_ttest, wilcoxon_test
from afr_cli.catalogue.printed_tests import RECOMPUTE_COLUMNS, recompute_published_ttests, ttest_sources
from afr_cli.catalogue.published import available_tables, load_published, load_ttests, published_table
from afr_cli.commands.stats import published as _published
from afr_cli.commands.table import table as _table
from afr_cli.errors import AfrInputError

AFR = Path(sys.executable).parent / "afr"


def test_paired_ttest_matches_scipy_ttest_rel():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0.5, 0.1, 11), rng.normal(0.48, 0.1, 11)
    ours = paired_ttest(a, b)
    ref = sps.ttest_rel(a, b)
    assert ours.n == 11
    assert ours.t == pytest.approx(ref.statistic)
    assert ours.p == pytest.approx(ref.pvalue)
    assert ours.mean_diff == pytest.approx(np.mean(a - b))


def test_paired_ttest_by_hand():
    # d = a - b = [1, 0, 2, 3]: mean 1.5, sd sqrt(5/3), se sqrt(5/3)/2, t_{0.975,3} = 3.182446
    result = paired_ttest([1, 2, 3, 4], [0, 2, 1, 1])
    se = math.sqrt(5 / 3) / 2
    assert result.mean_diff == pytest.approx(1.5)
    assert result.t == pytest.approx(1.5 / se)
    assert result.ci_low == pytest.approx(1.5 - 3.182446 * se, abs=1e-5)
    assert result.ci_high == pytest.approx(1.5 + 3.182446 * se, abs=1e-5)
    assert (result.ci_low + result.ci_high) / 2 == pytest.approx(result.mean_diff)


def test_paired_ttest_degenerate_cases():
    same = paired_ttest([0.4, 0.5, 0.6], [0.4, 0.5, 0.6])
    assert (same.t, same.p) == (0.0, 1.0)
    shifted = paired_ttest([0.5, 0.6, 0.7], [0.4, 0.5, 0.6])
    assert math.isnan(shifted.p) and math.isnan(shifted.t)  # one difference, no spread: undefined, never p = 0
    single = paired_ttest([0.5], [0.4])
    assert single.n == 1 and math.isnan(single.p)


def test_wilcoxon_matches_scipy_and_handles_zero_differences():
    a = [0.50, 0.61, 0.72, 0.43, 0.94, 0.35]
    b = [0.40, 0.50, 0.70, 0.45, 0.80, 0.30]
    ref = sps.wilcoxon(np.subtract(a, b))
    assert wilcoxon_test(a, b) == pytest.approx((ref.statistic, ref.pvalue))
    assert wilcoxon_test([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]) == (0.0, 1.0)


@pytest.mark.parametrize(
    "printed, value, expected",
    [
        ("0.0085", 0.0085454, True),
        ("0.00067", 0.000665345, True),
        ("0.100", 0.09988, True),
        ("0.024", 0.0246364, False),
        ("0.00029", 0.007481, False),
        ("0.0219", 0.02187, True),
    ],
)
def test_matches_printed_rounds_to_the_printed_decimals(printed, value, expected):
    assert matches_printed(printed, value) is expected


def test_paper_loader():
    satrf = load_published("satrf")
    assert list(satrf.columns[:8]) == ["paper", "table", "base", "dataset", "model", "metric", "value_str", "value"]
    assert len(satrf) == 638 and len(load_published()) == 638 + 396 + 176 + 54
    assert len(load_ttests()) == 9
    assert available_tables()[:2] == ["satrf:2", "satrf:3"] and "agboost:II" in available_tables()
    cell = published_table("satrf:9").query("base == 'RF' and dataset == 'Diabetes' and model == 'eps-abrf'")
    assert cell["value_str"].item() == "0.424" and cell["value"].item() == 0.424
    assert len(published_table("AGBOOST:ii")) == 88
    with pytest.raises(AfrInputError, match="allowed: satrf:2"):
        published_table("foo:1")


@pytest.fixture(scope="module")
def recomputed():
    return recompute_published_ttests()


def _row(frame, paper, comparison, base):
    rows = frame[(frame["paper"] == paper) & (frame["comparison"] == comparison) & (frame["base"] == base)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_every_printed_ttest_is_recomputed(recomputed):
    assert list(recomputed.columns) == RECOMPUTE_COLUMNS
    tests = load_ttests()
    assert len(recomputed) == len(tests) == len(ttest_sources())
    assert set(zip(recomputed["paper"], recomputed["comparison"], recomputed["base"])) == set(
        zip(tests["paper"], tests["comparison"], tests["base"])
    )


def test_satrf_ttests_reproduce(recomputed):
    rf = _row(recomputed, "satrf", "sat-rf vs eps-abrf", "RF")
    assert rf["table"] == "9"
    assert f"{rf['recomputed_mean']:.4f}" == "0.0085" and f"{rf['recomputed_p']:.3f}" == "0.032"
    assert rf["agrees"]
    assert _row(recomputed, "satrf", "sat-rf vs eps-abrf", "ERT")["agrees"]  # "0219" read as 0.0219


def test_larf_ttests(recomputed):
    ert = _row(recomputed, "larf", "larf vs eps-abrf", "ERT")
    assert ert["published_p"] == "0.00029"
    assert ert["recomputed_p"] == pytest.approx(0.0075, abs=1e-4)
    assert not ert["agrees"]  # known not to reproduce (README, LARF point 9)
    rf = _row(recomputed, "larf", "larf vs eps-abrf", "RF")
    assert rf["table"] == "10" and rf["agrees"]
    assert f"{rf['recomputed_p']:.5f}" == "0.00067"
    table7 = _row(recomputed, "larf", "larf(ERT) vs larf(RF)", "RF/ERT")
    assert table7["table"] == "7" and table7["agrees"]


def test_agboost_ttests(recomputed):
    agboost = recomputed[recomputed["paper"] == "agboost"]
    for _, row in agboost.iterrows():
        assert matches_printed(row["published_p"], row["recomputed_p"])
        assert matches_printed(row["published_ci_low"], row["recomputed_ci_low"])
        assert matches_printed(row["published_ci_high"], row["recomputed_ci_high"])
    # The DT AGBoost − GBM mean recomputes to 0.02464 but is printed 0.024 (README, AGBoost point 3):
    # at the printed precision that is 0.025, so that one test does not fully agree.
    dt_gbm = _row(recomputed, "agboost", "agboost vs gbm", "DT")
    assert dt_gbm["recomputed_mean"] == pytest.approx(0.02464, abs=1e-5) and not dt_gbm["agrees"]
    assert agboost["agrees"].sum() == 3
    assert recomputed["agrees"].sum() == 7


@pytest.mark.slow
def test_cli_stats_csv_and_unknown_paper_table():
    # The two console-script runs go in parallel: each pays the CLI's start-up time.
    stats = subprocess.Popen(
        [str(AFR), "stats", "published", "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    bad = subprocess.Popen(
        [str(AFR), "table", "--paper", "foo:1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    stats_out, stats_err = stats.communicate()
    _, bad_err = bad.communicate()

    assert stats.returncode == 0, stats_err
    lines = stats_out.strip().splitlines()
    assert lines[0] == (
        "paper,table,comparison,base,metric,published_mean,recomputed_mean,published_p,recomputed_p,agrees"
    )
    assert len(lines) == 1 + 9

    assert bad.returncode == 2
    assert len(bad_err.strip().splitlines()) == 1
    assert bad_err.startswith("error: unknown paper table 'foo:1'; allowed: satrf:2")
    assert "Traceback" not in bad_err


def test_stats_published_table_form(capsys):
    _published(fmt="table")
    out = capsys.readouterr().out
    assert "[0.0036, 0.0219]" in out and "NO: p" in out
    assert out.strip().splitlines()[-1] == "7 of 9 published t-tests reproduce to the printed precision"


def test_bad_command_inputs_name_what_is_allowed():
    with pytest.raises(AfrInputError, match="not one of table, csv"):
        _published(fmt="xml")
    with pytest.raises(AfrInputError, match="--results DIR is required"):
        _table(
            results_dirs=None,
            metric=None,
            fmt="md",
            with_std=False,
            paper=None,
            tol=None,
            selection="stored",
            reps=None,
            compare=None,
        )
    with pytest.raises(AfrInputError, match="not one of md, latex, csv"):
        _table(
            results_dirs=None,
            metric=None,
            fmt="pdf",
            with_std=False,
            paper=None,
            tol=None,
            selection="stored",
            reps=None,
            compare=None,
        )


def test_friedman_and_nemenyi_on_demsars_worked_example():
    # Demšar (2006), sec. 3.2.2: four C4.5 variants over 14 data sets, mean ranks 3.143, 2.000,
    # 2.893, 1.964: chi²_F = 9.28, F_F = 3.69, and CD = 2.569 sqrt(4·5 / (6·14)) = 1.25 at 0.05
    from afr_cli.analysis.stats import friedman_from_ranks, nemenyi_cd

    chi2, p, f, p_f = friedman_from_ranks([3.143, 2.000, 2.893, 1.964], 14)
    assert round(chi2, 2) == 9.28 and round(f, 2) == 3.69 and p_f < 0.05
    assert round(nemenyi_cd(4, 14), 2) == 1.25
    assert round(nemenyi_cd(4, 14) / (20 / 84) ** 0.5, 3) == 2.569


def test_friedman_on_a_table_agrees_with_scipy_and_groups_by_the_cd():
    import numpy as np
    from scipy.stats import friedmanchisquare

    from afr_cli.analysis.stats import friedman_nemenyi

    rng = np.random.default_rng(0)
    scores = rng.random((12, 4)) + np.array([0.0, 0.05, 0.6, 0.65])  # c and d clearly better
    table = pd.DataFrame(scores, columns=list("abcd"))
    result = friedman_nemenyi(table)
    assert result.chi2 == pytest.approx(friedmanchisquare(*scores.T).statistic)
    assert result.mean_ranks[2] < 2.0 and result.mean_ranks[0] > 3.0
    assert ("c", "d") in [tuple(sorted(c)) for c in result.cliques()]
    assert not any({"a", "d"} <= set(c) for c in result.cliques())


def test_friedman_corrects_for_ties_as_scipy_does():
    # 6 datasets × 4 models with ties inside rows (two-way and three-way): the uncorrected
    # statistic is lower; the corrected one equals scipy's friedmanchisquare
    from scipy.stats import friedmanchisquare

    from afr_cli.analysis.stats import friedman_from_ranks, friedman_nemenyi, friedman_tie_factor

    scores = np.array(
        [
            [0.5, 0.5, 0.7, 0.9],
            [0.4, 0.6, 0.6, 0.6],
            [0.1, 0.2, 0.3, 0.4],
            [0.3, 0.3, 0.8, 0.8],
            [0.2, 0.5, 0.6, 0.7],
            [0.6, 0.4, 0.9, 0.9],
        ]
    )
    result = friedman_nemenyi(pd.DataFrame(scores, columns=list("abcd")))
    expected = friedmanchisquare(*scores.T)
    assert result.chi2 == pytest.approx(expected.statistic, abs=1e-9)
    assert result.p == pytest.approx(expected.pvalue, abs=1e-12)
    assert friedman_tie_factor(scores) < 1.0
    uncorrected = friedman_from_ranks(result.mean_ranks, result.n)[0]
    assert uncorrected < result.chi2
    # Iman-Davenport from the corrected chi²
    n, k = scores.shape
    assert result.iman_davenport_f == pytest.approx((n - 1) * result.chi2 / (n * (k - 1) - result.chi2))
    # every row tied: no evidence, no division by zero
    flat = friedman_nemenyi(pd.DataFrame(np.ones((3, 3)), columns=list("abc")))
    assert (flat.chi2, flat.p) == (0.0, 1.0)


def _published_rank_tables():
    """Every published table's (spec, base, metric) datasets × models blocks with >= 3 models."""
    for spec in available_tables():
        table = published_table(spec)
        for (base, metric), part in table.groupby(["base", "metric"], sort=False):
            cell = [
                c for c in part.columns if c not in ("paper", "table", "base", "metric", "model", "value_str", "value")
            ]  # dataset and any axes
            wide = part.pivot_table(index=cell, columns="model", values="value").dropna()
            assert len(wide) * wide.shape[1] <= len(part)  # one value per cell and model
            if wide.shape[1] >= 3 and wide.shape[0] >= 2:
                yield spec, base, metric, wide


def test_friedman_equals_scipy_on_every_published_table():
    from scipy.stats import friedmanchisquare

    from afr_cli.analysis.stats import friedman_nemenyi, friedman_tie_factor

    blocks = list(_published_rank_tables())
    assert len({spec for spec, *_ in blocks}) >= 14
    tied = 0
    for spec, base, metric, wide in blocks:
        scores = wide.to_numpy(dtype=float)
        result = friedman_nemenyi(wide, higher_is_better=metric == "r2")
        assert abs(result.chi2 - friedmanchisquare(*scores.T).statistic) <= 1e-9, (spec, base, metric)
        tied += friedman_tie_factor(scores) < 1.0
    assert tied >= 14  # the printed precision ties cells in most tables


def test_larf_table9_friedman_verdict_crosses_005_with_the_tie_correction():
    # the tie correction decides it: without it p = 0.143, with it p = 0.042 on the paper's own Table 9 (ERT)
    from afr_cli.analysis.stats import friedman_from_ranks, friedman_nemenyi

    table = published_table("larf:9")
    wide = table[table["metric"] == "r2"].pivot(index="dataset", columns="model", values="value").dropna()
    result = friedman_nemenyi(wide)
    assert round(friedman_from_ranks(result.mean_ranks, result.n)[1], 3) == 0.143
    assert round(result.p, 3) == 0.042
