"""Ours beside a published table: cell by cell (ours, paper, Δ, agreement), the agreement count
per column, and the count of datasets each column is best on."""

from __future__ import annotations

import math

import pandas as pd

from afr_cli.catalogue.knowledge import paper_reps, param_rows, table_info, unit_axes
from afr_cli.catalogue.published import published_table
from afr_cli.tables.agreement import RULE, as_printed, check_tolerance, param_agrees, tolerance_legend, within_tolerance
from afr_cli.tables.format import (
    CSV_FLOAT,
    METRIC_NAMES,
    METRICS,
    check_format,
    column_decimals,
    decimals,
    document,
    format_as_printed,
    format_param,
    format_value,
    grid,
    sorted_frame,
)
from afr_cli.tables.summary import cell_lookup, param_modes

COMPARISON_COLUMNS = ["dataset", "model", "metric", "ours", "published", "diff", "within_tol"]


def name_plain_forests(results: pd.DataFrame) -> pd.DataFrame:
    """Rows of the generic plain-forest model ``forest`` renamed after their base kind (rf, ert),
    as the papers name their baseline columns; a config with several bases can then use one id."""
    is_forest = results["model"] == "forest"
    if not is_forest.any():
        return results
    kinds = results["base"].str.split("@").str[0].str.lower()
    return results.assign(model=results["model"].where(~is_forest, kinds))


def our_key(base: str, model: str) -> tuple[str, str]:
    """Published (base, model) -> ours; ``rf@400`` on base RF is our base ``RF@400``, model ``rf``."""
    name, _, trees = model.partition("@")
    return (f"{base}@{trees}", name) if trees else (base, model)


def model_aliases(spec: str) -> dict[str, str]:
    """Published model ids that stand for a different model of ours in this table (paper data)."""
    info = table_info(spec)
    return dict(info.aliases) if info else {}


