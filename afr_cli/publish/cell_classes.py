"""Every published cell of a paper in one class, the first that holds in the order of ``CLASSES``:

- **as printed** / **within tolerance**: our text reading on the paper's repetitions agrees by the
  agreement rule (afr_cli/tables/agreement.py), in some report of the paper that holds the cell;
- **within the spread of unpinned choices**: a ``spread`` store of the paper's ``explanations``
  (the cell recomputed under another value of a choice the paper leaves open, such as the
  inner-fold assignment) agrees, or the printed number lies between the lowest and the highest
  of ours and the spread stores' values (some value of the choice between them gives it);
- **reached by the code reading**: a ``code`` store (the authors' code reading) agrees;
- **explained by a tested cause named on the page**: a ``cause`` store (the cause removed; its
  data names the cause and the test that checks it) agrees;
- **unexplained**: none of these (a cell no store of ours holds included).

Every store is read on repetitions 0..reps-1, the paper's own splits; a store missing under the
root is skipped.
"""

from __future__ import annotations

import math
from collections import Counter

import pandas as pd

from afr_cli.catalogue.knowledge import Explanation, Paper, Report, param_rows
from afr_cli.catalogue.published import available_tables, load_published
from afr_cli.publish.context import ReportContext
from afr_cli.publish.page_words import listing
from afr_cli.tables.agreement import AS_PRINTED, MISS, NO_VALUE, R2_TOL, WITHIN_TOL, agreement
from afr_cli.tables.format import METRIC_NAMES
from afr_cli.tables.paper_compare import metric_decimals, paper_comparison, printed_cells

CLASSES = (
    "as printed",
    "within tolerance",
    "within the spread of unpinned choices",
    "reached by the code reading",
    "explained by a tested cause named on the page",
    "unexplained",
)
UNEXPLAINED = CLASSES[-1]
FIRST_BY_KIND = {"spread": CLASSES[2], "code": CLASSES[3], "cause": CLASSES[4]}
COLUMNS = ["table", "dataset", "model", "metric", "paper", "ours", "class"]
# Our value under the authors' code reading (a ``code`` store without a choice: the default one)
# and its agreement kind with the printed cell, beside the text reading's ``ours``
CODE_COLUMNS = ["code reading", "code agrees"]
_RANK = {AS_PRINTED: 0, WITHIN_TOL: 1, MISS: 2, NO_VALUE: 3}

Cell = tuple[str, str, str, str]  # (paper:table, dataset label, model label, metric)


def _agreements(results: pd.DataFrame, spec: str) -> dict[Cell, tuple[float, str]]:
    """Every cell of one published table: our value in ``results`` and its agreement kind."""
    printed = printed_cells(spec)
    params, places = param_rows(), metric_decimals(printed)
    out = {}
    for row in paper_comparison(results, spec).to_dict("records"):
        shown = printed.get((row["dataset"], row["model"], row["metric"]), "")
        is_param = row["metric"] in params  # a parameter at the most decimals the table prints it with
        kind = agreement(row["ours"], shown, row["metric"], is_param=is_param, places=places.get(row["metric"]))
        out[(spec, row["dataset"], row["model"], row["metric"])] = (row["ours"], kind)
    return out


def _explanation_frame(ctx: ReportContext, paper: Paper, explanation: Explanation) -> pd.DataFrame | None:
    """The explanation's store on the paper's repetitions, its models renamed to the published ids
    (the suffix taken off; with a suffix, only the models that carry it)."""
    report = Report(name=f"explanation:{explanation.store}", paper=paper.id, stores=(explanation.store,), papers=())
    results = ctx.report_frames(report, paper.reps)
    if results is None:
        return None
    suffix = explanation.suffix
    if suffix:
        results = results[results["model"].str.endswith(suffix)]
        results = results.assign(model=results["model"].str[: -len(suffix)])
    return results


def _specs(paper: Paper, ctx: ReportContext) -> list[str]:
    """Every published table of the paper, as ``paper:table``, that the comparison of a table with
    ours can read (the process's catalogue: a paper a context alone holds has no cell to class)."""
    known = set(available_tables())
    specs = [f"{paper.id}:{t}" for t in pd.unique(load_published(paper.id, ctx.catalogue)["table"])]
    return [spec for spec in specs if spec in known]


