"""Statistics the papers use to compare models over datasets, and a check of their printed tests.

Demšar (2006) paired t-test, as in SAT-RF, LARF and AGBoost: per dataset d_i = A_i − B_i
(mean R² of two models), t = mean(d) / (sd(d)/√N) with N − 1 degrees of freedom, two-sided p,
95 % CI mean ± t_{0.975,N−1}·sd/√N. The Wilcoxon signed-rank test is given beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd
from scipy import stats as sps

from afr_cli.paper import load_ttests, published_table


@dataclass(frozen=True)
class TTestResult:
    """Paired t-test of a − b over n datasets: mean difference, t, two-sided p and 95 % CI."""

    n: int
    mean_diff: float
    t: float
    p: float
    ci_low: float
    ci_high: float


def paired_ttest(a, b) -> TTestResult:
    """Demšar's paired t-test of a − b (same-length sequences, one value per dataset).

    With sd(d) = 0 the test degenerates: t = 0, p = 1 if the mean is 0, else t = ±inf, p = 0.
    With n < 2 there is no variance estimate: t, p and the CI are NaN.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = int(d.size)
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return TTestResult(n, mean, math.nan, math.nan, math.nan, math.nan)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        t, p = (0.0, 1.0) if mean == 0.0 else (math.copysign(math.inf, mean), 0.0)
    else:
        t = mean / se
        p = float(2.0 * sps.t.sf(abs(t), n - 1))
    half = float(sps.t.ppf(0.975, n - 1)) * se
    return TTestResult(n, mean, t, p, mean - half, mean + half)


def wilcoxon_test(a, b) -> tuple[float, float]:
    """Wilcoxon signed-rank test of a − b: (statistic, two-sided p).

    scipy cannot rank differences that are all zero; the two samples are then identical,
    so there is no evidence of a difference and we return (0.0, 1.0). NaN for n = 0.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return math.nan, math.nan
    if np.all(d == 0.0):
        return 0.0, 1.0
    res = sps.wilcoxon(d)
    return float(res.statistic), float(res.pvalue)


@dataclass(frozen=True)
class TTestSource:
    """Where a printed t-test's numbers come from: a published table, and its A and B columns
    as (base, model); the test is on A − B of the R² cells of that table."""

    table: str
    a: tuple[str, str]
    b: tuple[str, str]


# ttests.csv row (paper, comparison, base) -> the table columns the test was computed on,
# read from each row's source_text and the papers' results sections:
# - SAT-RF: "the t statistics of the difference" of Table 9's SAT-RF and e-ABRF columns, per base.
# - LARF: Table 10 (best proposed model "LARF" vs eps-ABRF, per base), and the Table 7 test of
#   the best ERT-based against the best RF-based results.
# - AGBoost: AGBoost against GBM / Non-param on R², Table II (DT base) and Table III (ERT base).
TTEST_SOURCES: dict[tuple[str, str, str], TTestSource] = {
    ("satrf", "sat-rf vs eps-abrf", "RF"): TTestSource("9", ("RF", "sat-rf"), ("RF", "eps-abrf")),
    ("satrf", "sat-rf vs eps-abrf", "ERT"): TTestSource("9", ("ERT", "sat-rf"), ("ERT", "eps-abrf")),
    ("larf", "larf(ERT) vs larf(RF)", "RF/ERT"): TTestSource("7", ("ERT", "larf"), ("RF", "larf")),
    ("larf", "larf vs eps-abrf", "RF"): TTestSource("10", ("RF", "larf"), ("RF", "eps-abrf")),
    ("larf", "larf vs eps-abrf", "ERT"): TTestSource("10", ("ERT", "larf"), ("ERT", "eps-abrf")),
    ("agboost", "agboost vs gbm", "DT"): TTestSource("II", ("DT", "agboost"), ("DT", "gbm")),
    ("agboost", "agboost vs nonparam", "DT"): TTestSource("II", ("DT", "agboost"), ("DT", "nonparam")),
    ("agboost", "agboost vs gbm", "ERT"): TTestSource("III", ("ERT", "agboost"), ("ERT", "gbm")),
    ("agboost", "agboost vs nonparam", "ERT"): TTestSource("III", ("ERT", "agboost"), ("ERT", "nonparam")),
}

RECOMPUTE_COLUMNS = [
    "paper", "table", "comparison", "base", "metric",
    "published_mean", "recomputed_mean", "published_p", "recomputed_p",
    "published_ci_low", "published_ci_high", "recomputed_ci_low", "recomputed_ci_high",
    "agrees",
]

# Printed quantity -> recomputed column it is checked against.
CHECKED_QUANTITIES = {
    "published_mean": "recomputed_mean",
    "published_p": "recomputed_p",
    "published_ci_low": "recomputed_ci_low",
    "published_ci_high": "recomputed_ci_high",
}


def matches_printed(printed: str, value: float) -> bool:
    """True if ``value`` rounded (half up) to the printed number of decimals gives ``printed``."""
    shown = Decimal(printed)
    decimals = -shown.as_tuple().exponent
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return rounded == shown


def disagreeing_quantities(row: pd.Series) -> list[str]:
    """Names (mean, p, ci_low, ci_high) of the printed quantities a recomputed row fails to match."""
    return [
        printed.removeprefix("published_")
        for printed, recomputed in CHECKED_QUANTITIES.items()
        if row[printed] != "" and not matches_printed(row[printed], row[recomputed])
    ]


def _column(table: pd.DataFrame, base: str, model: str, metric: str) -> pd.Series:
    cells = table[(table["base"] == base) & (table["model"] == model) & (table["metric"] == metric)]
    return cells.set_index("dataset")["value"]


def recompute_published_ttests() -> pd.DataFrame:
    """Every t-test printed in the papers, recomputed from the published table it is about.

    Published columns are the printed strings ('' where the paper gives none); ``agrees`` is
    True when every printed quantity equals the recomputed one at the printed precision.
    """
    rows = []
    for test in load_ttests().to_dict("records"):
        key = (test["paper"], test["comparison"], test["base"])
        source = TTEST_SOURCES[key]
        table = published_table(f"{test['paper']}:{source.table}")
        a = _column(table, *source.a, test["metric"])
        b = _column(table, *source.b, test["metric"])
        a, b = a.align(b, join="inner")
        result = paired_ttest(a.to_numpy(), b.to_numpy())
        row = {
            "paper": test["paper"],
            "table": source.table,
            "comparison": test["comparison"],
            "base": test["base"],
            "metric": test["metric"],
            "published_mean": test["mean_diff"],
            "recomputed_mean": result.mean_diff,
            "published_p": test["p_value"],
            "recomputed_p": result.p,
            "published_ci_low": test["ci_low"],
            "published_ci_high": test["ci_high"],
            "recomputed_ci_low": result.ci_low,
            "recomputed_ci_high": result.ci_high,
        }
        row["agrees"] = not disagreeing_quantities(pd.Series(row))
        rows.append(row)
    return pd.DataFrame(rows, columns=RECOMPUTE_COLUMNS)
