"""`afr table --compare A B --metric all`: R², MAE and RMSE side by side, each with its direction
(higher or lower is better), one comparison (afr_cli/tables/compare.py) per metric."""

from __future__ import annotations

import json
import math

import pandas as pd

from afr_cli.tables.compare import _hier_cell, _p, comparison_dict, render_comparison_lead, render_model_comparison
from afr_cli.tables.compare_answer import answer_sentence, not_applicable
from afr_cli.tables.compare_evidence import direction
from afr_cli.tables.comparison import ModelComparison
from afr_cli.tables.format import CSV_FLOAT, METRIC_NAMES, format_value, grid

ALL_METRICS = ("r2", "mae", "rmse")


def _relative(comparison: ModelComparison, c) -> str:
    """The relative change of B against A over the datasets: the geometric-mean ratio of the
    errors, or '' for R² (already on one scale)."""
    rel = c.intervals.log_ratio if c.intervals.effects is not None else None
    return "" if rel is None else f"{100 * (math.exp(rel.estimate) - 1):+.1f} %"


def render_side_by_side(comparisons: list[ModelComparison]) -> str:
    """One markdown row per (base, metric): the means of A and B over the datasets, B − A, the
    relative change (errors), the t-test p (or why none), the hierarchical probabilities and the
    better/tie/worse count, with the metric's direction."""
    a, b = comparisons[0].a, comparisons[0].b
    rows = []
    bases = [c.base for c in comparisons[0].bases]
    for base in bases:
        for comparison in comparisons:
            c = next((x for x in comparison.bases if x.base == base), None)
            if c is None:
                continue
            m = comparison.metric
            shared = c.per_dataset.dropna()
            p = "n/a (1 dataset)" if not_applicable(c) else _p(c.ttest.p)
            rows.append(
                [
                    base,
                    METRIC_NAMES.get(m, m),
                    direction(m),
                    format_value(shared[a].mean(), m),
                    format_value(shared[b].mean(), m),
                    f"{c.ttest.mean_diff:+.4f}" if m == "r2" else f"{c.ttest.mean_diff:+.4g}",
                    _relative(comparison, c),
                    p,
                    _hier_cell(c),
                    f"{len(c.record.wins)}/{len(c.record.ties)}/{len(c.record.losses)}",
                ]
            )
    headers = [
        "base",
        "metric",
        "direction",
        f"mean {a}",
        f"mean {b}",
        f"{b} − {a}",
        "relative",
        "p (t-test)",
        f"hierarchical P({a}) / P(=) / P({b}), population mean",
        f"{b} better/tie/worse",
    ]
    return grid(headers, rows, "md")


def render_all(comparisons: list[ModelComparison], fmt: str) -> str:
    """The comparison on every metric: md leads with one answer per metric and the side-by-side
    table, then each metric's evidence; json holds each metric's numbers under "metrics"; csv the
    tests of every metric, one row per (base, metric)."""
    if fmt == "json":
        data = {
            "a": comparisons[0].a,
            "b": comparisons[0].b,
            "answers": {c.metric: answer_sentence(c) for c in comparisons},
            "directions": {c.metric: direction(c.metric) for c in comparisons},
            "metrics": {c.metric: comparison_dict(c) for c in comparisons},
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return pd.concat([c.tests_frame() for c in comparisons], ignore_index=True).to_csv(
            index=False, float_format=CSV_FLOAT
        )
    a, b = comparisons[0].a, comparisons[0].b
    lines = [
        f"{METRIC_NAMES.get(c.metric, c.metric)} ({direction(c.metric)}): {answer_sentence(c)}" for c in comparisons
    ]
    parts = [
        "\n".join(lines),
        f"{b} against {a} on every metric, side by side (B − A; relative: the "
        f"geometric-mean ratio of the errors over the datasets)\n\n" + render_side_by_side(comparisons),
    ]
    for c in comparisons:
        parts.append(
            f"## {METRIC_NAMES.get(c.metric, c.metric)}\n\n"
            + render_comparison_lead(c).split("\n\n", 1)[1]
            + "\n"
            + render_model_comparison(c, fmt)
        )
    return "\n\n".join(parts)
