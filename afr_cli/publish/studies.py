"""Studies: a paper's analyses beyond its tables (``afr_cli/papers/<paper>/studies.py``), each a
function ``f(ctx) -> pandas.DataFrame`` of the report context (context.py: the results root and
its stores, read once per build) declared in the paper's data file (``studies:``), rendered
by ``afr report`` into the generated block of the page that quotes its numbers.

A study with ``cache`` is expensive (it refits models): its frame is computed only by
``afr report --studies`` and written to that csv under ``root``; every other ``afr report`` (and
``--check``) renders the block from the committed csv, so the page never waits on a refit.

How a frame is shown: a study's ``show`` function (cheap: a pivot, a ranking) may turn its frame
into the one shown, or into Markdown text (a ``str``: a generated sentence or bullets that quote
the frame's numbers, written into the block as it is); a frame is shown as a table, floats at the study's ``digits``
decimals, or by the format spec its
``formats`` gives the column (``+.3f`` for differences, ``.2g`` for p-values); missing values
are "—"; everything else as text.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd

from afr_cli.catalogue.knowledge import Paper, Study
from afr_cli.errors import AfrInputError
from afr_cli.publish.context import ReportContext, load_studies
from afr_cli.publish.frames import StoreMissing
from afr_cli.publish.markdown import table
from afr_cli.publish.pages import is_project_results
from afr_cli.store import has_results


def study_function(
    paper: Paper,
    study: Study,
    name: str | None = None,
    ctx: ReportContext | None = None,
    module: ModuleType | None = None,
):
    """The function a study names (``name``: another of its file, its ``show``), or a one-line
    error naming the file and what it holds; the file is loaded once per report context ``ctx``
    (without one, from ``module`` when the caller loaded it, else for this call)."""
    if module is None:
        module = ctx.studies_module(paper) if ctx is not None else load_studies(paper)
    fn = getattr(module, name or study.function, None)
    if not callable(fn):
        known = sorted(
            n
            for n, v in vars(module).items()
            if callable(v) and not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
        )
        raise AfrInputError(
            f"{paper.studies_file}: {name or study.function}: no such function; allowed: {', '.join(known)}"
        )
    return fn


def study_frame(paper: Paper, study: Study, ctx: ReportContext, refresh: bool = False) -> pd.DataFrame | None:
    """The study's frame: computed from the report context (and, when cached, written to its csv
    when ``refresh``), else read from its committed csv; None for a cached study whose csv is not
    there yet."""
    if study.cache is None:
        return study_function(paper, study, ctx=ctx)(ctx)
    cache = ctx.root / study.cache
    if refresh:
        frame = study_function(paper, study, ctx=ctx)(ctx)
        cache.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(cache, index=False, float_format="%.6g")
        return frame
    return pd.read_csv(cache) if cache.is_file() else None


def _escaped(text: str) -> str:
    """Text for a Markdown table cell: a bare ``|`` (as in ``|weights|``) would split the cell."""
    return text.replace("\\|", "|").replace("|", "\\|")


def _cell(value, spec: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, float):
        return format(value, spec)
    return _escaped(str(value))


def render_frame(frame: pd.DataFrame, digits: int, formats: dict[str, str] | None = None) -> str:
    """A frame as a Markdown table (see the module's doc for the number format)."""
    formats = formats or {}
    rows = [
        [
            _cell(v.item() if hasattr(v, "item") else v, formats.get(str(c), f".{digits}f"))
            for c, v in zip(frame.columns, row)
        ]
        for row in frame.itertuples(index=False)
    ]
    return table([_escaped(str(c)) for c in frame.columns], rows)


def own_papers(papers: tuple[Paper, ...], root: Path) -> list[Paper]:
    """The papers ``root`` is a results root of: those holding at least one of their experiments'
    stores there. Another paper's studies would read stores and files this root never had (a
    scratch root of a toy paper holds no LARF store)."""

    def holds(paper: Paper) -> bool:
        for spec in getattr(paper, "experiments", ()):
            try:
                if has_results(Path(root) / spec.store()):
                    return True
            except AfrInputError:  # a config without a name: no store to look for
                continue
        return False

    return [p for p in papers if holds(p)]


def study_blocks(
    papers: tuple[Paper, ...],
    ctx: ReportContext,
    refresh: bool = False,
    echo=lambda line: sys.stderr.write(line + "\n"),
) -> tuple[dict[str, str], list[Path]]:
    """Every declared study's block body by block name, and the cache files written (``refresh``);
    a study whose stores ``root`` does not hold is left out (its block stays as it is), and so is
    every study of a paper none of whose stores ``root`` holds (``own_papers``). Under a
    scratch root (``afr reproduce --root DIR --datasets ...``) the stores may hold only some of a
    paper's datasets: a study that fails on them is left out too, and ``echo`` says which and why;
    under the project's own ``results/`` a study's failure is raised (a broken study must not pass
    ``afr report --check`` by leaving its block as it was)."""
    blocks, written = {}, []
    root = ctx.root
    scratch = not is_project_results(root)
    for paper in own_papers(papers, root):
        for study in paper.studies:
            try:
                frame = study_frame(paper, study, ctx, refresh)
            except StoreMissing:
                continue
            except (KeyError, ValueError, IndexError, FileNotFoundError) as err:  # a report not written there
                if not scratch:
                    raise
                echo(
                    f"skipped study {paper.id}:{study.block}: the stores under {root} lack what it reads "
                    f"({type(err).__name__}: {err})"
                )
                continue
            if refresh and study.cache:
                written.append(root / study.cache)
            if frame is None:
                continue
            shown = study_function(paper, study, study.show, ctx)(frame) if study.show else frame
            blocks[study.block] = shown if isinstance(shown, str) else render_frame(shown, study.digits, study.formats)
    return blocks, written
