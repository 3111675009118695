"""Tables of our results: per-dataset summaries, comparison with a published table, and a
B-against-A test over datasets. Pure functions over DataFrames, rendered to md, LaTeX or CSV.

``results`` is the long frame of afr_cli.store.load_results: dataset, base, model, rep,
r2, mae, rmse, params (dict of the selected hyperparameters), selection.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pandas as pd
from tabulate import tabulate

from afr_cli.errors import AfrInputError
from afr_cli.paper import EXTRA_KEYS, published_table
from afr_cli.stats import TTestResult, paired_ttest, wilcoxon_test

DATASET_ORDER = (
    "Diabetes", "Friedman1", "Friedman2", "Friedman3", "Regression", "Sparse",
    "Wine", "Boston", "Concrete", "Yacht", "Airfoil",
)
MODEL_ORDER = (
    "rf", "ert", "gbm", "softmax", "eps-abrf", "sat-rf-y", "sat-rf-x", "sat-rf-yx", "sat-rf",
    "sat-rf-y2", "em-w-arf", "em-w-larf", "em-arf", "em-larf", "larf", "nonparam", "agboost",
)
BASE_ORDER = ("RF", "ERT", "DT")
METRICS = ("r2", "mae", "rmse")
FORMATS = ("md", "latex", "csv")
DEFAULT_PARAMS = ("eps", "gamma", "tau", "tau0", "M", "delta")
METRIC_NAMES = {"r2": "R²", "mae": "MAE", "rmse": "RMSE"}
BEST_TEST_NOTE = "selection: best-test (optimistic; grid point chosen on the test set)"

# Published tuning-parameter rows (metric column of the paper CSVs) -> our params key.
PARAM_ROWS = {"eps_opt": "eps", "gamma_opt": "gamma", "delta_opt": "delta", "tau0": "tau0"}
# Default tolerances of ours against the paper: absolute on R², relative to the paper on errors.
R2_TOL = 0.02
ERROR_REL_TOL = 0.05
COMPARISON_COLUMNS = ["dataset", "model", "metric", "ours", "published", "diff", "within_tol"]
TEST_COLUMNS = [
    "base", "metric", "a", "b", "n", "mean_diff", "t", "p", "ci_low", "ci_high",
    "wilcoxon_stat", "wilcoxon_p", "wins", "ties", "losses",
]
CSV_FLOAT = "%.6g"


# ---------------------------------------------------------------- ordering and formatting

def _known_first(order: tuple[str, ...]):
    return lambda name: (0, order.index(name), "") if name in order else (1, 0, str(name))


_dataset_key = _known_first(DATASET_ORDER)
_model_key = _known_first(MODEL_ORDER)
_metric_key = _known_first(METRICS)


def _base_key(base: str) -> tuple:
    family, _, trees = base.partition("@")
    rank = BASE_ORDER.index(family) if family in BASE_ORDER else len(BASE_ORDER)
    return rank, family, int(trees) if trees.isdigit() else 0


_SORT_KEYS = {"dataset": _dataset_key, "base": _base_key, "model": _model_key, "metric": _metric_key}


def _sorted(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    def rank(col: pd.Series) -> pd.Series:
        order = sorted(col.unique(), key=_SORT_KEYS[col.name])
        return col.map({value: i for i, value in enumerate(order)})

    return frame.sort_values(columns, key=rank, kind="stable").reset_index(drop=True)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _decimals(value: float, metric: str) -> int:
    """3 decimals for R²; 4 significant digits for MAE/RMSE."""
    if metric == "r2" or value == 0 or not math.isfinite(value):
        return 3
    return max(0, 3 - math.floor(math.log10(abs(value))))


def format_value(value: float, metric: str) -> str:
    """A metric value as shown in tables ('' when missing)."""
    if _missing(value):
        return ""
    return f"{value:.{_decimals(value, metric)}f}"


def _format_param(value) -> str:
    if _missing(value):
        return ""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _tex(text: str) -> str:
    """Escape plain text for LaTeX (the few symbols our tables use included)."""
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        else:
            out.append({"\\": r"\textbackslash{}", "~": r"\textasciitilde{}", "^": r"\^{}",
                        "±": r"$\pm$", "š": r"\v{s}", "Δ": r"$\Delta$", "−": r"$-$", "²": r"$^2$"}.get(ch, ch))
    return "".join(out)


def _bold(text: str, fmt: str) -> str:
    return rf"\textbf{{{text}}}" if fmt == "latex" else f"**{text}**"


def _grid(headers: list[str], rows: list[list[str]], fmt: str, escaped: bool = False) -> str:
    """A table in md (github) or LaTeX; cells are final strings (LaTeX-escaped if ``escaped``)."""
    if fmt == "latex":
        if not escaped:
            headers = [_tex(h) for h in headers]
            rows = [[_tex(c) for c in row] for row in rows]
        return tabulate(rows, headers, tablefmt="latex_raw", disable_numparse=True)
    return tabulate(rows, headers, tablefmt="github", disable_numparse=True)


def _document(title: str, body: str, notes: list[str], fmt: str) -> str:
    """A title line, the table and footnote lines; LaTeX gets a table environment."""
    if fmt == "latex":
        lines = [r"\begin{table}", r"\centering", rf"\caption{{{_tex(title)}}}", body]
        lines += [rf"\par\footnotesize {_tex(note)}" for note in notes]
        return "\n".join(lines + [r"\end{table}"]) + "\n"
    return "\n\n".join([title, body, *notes]) + "\n"


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise AfrInputError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")


def selection_note(results: pd.DataFrame) -> str | None:
    """The best-test warning when any result's grid point was chosen on the test set."""
    best_test = results[results["selection"] == "best-test"]
    if best_test.empty:
        return None
    if len(best_test) == len(results):
        return BEST_TEST_NOTE
    models = sorted({f"{m} ({b})" for b, m in zip(best_test["base"], best_test["model"])})
    return f"{BEST_TEST_NOTE}: {', '.join(models)}"