def classify_paper(paper: Paper, ctx: ReportContext) -> pd.DataFrame:
    """One row per published cell of ``paper``: its table, dataset, model and metric labels, the
    printed number, ours (NaN without one) and its class (module docstring)."""
    return ctx.once(("cell classes", paper.id), lambda: _classify(paper, ctx)).copy()


def _classify(paper: Paper, ctx: ReportContext) -> pd.DataFrame:
    specs = _specs(paper, ctx)
    best: dict[Cell, tuple[float, str]] = {}
    for spec in specs:
        for dataset, model, metric in printed_cells(spec):
            best[(spec, dataset, model, metric)] = (math.nan, NO_VALUE)
    for report in paper.reports:
        results = ctx.report_frames(report, paper.reps)
        if results is None:
            continue
        for spec in (s for s in report.papers if s in specs):
            for cell, found in _agreements(results, spec).items():
                if _RANK[found[1]] < _RANK[best[cell][1]]:
                    best[cell] = found
    explained: dict[Cell, str] = {}
    spread: dict[Cell, dict[str, float]] = {}  # per cell, its value under each choice of a spread store
    code: dict[Cell, tuple[float, str]] = {}  # per cell, its value under the code reading and its agreement
    for explanation in paper.explanations:
        results = _explanation_frame(ctx, paper, explanation)
        if results is None or not len(results):
            continue
        for spec in specs:
            for cell, (value, kind) in _agreements(results, spec).items():
                if explanation.kind == "spread" and not pd.isna(value):
                    spread.setdefault(cell, {}).setdefault(explanation.choice, value)
                if explanation.kind == "code" and not explanation.choice and not pd.isna(value):
                    code.setdefault(cell, (value, kind))
                if kind in (AS_PRINTED, WITHIN_TOL):
                    _explain(explained, cell, FIRST_BY_KIND[explanation.kind])
    printed = {spec: printed_cells(spec) for spec in specs}
    params = param_rows()
    for cell, values in spread.items():
        if cell[3] not in params and _between(printed[cell[0]].get(cell[1:], ""), [best[cell][0], *values.values()]):
            _explain(explained, cell, FIRST_BY_KIND["spread"])
    choices = list(dict.fromkeys(e.choice for e in paper.explanations if e.kind == "spread"))
    rows = []
    for cell, (ours, kind) in best.items():
        spec, dataset, model, metric = cell
        if kind == AS_PRINTED:
            found = CLASSES[0]
        elif kind == WITHIN_TOL:
            found = CLASSES[1]
        else:
            found = explained.get(cell, UNEXPLAINED)
        paper_value = printed[spec].get((dataset, model, metric), "")
        under = [spread.get(cell, {}).get(choice, math.nan) for choice in choices]
        by_code = code.get(cell, (math.nan, NO_VALUE))
        rows.append([spec.partition(":")[2], dataset, model, metric, paper_value, ours, found, *by_code, *under])
    return pd.DataFrame(rows, columns=[*COLUMNS, *CODE_COLUMNS, *choices])


def _explain(explained: dict[Cell, str], cell: Cell, found: str) -> None:
    """Keep for ``cell`` the first of its class so far and ``found`` in the order of ``CLASSES``."""
    if CLASSES.index(found) < CLASSES.index(explained.get(cell, UNEXPLAINED)):
        explained[cell] = found


def _between(printed: str, values: list[float]) -> bool:
    """Whether the printed number lies between the lowest and the highest of ``values`` (ours and
    the spread stores'; a value missing is left out; fewer than two values hold no range)."""
    try:
        number = float(printed)
    except ValueError:
        return False
    held = [v for v in values if not pd.isna(v)]
    return len(held) >= 2 and min(held) <= number <= max(held)


def spread_choices(frame: pd.DataFrame) -> list[str]:
    """The columns of ``classify_paper``'s frame that hold a cell under a spread store's choice."""
    return [c for c in frame.columns if c not in COLUMNS and c not in CODE_COLUMNS]


