"""How our tables look: the order of rows and columns, number formats, md/LaTeX rendering.

The orders come from data: datasets from the dataset registry, models and bases from the
papers' data files (afr_cli/papers/*/paper.yaml); anything unknown sorts after, by name.
"""

from __future__ import annotations

import math

import pandas as pd
from tabulate import tabulate

from afr_cli.catalogue.knowledge import base_order, model_order
from afr_cli.data.registry import DATASETS
from afr_cli.errors import AfrInputError

DATASET_ORDER = tuple(DATASETS)
MODEL_ORDER = model_order()
BASE_ORDER = base_order()
METRICS = ("r2", "mae", "rmse")
FORMATS = ("md", "latex", "csv")
METRIC_NAMES = {"r2": "R²", "mae": "MAE", "rmse": "RMSE"}
CSV_FLOAT = "%.6g"


def _known_first(order: tuple[str, ...]):
    return lambda name: (0, order.index(name), "") if name in order else (1, 0, str(name))


dataset_key = _known_first(DATASET_ORDER)
model_key = _known_first(MODEL_ORDER)
metric_key = _known_first(METRICS)


def base_key(base: str) -> tuple:
    """RF before ERT before DT, then by tree count: 'RF@100' < 'RF@1000'."""
    family, _, trees = base.partition("@")
    rank = BASE_ORDER.index(family) if family in BASE_ORDER else len(BASE_ORDER)
    return rank, family, int(trees) if trees.isdigit() else 0


SORT_KEYS = {"dataset": dataset_key, "base": base_key, "model": model_key, "metric": metric_key}


def sorted_frame(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``frame`` sorted by the known orders of its dataset/base/model/metric columns (others by value)."""

    def rank(col: pd.Series) -> pd.Series:
        order = sorted(col.unique(), key=SORT_KEYS.get(col.name, lambda v: (0, 0, v)))
        return col.map({value: i for i, value in enumerate(order)})

    return frame.sort_values(columns, key=rank, kind="stable").reset_index(drop=True)


def is_missing(value) -> bool:
    """True for None and NaN: a cell with nothing to show."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def decimals(value: float, metric: str) -> int:
    """3 decimals for R²; 4 significant digits for MAE/RMSE."""
    if metric == "r2" or value == 0 or not math.isfinite(value):
        return 3
    return max(0, 3 - math.floor(math.log10(abs(value))))


def format_value(value: float, metric: str) -> str:
    """A metric value as shown in tables ('' when missing)."""
    if is_missing(value):
        return ""
    return f"{value:.{decimals(value, metric)}f}"


def format_param(value) -> str:
    """A hyperparameter value as a table shows it (``%g`` for numbers; empty when missing)."""
    if is_missing(value):
        return ""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def format_diff(diff: float, reference: float, metric: str) -> str:
    """A signed difference: 4 decimals on R², the reference value's decimals on errors."""
    if is_missing(diff):
        return ""
    return f"{diff:+.4f}" if metric == "r2" else f"{diff:+.{decimals(reference, metric)}f}"


def tex(text: str) -> str:
    """Escape plain text for LaTeX (the few symbols our tables use included)."""
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        else:
            out.append(
                {
                    "\\": r"\textbackslash{}",
                    "~": r"\textasciitilde{}",
                    "^": r"\^{}",
                    "±": r"$\pm$",
                    "š": r"\v{s}",
                    "Δ": r"$\Delta$",
                    "−": r"$-$",
                    "²": r"$^2$",
                }.get(ch, ch)
            )
    return "".join(out)


def bold(text: str, fmt: str) -> str:
    """``text`` in bold in the given output format (Markdown or LaTeX)."""
    return rf"\textbf{{{text}}}" if fmt == "latex" else f"**{text}**"


def grid(headers: list[str], rows: list[list[str]], fmt: str, escaped: bool = False) -> str:
    """A table in md (github) or LaTeX; cells are final strings (LaTeX-escaped if ``escaped``)."""
    if fmt == "latex":
        if not escaped:
            headers = [tex(h) for h in headers]
            rows = [[tex(c) for c in row] for row in rows]
        return tabulate(rows, headers, tablefmt="latex_raw", disable_numparse=True)
    return tabulate(rows, headers, tablefmt="github", disable_numparse=True)


def document(title: str, body: str, notes: list[str], fmt: str) -> str:
    """A title line, the table and footnote lines; LaTeX gets a table environment."""
    if fmt == "latex":
        lines = [r"\begin{table}", r"\centering", rf"\caption{{{tex(title)}}}", body]
        lines += [rf"\par\footnotesize {tex(note)}" for note in notes]
        return "\n".join(lines + [r"\end{table}"]) + "\n"
    return "\n\n".join([title, body, *notes]) + "\n"


def check_format(fmt: str) -> None:
    """Refuse an unknown ``--format`` with one line listing the allowed ones."""
    if fmt not in FORMATS:
        raise AfrInputError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