# ---------------------------------------------------------------- summaries

BEST_TEST_COLUMNS = ["dataset", "base", "model", "rep", "r2", "mae", "rmse", "params", "selection"]


def best_test_results(grid: pd.DataFrame, select_by: str = "r2") -> pd.DataFrame:
    """Results re-selected on the test set: per (dataset, base, model) the grid point whose mean
    test score over the reps is best, and that point's test metrics in every rep.

    This is the optimistic reading of the papers' "optimal" columns, derived from the stored
    grid scores without rerunning; rows are labelled ``selection = best-test``. Models without
    grid rows (``best_of`` composites) are dropped: choosing among them on the test set is the
    same thing again.
    """
    if grid.empty:
        return pd.DataFrame(columns=BEST_TEST_COLUMNS)
    grid = grid.assign(point_key=grid["point"].map(lambda p: tuple(sorted(p.items()))))
    keys = ["dataset", "base", "model"]
    means = grid.groupby(keys + ["point_key"])[f"test_{select_by}"].mean().reset_index()
    ascending = select_by != "r2"
    best = means.sort_values(keys + [f"test_{select_by}"], ascending=[True] * 3 + [ascending])
    best = best.groupby(keys, as_index=False).first()[keys + ["point_key"]]
    chosen = grid.merge(best, on=keys + ["point_key"])
    return pd.DataFrame({
        "dataset": chosen["dataset"], "base": chosen["base"], "model": chosen["model"], "rep": chosen["rep"],
        "r2": chosen["test_r2"], "mae": chosen["test_mae"], "rmse": chosen["test_rmse"],
        "params": chosen["point"], "selection": "best-test"})


