"""How our tables look: the order of rows and columns, number formats, md/LaTeX rendering.

The orders come from data: datasets from the dataset registry, models and bases from the
papers' data files (afr_cli/papers/*/paper.yaml); anything unknown sorts after, by name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable

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


def format_cell(value: float, metric: str, params: Collection[str]) -> str:
    """One cell's value beside a published table: 'n/a' without one, a tuning parameter (a row
    named in ``params``) as set, a score at the metric's digits."""
    if is_missing(value):
        return "n/a"
    return format_param(value) if metric in params else format_value(value, metric)


def printed_decimals(printed: str) -> int | None:
    """How many decimals a number as a paper prints it has ('0.111' -> 3, '45' -> 0); None for a
    cell that is not a number."""
    text = str(printed).strip().replace("−", "-")
    try:
        float(text)
    except ValueError:
        return None
    return len(text.partition(".")[2].rstrip("%")) if "." in text else 0


def column_decimals(printed: Iterable[str]) -> int | None:
    """The decimals of a paper's column: the most any of its printed cells has ('1', '0.25' ->
    2), so a column of ours reads at one precision and a printed '1' among '0.25's is read as
    1.00, not as a number rounded to an integer; None when no cell is a number."""
    places = [p for p in map(printed_decimals, printed) if p is not None]
    return max(places) if places else None


def format_as_printed(value: float, printed: str, fallback: str, param: bool = False, places: int | None = None) -> str:
    """``value`` at the decimals of the paper's printed cell (``places``: the column's, see
    ``column_decimals``), so ours and the paper's read at one precision ('0.111 / 0.111', not
    '0.111111 / 0.111'); a hyperparameter (``param``) rounded to them and written short ('10 /
    0.01', not '10.00 / 0.01'); ``fallback`` where the paper prints no number."""
    places = printed_decimals(printed) if places is None or printed_decimals(printed) is None else places
    if is_missing(value) or places is None or not isinstance(value, (int, float)):
        return fallback
    return f"{round(value, places):g}" if param else f"{value:.{places}f}"


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


_NUMBER_CELL = re.compile(r"[-+−~]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?:\s*±\s*\d[\d.]*)?\*?%?")
_NO_NUMBER = ("", "n/a", "—", "-")  # a cell with no number does not decide a column's alignment


def number_columns(rows: list[list[str]]) -> list[bool]:
    """Per column, whether every cell that holds something is a number (a sign, a mean ± sd, a
    bold (LaTeX or Markdown) or starred number included), so a table aligns it right."""
    width = max((len(row) for row in rows), default=0)
    out = []
    for k in range(width):
        cells = [str(row[k]).strip() for row in rows if k < len(row) and str(row[k]).strip() not in _NO_NUMBER]
        plain = [re.sub(r"^\\textbf\{(.*)\}$|^\*\*(.*)\*\*$", r"\1\2", c) for c in cells]
        plain = [c.replace("$\\pm$", "±").replace("\\%", "%") for c in plain]
        out.append(bool(cells) and all(_NUMBER_CELL.fullmatch(c) for c in plain))
    return out


def _rule_right(rule: str, right: list[bool]) -> str:
    """The Markdown rule line under the header with ``---:`` on the columns aligned right."""
    parts = rule.split("|")
    for k, number in enumerate(right, start=1):
        if number and k < len(parts) - 1:
            parts[k] = parts[k][:-1] + ":"
    return "|".join(parts)


def grid(headers: list[str], rows: list[list[str]], fmt: str, escaped: bool = False) -> str:
    """A table in md (github) or LaTeX; cells are final strings (LaTeX-escaped if ``escaped``).
    Both align a column of numbers right (``number_columns``; Markdown says so with ``---:``
    under its header, so a rendered page aligns it too), text left."""
    if fmt == "latex":
        if not escaped:
            headers = [tex(h) for h in headers]
            rows = [[tex(c) for c in row] for row in rows]
        align = ["right" if number else "left" for number in number_columns(rows)]
        return tabulate(rows, headers, tablefmt="latex_raw", disable_numparse=True, colalign=align or None)
    right = number_columns(rows)
    align = ["right" if number else "left" for number in right]
    lines = tabulate(rows, headers, tablefmt="github", disable_numparse=True, colalign=align or None).split("\n")
    if len(lines) > 1 and any(right):
        lines[1] = _rule_right(lines[1], right)
    return "\n".join(lines)


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
