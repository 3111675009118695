"""The t-tests printed in the papers' texts, recomputed from the published tables they are about:
a check of the papers' own arithmetic, kept apart from the pure statistics in afr_cli/analysis/stats.py
because it reads the catalogue (which test is on which columns of which table).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from afr_cli.analysis.stats import matches_printed, paired_ttest
from afr_cli.catalogue.published import load_ttests, published_table


@dataclass(frozen=True)
class TTestSource:
    """Where a printed t-test's numbers come from: a published table, and its A and B columns
    as (base, model); the test is on A − B of the R² cells of that table."""

    table: str
    a: tuple[str, str]
    b: tuple[str, str]


def ttest_sources() -> dict[tuple[str, str, str], TTestSource]:
    """ttests.csv row (paper, comparison, base) -> the table columns the test was computed on,
    as each paper's data file (afr_cli/papers/<paper>/paper.yaml, ``ttests``) says."""
    from afr_cli.catalogue.knowledge import papers  # here: the catalogue is read only when asked

    return {
        (p.id, t["comparison"], t["base"]): TTestSource(str(t["table"]), tuple(t["a"]), tuple(t["b"]))
        for p in papers()
        for t in p.ttests
    }


RECOMPUTE_COLUMNS = [
    "paper",
    "table",
    "comparison",
    "base",
    "metric",
    "published_mean",
    "recomputed_mean",
    "published_p",
    "recomputed_p",
    "published_ci_low",
    "published_ci_high",
    "recomputed_ci_low",
    "recomputed_ci_high",
    "agrees",
]

# Printed quantity -> recomputed column it is checked against.
CHECKED_QUANTITIES = {
    "published_mean": "recomputed_mean",
    "published_p": "recomputed_p",
    "published_ci_low": "recomputed_ci_low",
    "published_ci_high": "recomputed_ci_high",
}


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
    sources = ttest_sources()
    for test in load_ttests().to_dict("records"):
        key = (test["paper"], test["comparison"], test["base"])
        source = sources[key]
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