def summary_long(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=1) and number of reps per dataset, base, model and metric."""
    metrics = [m for m in METRICS if m in results.columns]
    long = results.melt(id_vars=["dataset", "base", "model"], value_vars=metrics,
                        var_name="metric", value_name="value")
    grouped = long.groupby(["dataset", "base", "model", "metric"], sort=False)["value"]
    out = grouped.agg(mean="mean", std="std", n_reps="count").reset_index()
    return _sorted(out, ["dataset", "base", "model", "metric"])


def mode_value(values: list) -> object:
    """The value chosen most often; ties go to the smallest."""
    counts = Counter(values)
    top = max(counts.values())
    return min((v for v, c in counts.items() if c == top), key=lambda v: (str(type(v)), v))


def param_modes(results: pd.DataFrame, params: tuple[str, ...] = DEFAULT_PARAMS) -> pd.DataFrame:
    """Per dataset, base and model: the most often selected value of each hyperparameter."""
    rows = []
    for (dataset, base, model), group in results.groupby(["dataset", "base", "model"], sort=False):
        chosen = [p for p in group["params"] if isinstance(p, dict)]
        for param in params:
            values = [p[param] for p in chosen if p.get(param) is not None]
            if values:
                rows.append({"dataset": dataset, "base": base, "model": model,
                             "param": param, "value": mode_value(values)})
    return pd.DataFrame(rows, columns=["dataset", "base", "model", "param", "value"])


@dataclass(frozen=True)
class _Column:
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


def _wide_columns(results: pd.DataFrame, modes: pd.DataFrame, params) -> list[_Column]:
    """Columns grouped by base: the models' metric columns, then their selected parameters
    (only those whose selected value varies: a fixed value is not a choice worth a column)."""
    varying = _varying_params(results, params)
    pairs = results[["base", "model"]].drop_duplicates()
    multi_base = pairs["base"].nunique() > 1
    columns = []
    for base in sorted(pairs["base"].unique(), key=_base_key):
        models = sorted(pairs.loc[pairs["base"] == base, "model"], key=_model_key)
        columns += [_Column(f"{m} ({base})" if multi_base else m, base, m, None) for m in models]
        for param in params:
            for m in models:
                if (base, m, param) in varying:
                    label = f"{param}_opt ({m}, {base})" if multi_base else f"{param}_opt ({m})"
                    columns.append(_Column(label, base, m, param))
    return columns


def _cell_lookup(frame: pd.DataFrame, value: str) -> dict:
    """``value`` keyed by the frame's (dataset, base, model[, param]) tuples."""
    keys = [c for c in ("dataset", "base", "model", "param") if c in frame.columns]
    return {tuple(k): v for k, v in zip(frame[keys].itertuples(index=False), frame[value])}


def summary_wide(results: pd.DataFrame, metric: str, with_std: bool = False,
                 params: tuple[str, ...] = DEFAULT_PARAMS) -> pd.DataFrame:
    """Datasets as rows, one column per model (grouped by base), then ``<param>_opt (<model>)``
    columns with the mode of the selected values. Cells are mean floats, or 'mean ± std' strings."""
    long = summary_long(results)
    long = long[long["metric"] == metric]
    means, stds = _cell_lookup(long, "mean"), _cell_lookup(long, "std")
    modes = param_modes(results, params)
    chosen = _cell_lookup(modes, "value")
    datasets = sorted(results["dataset"].unique(), key=_dataset_key)
    out = pd.DataFrame({"dataset": datasets})
    for col in _wide_columns(results, modes, params):
        if col.param is not None:
            out[col.label] = [chosen.get((d, col.base, col.model, col.param)) for d in datasets]
        elif with_std:
            out[col.label] = [_mean_std(means.get((d, col.base, col.model)),
                                        stds.get((d, col.base, col.model)), metric) for d in datasets]
        else:
            out[col.label] = [means.get((d, col.base, col.model), math.nan) for d in datasets]
    return out


def _mean_std(mean, std, metric: str) -> str:
    if _missing(mean):
        return ""
    if _missing(std):
        return format_value(mean, metric)
    return f"{format_value(mean, metric)} ± {std:.{_decimals(mean, metric)}f}"


def render_summary(results: pd.DataFrame, metric: str | None = "r2", fmt: str = "md",
                   with_std: bool = False, params: tuple[str, ...] = DEFAULT_PARAMS) -> str:
    """The summary table: csv is the long form (all metrics when ``metric`` is None); md/latex
    the wide form of one metric (R² when None) with the best model per row and base in bold."""
    _check_format(fmt)
    if fmt == "csv":
        long = summary_long(results)
        if metric is not None:
            long = long[long["metric"] == metric]
        return long.to_csv(index=False, float_format=CSV_FLOAT)
    metric = metric or "r2"
    numeric = summary_wide(results, metric, with_std=False, params=params)
    shown = summary_wide(results, metric, with_std=with_std, params=params)
    columns = _wide_columns(results, param_modes(results, params), params)
    rows = []
    for i in range(len(shown)):
        cells = [_tex(shown["dataset"][i]) if fmt == "latex" else shown["dataset"][i]]
        best = _best_per_base(numeric.iloc[i], columns, metric)
        for col in columns:
            value = shown[col.label][i]
            text = _format_param(value) if col.param else (
                value if isinstance(value, str) else format_value(value, metric))
            text = _tex(text) if fmt == "latex" else text
            is_best = (col.param is None and
                       format_value(numeric[col.label][i], metric) == best.get(col.base))
            cells.append(_bold(text, fmt) if is_best and text else text)
        rows.append(cells)
    headers = ["dataset"] + [c.label for c in columns]
    if fmt == "latex":
        headers = [_tex(h) for h in headers]
    n_reps = summary_long(results)["n_reps"]
    reps = f"{n_reps.min()}" if n_reps.min() == n_reps.max() else f"{n_reps.min()}–{n_reps.max()}"
    title = (f"{METRIC_NAMES.get(metric, metric)}: mean{' ± std' if with_std else ''} over {reps} reps;"
             f" best per dataset and base in bold")
    note = selection_note(results)
    return _document(title, _grid(headers, rows, fmt, escaped=True), [note] if note else [], fmt)