def reading_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per published table, of the cells the code reading recomputes (``classify_paper``'s frame):
    how many each reading agrees with, as printed and within tolerance (a paper without a code
    store: no row)."""
    held = frame[frame["code reading"].notna()]
    rows = []
    for table, cells in held.groupby("table", sort=False):
        text = cells["class"]
        rows.append(
            {
                "table": table,
                "cells": len(cells),
                "text: as printed": int((text == CLASSES[0]).sum()),
                "text: within tolerance": int((text == CLASSES[1]).sum()),
                "code: as printed": int((cells["code agrees"] == AS_PRINTED).sum()),
                "code: within tolerance": int((cells["code agrees"] == WITHIN_TOL).sum()),
            }
        )
    return pd.DataFrame(rows)


def spread_cells(frame: pd.DataFrame, missed_only: bool = True) -> pd.DataFrame:
    """The score cells (no tuning-parameter row) of ``classify_paper``'s frame that some spread store
    holds (``missed_only``: of them, those our text reading misses), with ``range``: the highest
    minus the lowest of ours and the spread values, what the unpinned choices move the cell by."""
    choices = spread_choices(frame)
    if not choices:
        return frame.iloc[0:0].assign(range=[])
    scores = ~frame["metric"].isin(list(param_rows()))
    held = frame[scores & frame[choices].notna().any(axis=1) & frame["ours"].notna()]
    if missed_only:
        held = held[~held["class"].isin(CLASSES[:2])]
    values = held[["ours", *choices]]
    return held.assign(range=values.max(axis=1) - values.min(axis=1))


def class_counts(frame: pd.DataFrame) -> Counter:
    """How many cells of ``classify_paper``'s frame fall in each class."""
    return Counter(frame["class"])


def explanations_of(paper: Paper, kind: str) -> tuple[Explanation, ...]:
    """The paper's explanations of one kind (a page names its causes and the test of each)."""
    return tuple(e for e in paper.explanations if e.kind == kind)


def reading_agreement_counts(frame: pd.DataFrame, readings: tuple[str, ...]) -> pd.DataFrame:
    """Per reading, how many cells of a paper / reading table (a column ``<reading> agrees`` each)
    agree with the paper: as printed, within tolerance, missed (a paper's code-reading study)."""
    return pd.DataFrame(
        [
            {
                "reading": reading,
                "cells": len(frame),
                **{kind: int((frame[f"{reading} agrees"] == kind).sum()) for kind in (AS_PRINTED, WITHIN_TOL, MISS)},
            }
            for reading in readings
        ]
    )


def spread_summary(frame: pd.DataFrame) -> str:
    """One paragraph on what the spread stores' choices do to the cells our text reading misses:
    how many of them they recompute, how far they move one per metric (median and widest), and on
    how many the printed number falls within their spread; empty without a spread store."""
    choices = spread_choices(frame)
    if not choices:
        return ""
    scores = frame[~frame["metric"].isin(list(param_rows()))]
    missed, held = scores[~scores["class"].isin(CLASSES[:2])], spread_cells(frame)
    if not len(held):
        return f"No store of another choice ({', '.join(choices)}) holds a score our text reading misses."
    moves = []
    for metric, cells in held.groupby("metric", sort=False):
        widest = cells.loc[cells["range"].idxmax()]
        moves.append(
            f"{METRIC_NAMES.get(metric, metric)} by {cells['range'].median():.3g} at the median and up to "
            f"{widest['range']:.3g} ({widest['model']} on {widest['dataset']}, table {widest['table']})"
        )
    reached = int((held["class"] == CLASSES[2]).sum())
    return (
        f"The choices no paper pins down ({', '.join(choices)}; ours: the default) recompute {len(held)} of "
        f"the {len(missed)} scores our text reading misses (tuning-parameter cells aside). They move "
        f"{'; '.join(moves)}. The printed number falls within their spread on {reached}."
    )


def two_readings_text(frame: pd.DataFrame) -> str:
    """A paper page's sentence on its code-reading table (one row per printed R² cell, columns
    ``text agrees`` and ``code agrees``): how many cells each reading brings within the agreement
    rule, and which cells one reading reaches and the other misses."""
    agrees = {r: frame[f"{r} agrees"] != MISS for r in ("text", "code")}

    def cells(mask: pd.Series) -> str:
        picked = frame[mask]
        return listing([f"{r.model} on {r.dataset}" for r in picked.itertuples()]) if len(picked) else "none"

    return (
        f"Of these {len(frame)} printed cells, the text reading agrees with {int(agrees['text'].sum())} "
        f"and the code reading with {int(agrees['code'].sum())} (as printed or within {R2_TOL:g}). "
        f"The code reading reaches {cells(agrees['code'] & ~agrees['text'])}, which the text misses; "
        f"the text reaches {cells(agrees['text'] & ~agrees['code'])}, which the code misses; "
        f"neither reaches {cells(~agrees['code'] & ~agrees['text'])}."
    )
