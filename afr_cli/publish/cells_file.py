"""``results/<paper>/cells.md``: every published cell of a paper with our value, its value under
each choice no paper pins down (the spread stores), and its class, so a researcher reads in one
file which misses are the paper's, the code's or the protocol's (``cell_classes`` decides; this
module only writes it down)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.catalogue.knowledge import Paper, param_rows
from afr_cli.publish.cell_classes import (
    CLASSES,
    class_counts,
    classify_paper,
    reading_counts,
    spread_choices,
    spread_summary,
)
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import table
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.tables.format import METRIC_NAMES, format_cell

CELLS_FILE = "cells.md"


def render_cells(paper: Paper, frame: pd.DataFrame) -> str:
    """The Markdown of ``cells.md`` for ``paper`` from ``classify_paper``'s frame."""
    counts, choices, params = class_counts(frame), spread_choices(frame), param_rows()
    lines = [
        f"# {paper.title}: every published cell, classed",
        "",
        f"Each of the {len(frame)} published cells in the first class that holds, on repetitions "
        f"0-{paper.reps - 1} (the paper's own splits; afr_cli/publish/cell_classes.py): "
        + "; ".join(f"{counts[c]} {c}" for c in CLASSES)
        + ".",
    ]
    readings = reading_counts(frame)
    code = ["code reading"] if len(readings) else []
    if len(readings):
        lines += [
            "",
            "The authors' code as a second reading ([models](../../docs/models.md)): per table, the cells it "
            "recomputes on the same splits, and how many of them each reading agrees with.",
            "",
            table(list(readings.columns), readings.astype(str).values.tolist(), ["---"] + ["---:"] * 5),
        ]
    if choices:
        lines += ["", spread_summary(frame)]
    headers = ["table", "dataset", "model", "metric", "paper", "ours", *code, *choices, "class"]
    rows = [
        [
            r["table"],
            r["dataset"],
            r["model"],
            METRIC_NAMES.get(r["metric"], r["metric"]),
            r["paper"],
            *(format_cell(r[c], r["metric"], params) for c in ("ours", *code, *choices)),
            r["class"],
        ]
        for r in frame.to_dict("records")
    ]
    align = ["---"] * 4 + ["---:"] * (2 + len(code) + len(choices)) + ["---"]
    return "\n".join(lines) + "\n\n" + table(headers, rows, align) + "\n"


def write_cells(paper: Paper, ctx: ReportContext) -> list[Path]:
    """Write ``<root>/<paper>/cells.md`` when the paper has published cells; the file when its
    bytes changed."""
    frame = classify_paper(paper, ctx)
    if not len(frame):
        return []
    path = ctx.root / paper.id / CELLS_FILE
    return [path] if write_if_changed(path, render_cells(paper, frame)) else []


def cells_by_paper(classed: list[tuple[Paper, pd.DataFrame]]) -> str:
    """The results page's table of every paper's published cells by class (each ``classify_paper``
    frame, of a paper that prints cells), each row linked to the paper's ``cells.md``."""
    rows = []
    for paper, frame in classed:
        counts = class_counts(frame)
        rows.append([f"[{paper.title}]({paper.id}/{CELLS_FILE})", str(len(frame)), *(str(counts[c]) for c in CLASSES)])
    return table(["paper", "cells", *CLASSES], rows, ["---"] + ["---:"] * (1 + len(CLASSES)))