def _best_per_base(row: pd.Series, columns: list[_Column], metric: str) -> dict[str, str]:
    """The formatted best mean per base in one row (max for R², min for errors)."""
    best: dict[str, float] = {}
    for col in columns:
        value = row[col.label]
        if col.param is None and not _missing(value):
            current = best.get(col.base)
            if current is None or (value > current if metric == "r2" else value < current):
                best[col.base] = value
    return {base: format_value(v, metric) for base, v in best.items()}


# ---------------------------------------------------------------- ours against a published table

# Published model ids that stand for a different model of ours in one table: SAT-RF Tables 2-7
# each print the Softmax model (eps = gamma = 0) of their own variant under the one name.
PAPER_MODEL_ALIASES: dict[str, dict[str, str]] = {
    "satrf:2": {"softmax": "softmax-y"}, "satrf:3": {"softmax": "softmax-y"},
    "satrf:4": {"softmax": "softmax-x"}, "satrf:5": {"softmax": "softmax-x"},
    "satrf:6": {"softmax": "softmax-yx"}, "satrf:7": {"softmax": "softmax-yx"},
}


def name_plain_forests(results: pd.DataFrame) -> pd.DataFrame:
    """Rows of the generic plain-forest model ``forest`` renamed after their base kind (rf, ert),
    as the papers name their baseline columns; a config with several bases can then use one id."""
    is_forest = results["model"] == "forest"
    if not is_forest.any():
        return results
    kinds = results["base"].str.split("@").str[0].str.lower()
    return results.assign(model=results["model"].where(~is_forest, kinds))


def _our_key(base: str, model: str) -> tuple[str, str]:
    """Published (base, model) -> ours; ``rf@400`` on base RF is our base ``RF@400``, model ``rf``."""
    name, _, trees = model.partition("@")
    return (f"{base}@{trees}", name) if trees else (base, model)


def _within(metric: str, diff: float, published: float, tol: float | None) -> bool:
    if metric in PARAM_ROWS:
        return math.isclose(diff, 0.0, abs_tol=1e-12)
    if tol is None:
        tol = R2_TOL if metric == "r2" else ERROR_REL_TOL * abs(published)
    return abs(diff) <= tol + 1e-12


