"""Our results per dataset and model: the long summary (mean, std, reps) and the papers' wide
layout (datasets as rows, one column per model, then the selected hyperparameters)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pandas as pd

from afr_cli.catalogue.knowledge import unit_axes
from afr_cli.store import varying_axes
from afr_cli.tables.format import (
    CSV_FLOAT,
    METRIC_NAMES,
    METRICS,
    base_key,
    bold,
    check_format,
    dataset_key,
    decimals,
    document,
    format_param,
    format_value,
    grid,
    is_missing,
    model_key,
    sorted_frame,
    tex,
)
from afr_cli.tables.selection import selection_note

# The key the protocol adds to a best_of composite's params: which component won; not a hyperparameter.
COMPOSITE_KEY = "component"


def with_axes_in_dataset(results: pd.DataFrame) -> pd.DataFrame:
    """The dataset column extended by the unit axes' values ('Boston [train_fraction=15, ...]'),
    so the wide tables keep one row per (dataset, axes) cell. An axis a paper's table prints on
    another scale is labelled as the paper prints it (a training fraction in %, ``unit_axes``), so
    our rows read as the published cells and the claims do."""
    axes = varying_axes(results)
    if not axes:
        return results
    scales = unit_axes()
    labels = [
        f"{d} [{', '.join(f'{a}={round(v / scales.get(a, 1), 10):g}' for a, v in zip(axes, vals))}]"
        for d, *vals in results[["dataset", *axes]].itertuples(index=False)
    ]
    return results.drop(columns=axes).assign(dataset=labels)


def family_param_order() -> tuple[str, ...]:
    """Every registered family's hyperparameter names, in registration order (cached: importing
    the families costs seconds; afr_cli/tables/param_order.py)."""
    from afr_cli.tables.param_order import family_param_order as registered_order

    return registered_order()


def selected_params(results: pd.DataFrame) -> tuple[str, ...]:
    """The hyperparameters the results record a selected value of (the families' own ``params``),
    in the families' order; names no registered family has (a family of one's own) come last."""
    names = {k for p in results["params"] if isinstance(p, dict) for k in p if k != COMPOSITE_KEY}
    order = family_param_order()
    return tuple(sorted(names, key=lambda n: (order.index(n), "") if n in order else (len(order), n)))


def summary_long(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1) and number of reps per dataset, base, model (unit axes) and metric."""
    metrics = [m for m in METRICS if m in results.columns]
    keys = ["dataset", "base", "model", *varying_axes(results)]
    long = results.melt(id_vars=keys, value_vars=metrics, var_name="metric", value_name="value")
    grouped = long.groupby([*keys, "metric"], sort=False)["value"]
    out = grouped.agg(mean="mean", std="std", n_reps="count").reset_index()
    return sorted_frame(out, [*keys, "metric"])


def mode_value(values: list) -> object:
    """The value chosen most often; ties go to the smallest."""
    counts = Counter(values)
    top = max(counts.values())
    return min((v for v, c in counts.items() if c == top), key=lambda v: (str(type(v)), v))