def _labels(published: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Dataset and model labels of published cells: unit axes (a training fraction, a noise level)
    go into the dataset label, the base into the model label when the table has several."""
    multi_base = published["base"].nunique() > 1
    extras = [k for k in unit_axes() if k in published.columns]
    datasets, models = [], []
    for cell in published.to_dict("records"):
        suffix = ", ".join(f"{k}={cell[k]:g}" for k in extras)
        datasets.append(f"{cell['dataset']} [{suffix}]" if extras else cell["dataset"])
        models.append(f"{cell['model']} ({cell['base']})" if multi_base else cell["model"])
    return datasets, models


def printed_cells(spec: str) -> dict[tuple[str, str, str], str]:
    """(dataset label, model label, metric) -> the printed string of every cell of a table."""
    published = published_table(spec)
    return dict(zip(zip(*_labels(published), published["metric"]), published["value_str"]))


def metric_decimals(printed: dict[tuple[str, str, str], str]) -> dict[str, int | None]:
    """Per metric of a table (its ``printed_cells``), the decimals of the paper's columns: the
    most any printed cell of that metric has (``column_decimals``)."""
    by_metric: dict[str, list[str]] = {}
    for (_, _, metric), text in printed.items():
        by_metric.setdefault(metric, []).append(text)
    return {metric: column_decimals(texts) for metric, texts in by_metric.items()}


def paper_comparison(results: pd.DataFrame, spec: str, tol: float | None = None) -> pd.DataFrame:
    """Every cell of a published table (``paper:table``) beside our value for it.

    ours is our mean over reps (metric rows) or the most often selected value (parameter rows
    such as eps_opt); diff = ours − published; within_tol by the agreement rule
    (afr_cli/tables/agreement.py). Without a value of ours, ours/diff are NaN and within_tol is
    None. Tables with several bases name the model ``model (BASE)``.
    """
    if tol is not None:
        check_tolerance(tol)
    published = sorted_frame(published_table(spec), ["dataset"])
    results = name_plain_forests(results)
    aliases = model_aliases(spec)
    rows_of_params = param_rows()
    places = metric_decimals(printed_cells(spec))
    dataset_labels, model_labels = _labels(published)
    scales = unit_axes()
    extras = [k for k in scales if k in published.columns]
    matched = [k for k in extras if k in results.columns]
    keys = ["dataset", "base", "model", *matched]
    melted = results.melt(
        id_vars=keys, value_vars=[m for m in METRICS if m in results.columns], var_name="metric", value_name="value"
    )
    for axis in matched:
        melted[axis] = melted[axis].astype(float).round(10)
    means = melted.groupby([*keys, "metric"])["value"].mean().to_dict()
    modes = cell_lookup(param_modes(results, tuple(rows_of_params.values())), "value")
    rows = []
    for cell, dataset_label, model_label in zip(published.to_dict("records"), dataset_labels, model_labels):
        base, model = our_key(cell["base"], aliases.get(cell["model"], cell["model"]))
        extra_key = tuple(round(float(cell[k]) * scales[k], 10) for k in matched)
        is_param = cell["metric"] in rows_of_params
        if len(matched) < len(extras):
            ours = math.nan
        elif is_param:
            ours = modes.get((cell["dataset"], base, model, rows_of_params[cell["metric"]]), math.nan)
        else:
            ours = means.get((cell["dataset"], base, model, *extra_key, cell["metric"]), math.nan)
        ours = float(ours)
        diff = ours - cell["value"]
        rows.append(
            {
                "dataset": dataset_label,
                "model": model_label,
                "metric": cell["metric"],
                "ours": ours,
                "published": cell["value"],
                "diff": diff,
                "within_tol": None
                if math.isnan(ours)
                else param_agrees(ours, cell["value_str"], places.get(cell["metric"]))
                if is_param
                else within_tolerance(cell["metric"], diff, cell["value"], tol),
            }
        )
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    frame["within_tol"] = frame["within_tol"].astype(object)
    return frame


def render_paper_comparison(
    comparison: pd.DataFrame, spec: str, fmt: str = "md", tol: float | None = None, note: str | None = None
) -> str:
    """csv: the 7 comparison columns; md/latex: one wide table per metric, datasets as rows and
    'ours | paper | Δ' per model, out-of-tolerance Δ marked with '*'."""
    check_format(fmt)
    if fmt == "csv":
        return comparison.to_csv(index=False, float_format=CSV_FLOAT)
    printed = printed_cells(spec)
    metrics = sorted(pd.unique(comparison["metric"]), key=lambda m: METRICS.index(m) if m in METRICS else len(METRICS))
    parts = []
    for metric in metrics:
        part = comparison[comparison["metric"] == metric]
        models = list(pd.unique(part["model"]))
        cells = {(r["dataset"], r["model"]): r for r in part.to_dict("records")}
        places = {
            model: column_decimals(printed.get((dataset, model, metric), "") for dataset in pd.unique(part["dataset"]))
            for model in models
        }
        rows = []
        for dataset in pd.unique(part["dataset"]):
            row = [dataset]
            for model in models:
                row += _comparison_cells(
                    cells.get((dataset, model)), printed.get((dataset, model, metric), ""), places[model]
                )
            rows.append(row)
        headers = ["dataset"] + [f"{m} {what}" for m in models for what in ("ours", "paper", "Δ")]
        title = f"{spec}, {METRIC_NAMES.get(metric, metric)}: ours | paper | Δ"
        notes = [tolerance_legend(tol)] + ([note] if note else [])
        parts.append(document(title, grid(headers, rows, fmt), notes, fmt))
        agreement = agreement_summary(part, printed)
        if len(agreement):
            parts.append(
                document(
                    f"{spec}, {METRIC_NAMES.get(metric, metric)}: agreement per column",
                    grid(list(agreement.columns), agreement.astype(str).values.tolist(), fmt),
                    [AGREEMENT_LEGEND],
                    fmt,
                )
            )
        best = best_counts(part)
        if len(best):
            parts.append(
                document(
                    f"{spec}, {METRIC_NAMES.get(metric, metric)}: best model per dataset",
                    grid(list(best.columns), best.astype(str).values.tolist(), fmt),
                    [BEST_LEGEND],
                    fmt,
                )
            )
    return "\n".join(parts)


BEST_LEGEND = (
    "on how many datasets each column is the best of its base's columns (highest R², lowest "
    "MAE/RMSE) at the printed precision, in the paper and in ours; a tie counts for every "
    "model in it, and only datasets where every column has a value of ours are counted"
)


def base_group(model_label: str) -> str:
    """'sat-rf-y (ERT)' -> 'ERT'; a single-base table's labels all fall in one group ''."""
    head, sep, tail = model_label.rpartition(" (")
    return tail.rstrip(")") if sep and tail.endswith(")") else ""


def best_counts(part: pd.DataFrame) -> pd.DataFrame:
    """Per model column of one metric: on how many datasets it is the best of its base's columns,
    in the paper and in ours (ties count for each tied model). The papers' claims "X outperforms
    the other models on most datasets" are read off this. Empty for parameter rows or one column."""
    metric = part["metric"].iloc[0] if len(part) else None
    if metric is None or metric in param_rows():
        return pd.DataFrame(columns=["model", "best (paper)", "best (ours)"])
    better = max if metric == "r2" else min
    part = part.assign(group=part["model"].map(base_group))
    counts = {model: [0, 0] for model in pd.unique(part["model"])}
    for _, cells in part.groupby(["group", "dataset"], sort=False):
        if len(cells) < 2 or cells["ours"].isna().any():
            continue
        for side, values in enumerate(
            (cells["published"], cells["ours"].map(lambda v: float(format_value(v, metric))))
        ):
            top = better(values)
            for model in cells.loc[values == top, "model"]:
                counts[model][side] += 1
    if all(len(g) < 2 for g in part.groupby("group")["model"].unique()):
        return pd.DataFrame(columns=["model", "best (paper)", "best (ours)"])
    return pd.DataFrame([[m, p, o] for m, (p, o) in counts.items()], columns=["model", "best (paper)", "best (ours)"])


AGREEMENT_LEGEND = f"cells: published cells with a value of ours; {RULE}; mean Δ: ours − paper"


def agreement_summary(part: pd.DataFrame, printed: dict) -> pd.DataFrame:
    """Per model column of one metric: how many cells we have, how many agree as printed and how
    many within tolerance (the agreement rule), and the mean difference. A parameter row has no
    tolerance: its cells agree as printed exactly when they count within tolerance
    (``param_agrees`` at the paper column's decimals)."""
    rows = []
    is_param = len(part) > 0 and part["metric"].iloc[0] in param_rows()
    for model, cells in part.groupby("model", sort=False):
        cells = cells[cells["ours"].notna()]
        if not len(cells):
            continue
        same = (
            int(cells["within_tol"].astype(bool).sum())
            if is_param
            else sum(
                as_printed(c["ours"], printed.get((c["dataset"], model, c["metric"]), ""))
                for c in cells.to_dict("records")
            )
        )
        rows.append(
            {
                "model": model,
                "cells": len(cells),
                "as printed": same,
                "within tol": int(cells["within_tol"].astype(bool).sum()),
                "mean Δ": f"{cells['diff'].mean():+.4f}",
            }
        )
    return pd.DataFrame(rows, columns=["model", "cells", "as printed", "within tol", "mean Δ"])


def _comparison_cells(cell: dict | None, published: str, places: int | None) -> list[str]:
    """ours | paper (as printed) | Δ, with '*' on a Δ outside tolerance; ours and Δ at the
    decimals of the paper's column (``places``), so a column reads at one precision."""
    if cell is None:
        return ["", "", ""]
    metric = cell["metric"]
    is_param = metric in param_rows()
    if math.isnan(cell["ours"]):
        return ["n/a", published, ""]
    ours = format_as_printed(
        cell["ours"],
        published,
        format_param(cell["ours"]) if is_param else format_value(cell["ours"], metric),
        param=is_param,
        places=places,
    )
    places = decimals(cell["ours"], metric) if places is None else places
    diff = f"{cell['diff']:+.{places}f}"
    diff = diff[1:] if float(diff) == 0 else diff  # '0.000', not '+0.000' or '-0.000'
    return [ours, published, diff + ("" if cell["within_tol"] else "*")]


def repetitions_note(
    results: pd.DataFrame,
    reps: int | None,
    pointer: bool = True,
    published_reps: int = 10,
    stated_reps: int | None = None,
) -> str:
    """Which repetitions a table averages and, for a paper comparison over more than the papers'
    count (``pointer``), where their splits are; ``stated_reps``: the count the paper's text
    states when it differs from the protocol identified from its numbers (``published_reps``)."""
    count = int(results["rep"].max()) + 1
    per_cell = results.groupby(["dataset", "base"])["rep"].nunique()
    used = (
        f"Repetitions 0-{count - 1} of each dataset ({count})"
        if per_cell.min() == count
        else f"Uneven: {per_cell.min()} to {per_cell.max()} repetitions per dataset and base"
    )
    if not pointer or reps is not None or count <= published_reps:
        return used + "."
    if stated_reps and stated_reps != published_reps:
        return (
            f"{used}; the paper states {stated_reps} repetitions; the protocol identified from the papers' "
            f"numbers is {published_reps} splits, our repetitions 0-{published_reps - 1} under rep-index "
            f"seeding: --reps {published_reps} compares on those (inferred)."
        )
    return (
        f"{used}; the papers' cells are means over their "
        f"{published_reps} splits, which are our repetitions 0-{published_reps - 1} under rep-index seeding: "
        f"--reps {published_reps} compares on those."
    )


def published_reps_of(spec: str) -> int:
    """How many repetitions the published means of a ``paper:table`` are over (paper data)."""
    return paper_reps(spec)