def _labels(published: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Dataset and model labels of published cells: extra keys (robust_rf's training fraction and
    noise) go into the dataset label, the base into the model label when the table has several."""
    multi_base = published["base"].nunique() > 1
    extras = [k for k in EXTRA_KEYS if k in published.columns]
    datasets, models = [], []
    for cell in published.to_dict("records"):
        suffix = ", ".join(f"{k}={cell[k]:g}" for k in extras)
        datasets.append(f"{cell['dataset']} [{suffix}]" if extras else cell["dataset"])
        models.append(f"{cell['model']} ({cell['base']})" if multi_base else cell["model"])
    return datasets, models


def paper_comparison(results: pd.DataFrame, spec: str, tol: float | None = None) -> pd.DataFrame:
    """Every cell of a published table (``paper:table``) beside our value for it.

    ours is our mean over reps (metric rows) or the most often selected value (parameter rows
    such as eps_opt); diff = ours − published. within_tol: |diff| <= 0.02 for R² and <= 5 % of
    the published value for MAE/RMSE, or <= ``tol`` for every metric when given; parameters
    must be equal. Without a value of ours, ours/diff are NaN and within_tol is None.
    Tables with several bases name the model ``model (BASE)``.
    """
    published = _sorted(published_table(spec), ["dataset"])
    results = name_plain_forests(results)
    aliases = PAPER_MODEL_ALIASES.get(spec.lower(), {})
    dataset_labels, model_labels = _labels(published)
    extras = [k for k in EXTRA_KEYS if k in published.columns]
    matched = [k for k in extras if k in results.columns]
    keys = ["dataset", "base", "model", *matched]
    melted = results.melt(id_vars=keys, value_vars=[m for m in METRICS if m in results.columns],
                          var_name="metric", value_name="value")
    means = melted.groupby([*keys, "metric"])["value"].mean().to_dict()
    modes = _cell_lookup(param_modes(results, tuple(PARAM_ROWS.values())), "value")
    rows = []
    for cell, dataset_label, model_label in zip(published.to_dict("records"), dataset_labels, model_labels):
        base, model = _our_key(cell["base"], aliases.get(cell["model"], cell["model"]))
        extra_key = tuple(cell[k] for k in matched)
        if len(matched) < len(extras):
            ours = math.nan
        elif cell["metric"] in PARAM_ROWS:
            ours = modes.get((cell["dataset"], base, model, PARAM_ROWS[cell["metric"]]), math.nan)
        else:
            ours = means.get((cell["dataset"], base, model, *extra_key, cell["metric"]), math.nan)
        ours = float(ours)
        diff = ours - cell["value"]
        rows.append({
            "dataset": dataset_label,
            "model": model_label,
            "metric": cell["metric"],
            "ours": ours,
            "published": cell["value"],
            "diff": diff,
            "within_tol": None if math.isnan(ours) else _within(cell["metric"], diff, cell["value"], tol),
        })
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    frame["within_tol"] = frame["within_tol"].astype(object)
    return frame


def _tolerance_legend(tol: float | None) -> str:
    rule = (f"|Δ| > {tol:g}" if tol is not None else
            f"|Δ| > {R2_TOL:g} for R², > {ERROR_REL_TOL:.0%} of the paper's value for MAE/RMSE")
    return f"Δ = ours − paper; * outside tolerance ({rule}; parameters must be equal); n/a: no result of ours"


def render_paper_comparison(comparison: pd.DataFrame, spec: str, fmt: str = "md",
                            tol: float | None = None, note: str | None = None) -> str:
    """csv: the 7 comparison columns; md/latex: one wide table per metric, datasets as rows and
    'ours | paper | Δ' per model, out-of-tolerance Δ marked with '*'."""
    _check_format(fmt)
    if fmt == "csv":
        return comparison.to_csv(index=False, float_format=CSV_FLOAT)
    published = published_table(spec)
    printed = dict(zip(zip(*_labels(published), published["metric"]), published["value_str"]))
    metrics = sorted(pd.unique(comparison["metric"]), key=lambda m: METRICS.index(m) if m in METRICS else len(METRICS))
    parts = []
    for metric in metrics:
        part = comparison[comparison["metric"] == metric]
        models = list(pd.unique(part["model"]))
        cells = {(r["dataset"], r["model"]): r for r in part.to_dict("records")}
        rows = []
        for dataset in pd.unique(part["dataset"]):
            row = [dataset]
            for model in models:
                row += _comparison_cells(cells.get((dataset, model)), printed.get((dataset, model, metric), ""))
            rows.append(row)
        headers = ["dataset"] + [f"{m} {what}" for m in models for what in ("ours", "paper", "Δ")]
        title = f"{spec}, {METRIC_NAMES.get(metric, metric)}: ours | paper | Δ"
        notes = [_tolerance_legend(tol)] + ([note] if note else [])
        parts.append(_document(title, _grid(headers, rows, fmt), notes, fmt))
        agreement = agreement_summary(part, printed)
        if len(agreement):
            parts.append(_document(f"{spec}, {METRIC_NAMES.get(metric, metric)}: agreement per column",
                                   _grid(list(agreement.columns), agreement.astype(str).values.tolist(), fmt),
                                   [AGREEMENT_LEGEND], fmt))
        best = best_counts(part)
        if len(best):
            parts.append(_document(f"{spec}, {METRIC_NAMES.get(metric, metric)}: best model per dataset",
                                   _grid(list(best.columns), best.astype(str).values.tolist(), fmt),
                                   [BEST_LEGEND], fmt))
    return "\n".join(parts)


BEST_LEGEND = ("on how many datasets each column is the best of its base's columns (highest R², lowest "
               "MAE/RMSE) at the printed precision, in the paper and in ours; a tie counts for every "
               "model in it, and only datasets where every column has a value of ours are counted")


def _base_group(model_label: str) -> str:
    """'sat-rf-y (ERT)' -> 'ERT'; a single-base table's labels all fall in one group ''."""
    head, sep, tail = model_label.rpartition(" (")
    return tail.rstrip(")") if sep and tail.endswith(")") else ""


def best_counts(part: pd.DataFrame) -> pd.DataFrame:
    """Per model column of one metric: on how many datasets it is the best of its base's columns,
    in the paper and in ours (ties count for each tied model). The papers' claims "X outperforms
    the other models on most datasets" are read off this. Empty for parameter rows or one column."""
    metric = part["metric"].iloc[0] if len(part) else None
    if metric is None or metric in PARAM_ROWS:
        return pd.DataFrame(columns=["model", "best (paper)", "best (ours)"])
    better = max if metric == "r2" else min
    part = part.assign(group=part["model"].map(_base_group))
    counts = {model: [0, 0] for model in pd.unique(part["model"])}
    for _, cells in part.groupby(["group", "dataset"], sort=False):
        if len(cells) < 2 or cells["ours"].isna().any():
            continue
        for side, values in enumerate((cells["published"], cells["ours"].map(lambda v: float(format_value(v, metric))))):
            top = better(values)
            for model in cells.loc[values == top, "model"]:
                counts[model][side] += 1
    if all(len(g) < 2 for g in part.groupby("group")["model"].unique()):
        return pd.DataFrame(columns=["model", "best (paper)", "best (ours)"])
    return pd.DataFrame([[m, p, o] for m, (p, o) in counts.items()], columns=["model", "best (paper)", "best (ours)"])


AGREEMENT_LEGEND = ("cells: published cells with a value of ours; as printed: ours rounded to the "
                    "paper's printed digits equals it; within tol: as marked above; mean Δ: ours − paper")


def agreement_summary(part: pd.DataFrame, printed: dict) -> pd.DataFrame:
    """Per model column of one metric: how many cells we have, how many equal the printed value
    to its digits, how many are within tolerance, and the mean difference."""
    rows = []
    for model, cells in part.groupby("model", sort=False):
        cells = cells[cells["ours"].notna()]
        if not len(cells):
            continue
        same = sum(_as_printed(c["ours"], printed.get((c["dataset"], model, c["metric"]), ""))
                   for c in cells.to_dict("records"))
        rows.append({"model": model, "cells": len(cells), "as printed": same,
                     "within tol": int(cells["within_tol"].astype(bool).sum()),
                     "mean Δ": f"{cells['diff'].mean():+.4f}"})
    return pd.DataFrame(rows, columns=["model", "cells", "as printed", "within tol", "mean Δ"])


def _as_printed(ours: float, printed: str) -> bool:
    """Whether ``ours`` rounds to the published value at the digits the paper printed."""
    try:
        value = float(printed)
    except ValueError:
        return False
    digits = len(printed.partition(".")[2])
    return abs(round(ours, digits) - value) < 0.5 * 10.0 ** -digits


def _comparison_cells(cell: dict | None, published: str) -> list[str]:
    """ours | paper (as printed) | Δ, with '*' on a Δ outside tolerance."""
    if cell is None:
        return ["", "", ""]
    metric = cell["metric"]
    is_param = metric in PARAM_ROWS
    if math.isnan(cell["ours"]):
        return ["n/a", published, ""]
    ours = _format_param(cell["ours"]) if is_param else format_value(cell["ours"], metric)
    diff = f"{cell['diff']:+g}" if is_param else f"{cell['diff']:+.{_decimals(cell['ours'], metric)}f}"
    return [ours, published, diff + ("" if cell["within_tol"] else "*")]


# ---------------------------------------------------------------- B against A over datasets

@dataclass(frozen=True)
class BaseComparison:
    """B against A on one base: per-dataset means and the tests of B − A over shared datasets."""

    base: str
    per_dataset: pd.DataFrame  # dataset, <a>, <b>, "<b> − <a>"
    ttest: TTestResult
    wilcoxon: tuple[float, float]
    record: "WinRecord"
    reps: tuple[int, int]  # fewest and most repetitions behind a dataset's pair of means

    def reps_span(self, joiner: str = " to ") -> str:
        """'20' when every dataset's pair of means has the same count, else 'fewest<joiner>most'."""
        low, high = self.reps
        return f"{low}" if low == high else f"{low}{joiner}{high}"

    def reps_text(self) -> str:
        return f"each dataset's means over the {self.reps_span()} repetitions (splits) both models hold"


@dataclass(frozen=True)
class WinRecord:
    """Datasets where B is better than, equal to or worse than A at the tables' printed precision
    (the papers count "outperforms on N datasets" this way); better is higher R², lower errors."""

    wins: tuple[str, ...]
    ties: tuple[str, ...]
    losses: tuple[str, ...]

    @classmethod
    def count(cls, table: pd.DataFrame, a: str, b: str, metric: str) -> "WinRecord":
        sign = 1 if metric == "r2" else -1
        outcome = {"win": [], "tie": [], "loss": []}
        for row in table.dropna(subset=[a, b]).to_dict("records"):
            shown_a, shown_b = (float(format_value(row[m], metric)) for m in (a, b))
            key = "tie" if shown_a == shown_b else ("win" if sign * (shown_b - shown_a) > 0 else "loss")
            outcome[key].append(row["dataset"])
        return cls(tuple(outcome["win"]), tuple(outcome["tie"]), tuple(outcome["loss"]))

    def describe(self, a: str, b: str) -> str:
        where = "; ".join(f"{label} on {', '.join(names)}" for label, names in
                          (("ties", self.ties), ("loses", self.losses)) if names)
        return (f"{b} better than {a} on {len(self.wins)} of {len(self.wins) + len(self.ties) + len(self.losses)}"
                f" datasets at the printed precision ({len(self.ties)} ties, {len(self.losses)} losses)"
                + (f": {where}" if where else ""))


@dataclass(frozen=True)
class ModelComparison:
    """B against A, as the papers compare a proposed model with a baseline (mean of B − A)."""

    a: str
    b: str
    metric: str
    bases: list[BaseComparison]

    def tests_frame(self) -> pd.DataFrame:
        """One row per base: base, metric, a, b, n, mean_diff, t, p, ci_low, ci_high, wilcoxon_*."""
        rows = [{"base": c.base, "metric": self.metric, "a": self.a, "b": self.b,
                 "n": c.ttest.n, "mean_diff": c.ttest.mean_diff, "t": c.ttest.t, "p": c.ttest.p,
                 "ci_low": c.ttest.ci_low, "ci_high": c.ttest.ci_high,
                 "wilcoxon_stat": c.wilcoxon[0], "wilcoxon_p": c.wilcoxon[1], "wins": len(c.record.wins),
                 "ties": len(c.record.ties), "losses": len(c.record.losses)} for c in self.bases]
        return pd.DataFrame(rows, columns=TEST_COLUMNS)


def compare_models(results: pd.DataFrame, a: str, b: str, metric: str = "r2") -> ModelComparison:
    """Per base holding both models: the per-dataset means of A and B and B − A, with the paired
    t-test and Wilcoxon test of B − A over the datasets both have."""
    if a == b:
        raise AfrInputError(f"--compare: needs two different models, got {a!r} twice")
    if ":" in a or ":" in b:
        results = _across_bases(results, a, b)
    known = sorted(results["model"].unique(), key=_model_key)
    for model in (a, b):
        if model not in known:
            raise AfrInputError(f"--compare: unknown model {model!r}; models in the results: {', '.join(known)}")
    long = summary_long(_shared_repetitions(results, a, b))
    long = long[long["metric"] == metric]
    shared = sorted(set(long.loc[long["model"] == a, "base"]) & set(long.loc[long["model"] == b, "base"]),
                    key=_base_key)
    if not shared:
        raise AfrInputError(f"--compare: models {a!r} and {b!r} share no base in the results")
    bases = []
    for base in shared:
        on_base = long[long["base"] == base].pivot(index="dataset", columns="model", values="mean")
        table = on_base[[a, b]].dropna(how="all")
        table = table.loc[sorted(table.index, key=_dataset_key)].reset_index()
        table[f"{b} − {a}"] = table[b] - table[a]
        both = table.dropna()
        counts = long.loc[(long["base"] == base) & (long["model"] == a), "n_reps"]
        bases.append(BaseComparison(base, table, paired_ttest(both[b], both[a]),
                                    wilcoxon_test(both[b], both[a]), WinRecord.count(table, a, b, metric),
                                    (int(counts.min()), int(counts.max()))))
    return ModelComparison(a, b, metric, bases)


def _shared_repetitions(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Rows of A and B on the (base, dataset, repetition) both hold: each dataset's two means are
    then over the same splits, even when one store has been extended further than the other."""
    pair = results[results["model"].isin([a, b])]
    keys = ["base", "dataset", "rep"]
    held_by_both = pair.groupby(keys)["model"].nunique().loc[lambda n: n == 2].index
    return pair[pd.MultiIndex.from_frame(pair[keys]).isin(held_by_both)]


def _across_bases(results: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """``MODEL:BASE`` on both sides (e.g. larf:RF larf:ERT, LARF Table 7): the two models' rows
    relabelled as models ``a`` and ``b`` on one pseudo-base ``BASE_A vs BASE_B``."""
    sides = []
    for spec in (a, b):
        model, sep, base = spec.partition(":")
        if not sep or not model or not base:
            raise AfrInputError(f"--compare: {spec!r}: give both sides as MODEL:BASE (e.g. larf:RF larf:ERT)")
        bases = sorted(results["base"].unique(), key=_base_key)
        if base not in bases:
            raise AfrInputError(f"--compare: unknown base {base!r} in {spec!r}; bases in the results: {', '.join(bases)}")
        sides.append(results[(results["model"] == model) & (results["base"] == base)].assign(model=spec))
    label = f"{a.partition(':')[2]} vs {b.partition(':')[2]}"
    return pd.concat(sides, ignore_index=True).assign(base=label)


def _format_diff(diff: float, reference: float, metric: str) -> str:
    """A signed difference: 4 decimals on R², the reference value's decimals on errors."""
    if _missing(diff):
        return ""
    return f"{diff:+.4f}" if metric == "r2" else f"{diff:+.{_decimals(reference, metric)}f}"


def render_model_comparison(comparison: ModelComparison, fmt: str = "md") -> str:
    """csv: the tests, one row per base; md/latex: per base the per-dataset table and test lines."""
    _check_format(fmt)
    if fmt == "csv":
        return comparison.tests_frame().to_csv(index=False, float_format=CSV_FLOAT)
    a, b, metric = comparison.a, comparison.b, comparison.metric
    parts = []
    for c in comparison.bases:
        rows = [[row["dataset"], format_value(row[a], metric), format_value(row[b], metric),
                 _format_diff(row[f"{b} − {a}"], row[b], metric)] for row in c.per_dataset.to_dict("records")]
        t = c.ttest
        notes = [
            f"paired t-test (Demšar) of {b} − {a} over n = {t.n} datasets: mean {t.mean_diff:.4g},"
            f" t = {t.t:.4g}, p = {t.p:.4g}, 95 % CI [{t.ci_low:.4g}, {t.ci_high:.4g}]",
            f"Wilcoxon signed-rank: statistic {c.wilcoxon[0]:.4g}, p = {c.wilcoxon[1]:.4g}",
            c.record.describe(a, b),
            c.reps_text(),
        ]
        title = f"{b} against {a} on {METRIC_NAMES.get(metric, metric)}, base {c.base}"
        headers = ["dataset", a, b, f"{b} − {a}"]
        parts.append(_document(title, _grid(headers, rows, fmt), notes, fmt))
    return "\n".join(parts)


def render_comparison_overview(comparisons: list[ModelComparison]) -> str:
    """One markdown row per (comparison, base): B − A, its paired t-test and Wilcoxon p, and the
    win/tie/loss count; the overview above the per-dataset blocks of a report's compare.md."""
    rows = []
    for comparison in comparisons:
        for c in comparison.bases:
            t, r = c.ttest, c.record
            rows.append([f"{comparison.b} − {comparison.a}", c.base, f"{t.mean_diff:+.4f}", f"{t.p:.3g}",
                         f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]", f"{c.wilcoxon[1]:.3g}",
                         f"{len(r.wins)}/{len(r.ties)}/{len(r.losses)}",
                         c.reps_span("–")])
    headers = ["B − A", "base", "mean", "p (t-test)", "95 % CI", "p (Wilcoxon)", "better/tie/worse", "reps"]
    return _grid(headers, rows, "md")


PAPER_REPS = 10  # the published baseline columns are means over repetitions 0-9 (README)


def repetitions_note(results: pd.DataFrame, reps: int | None, pointer: bool = True) -> str:
    """Which repetitions a table averages and, for a paper comparison over more than the papers'
    count (``pointer``), where their splits are."""
    count = int(results["rep"].max()) + 1
    per_cell = results.groupby(["dataset", "base"])["rep"].nunique()
    used = (f"Repetitions 0-{count - 1} of each dataset ({count})" if per_cell.min() == count else
            f"Uneven: {per_cell.min()} to {per_cell.max()} repetitions per dataset and base")
    if not pointer or reps is not None or count <= PAPER_REPS:
        return used + "."
    return (f"{used}; the papers' cells are means over their "
            f"{PAPER_REPS} splits, which are our repetitions 0-{PAPER_REPS - 1} under rep-index seeding: "
            f"--reps {PAPER_REPS} compares on those.")