def param_modes(results: pd.DataFrame, params: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Per dataset, base and model: the most often selected value of each hyperparameter."""
    params = selected_params(results) if params is None else params
    rows = []
    for (dataset, base, model), group in results.groupby(["dataset", "base", "model"], sort=False):
        chosen = [p for p in group["params"] if isinstance(p, dict)]
        for param in params:
            values = [p[param] for p in chosen if p.get(param) is not None]
            if values:
                rows.append(
                    {"dataset": dataset, "base": base, "model": model, "param": param, "value": mode_value(values)}
                )
    return pd.DataFrame(rows, columns=["dataset", "base", "model", "param", "value"])


@dataclass(frozen=True)
class Column:
    """One column of a wide summary: a model's metric (param None) or its selected param."""

    label: str
    base: str
    model: str
    param: str | None


def _varying_params(results: pd.DataFrame, params) -> set[tuple[str, str, str]]:
    """(base, model, param) whose selected value differs somewhere in the results: the others
    were fixed (or never moved) and get no ``_opt`` column."""
    out = set()
    for (base, model), group in results.groupby(["base", "model"], sort=False):
        chosen = [p for p in group["params"] if isinstance(p, dict)]
        for param in params:
            if len({p[param] for p in chosen if p.get(param) is not None}) > 1:
                out.add((base, model, param))
    return out


def wide_columns(results: pd.DataFrame, params) -> list[Column]:
    """Columns grouped by base: the models' metric columns, then their selected parameters
    (only those whose selected value varies: a fixed value is not a choice worth a column)."""
    varying = _varying_params(results, params)
    pairs = results[["base", "model"]].drop_duplicates()
    multi_base = pairs["base"].nunique() > 1
    columns = []
    for base in sorted(pairs["base"].unique(), key=base_key):
        models = sorted(pairs.loc[pairs["base"] == base, "model"], key=model_key)
        columns += [Column(f"{m} ({base})" if multi_base else m, base, m, None) for m in models]
        for param in params:
            for m in models:
                if (base, m, param) in varying:
                    label = f"{param}_opt ({m}, {base})" if multi_base else f"{param}_opt ({m})"
                    columns.append(Column(label, base, m, param))
    return columns


def cell_lookup(frame: pd.DataFrame, value: str) -> dict:
    """``value`` keyed by the frame's (dataset, base, model[, param]) tuples."""
    keys = [c for c in ("dataset", "base", "model", "param") if c in frame.columns]
    return {tuple(k): v for k, v in zip(frame[keys].itertuples(index=False), frame[value])}


def ordered_datasets(datasets, order: tuple[str, ...] | None = None) -> list[str]:
    """``datasets`` in ``order`` (a config's, as its store records it) where it names them, a
    label with unit axes ('Boston [train_fraction=15]') at its dataset's place; the others after,
    in the registry's order."""
    if not order:
        return sorted(datasets, key=dataset_key)
    place = {name: i for i, name in enumerate(order)}

    def key(label: str) -> tuple:
        name = label.split(" [", 1)[0]
        return (0, place[name], dataset_key(label)) if name in place else (1, 0, dataset_key(label))

    return sorted(datasets, key=key)


def summary_wide(
    results: pd.DataFrame,
    metric: str,
    with_std: bool = False,
    params: tuple[str, ...] | None = None,
    dataset_order: tuple[str, ...] | None = None,
) -> pd.DataFrame:
    """Datasets as rows (in ``dataset_order`` where given, see :func:`ordered_datasets`), one
    column per model (grouped by base), then ``<param>_opt (<model>)`` columns with the mode of
    the selected values. Cells are mean floats, or 'mean ± std' strings."""
    results = with_axes_in_dataset(results)
    params = selected_params(results) if params is None else params
    long = summary_long(results)
    long = long[long["metric"] == metric]
    means, stds = cell_lookup(long, "mean"), cell_lookup(long, "std")
    chosen = cell_lookup(param_modes(results, params), "value")
    datasets = ordered_datasets(results["dataset"].unique(), dataset_order)
    out = pd.DataFrame({"dataset": datasets})
    for col in wide_columns(results, params):
        if col.param is not None:
            out[col.label] = [chosen.get((d, col.base, col.model, col.param)) for d in datasets]
        elif with_std:
            out[col.label] = [
                _mean_std(means.get((d, col.base, col.model)), stds.get((d, col.base, col.model)), metric)
                for d in datasets
            ]
        else:
            out[col.label] = [means.get((d, col.base, col.model), math.nan) for d in datasets]
    return out


def _mean_std(mean, std, metric: str) -> str:
    if is_missing(mean):
        return ""
    if is_missing(std):
        return format_value(mean, metric)
    return f"{format_value(mean, metric)} ± {std:.{decimals(mean, metric)}f}"


def render_summary(
    results: pd.DataFrame,
    metric: str | None = "r2",
    fmt: str = "md",
    with_std: bool = False,
    params: tuple[str, ...] | None = None,
    dataset_order: tuple[str, ...] | None = None,
    width: int | None = None,
) -> str:
    """The summary table: csv is the long form (all metrics when ``metric`` is None); md/latex
    the wide form of one metric (R² when None) with the best model per row and base in bold.
    Datasets come in ``dataset_order`` where given; with ``width``, an md table wider than that
    many characters is cut into blocks of columns, each under the dataset column, that fit."""
    check_format(fmt)
    if fmt == "csv":
        long = summary_long(results)
        if metric is not None:
            long = long[long["metric"] == metric]
        return long.to_csv(index=False, float_format=CSV_FLOAT)
    metric = metric or "r2"
    params = selected_params(results) if params is None else params
    numeric = summary_wide(results, metric, with_std=False, params=params, dataset_order=dataset_order)
    shown = (  # one build without --std
        summary_wide(results, metric, with_std=True, params=params, dataset_order=dataset_order)
        if with_std
        else numeric
    )
    columns = wide_columns(with_axes_in_dataset(results), params)
    rows = []
    for i in range(len(shown)):
        cells = [tex(shown["dataset"][i]) if fmt == "latex" else shown["dataset"][i]]
        best = _best_per_base(numeric.iloc[i], columns, metric)
        for col in columns:
            value = shown[col.label][i]
            text = (
                format_param(value) if col.param else (value if isinstance(value, str) else format_value(value, metric))
            )
            text = tex(text) if fmt == "latex" else text
            is_best = col.param is None and format_value(numeric[col.label][i], metric) == best.get(col.base)
            cells.append(bold(text, fmt) if is_best and text else text)
        rows.append(cells)
    headers = ["dataset"] + [c.label for c in columns]
    if fmt == "latex":
        headers = [tex(h) for h in headers]
    long = summary_long(results)
    n_reps = long.loc[long["metric"] == metric, "n_reps"]  # the shown metric's: an undefined R² is not a repetition
    reps = (
        f"{n_reps.min()} reps"
        if n_reps.min() == n_reps.max()
        else f"{n_reps.min()}–{n_reps.max()} reps (datasets or models hold different counts)"
    )
    title = (
        f"{METRIC_NAMES.get(metric, metric)}: mean{' ± std' if with_std else ''} over {reps};"
        f" best per dataset and base in bold"
    )
    note = selection_note(results)
    body = grid(headers, rows, fmt, escaped=True)
    if fmt == "md" and width is not None and _widest(body) > width:
        body = "\n\n".join(_blocks(headers, rows, width))
    return document(title, body, [note] if note else [], fmt)


def _widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def _blocks(headers: list[str], rows: list[list[str]], width: int) -> list[str]:
    """The md table cut into blocks of consecutive columns, each led by the dataset column and
    as wide as fits in ``width`` (a column wider on its own gets a block of its own), each block
    captioned with the columns it holds."""
    spans, start = [], 1
    while start < len(headers):
        end = start + 1
        while end < len(headers) and _widest(_part(headers, rows, start, end + 1)) <= width:
            end += 1
        spans.append((start, end))
        start = end
    total = len(headers) - 1
    return [
        f"columns {a}–{b - 1} of {total}:\n\n{_part(headers, rows, a, b)}"
        if b - a > 1
        else f"column {a} of {total}:\n\n{_part(headers, rows, a, b)}"
        for a, b in spans
    ]


def _part(headers: list[str], rows: list[list[str]], start: int, end: int) -> str:
    return grid([headers[0], *headers[start:end]], [[row[0], *row[start:end]] for row in rows], "md", escaped=True)


def _best_per_base(row: pd.Series, columns: list[Column], metric: str) -> dict[str, str]:
    """The formatted best mean per base in one row (max for R², min for errors)."""
    best: dict[str, float] = {}
    for col in columns:
        value = row[col.label]
        if col.param is None and not is_missing(value):
            current = best.get(col.base)
            if current is None or (value > current if metric == "r2" else value < current):
                best[col.base] = value
    return {base: format_value(v, metric) for base, v in best.items()}
