"""The report context: what one ``afr report`` reads, read once and passed down.

``build.write_all`` (and ``afr report --check``) makes one :class:`ReportContext` from the results
root and hands it to every step below it: the report files, the claims ledger, the block builders,
the pages, the site and each paper's study functions (``afr_cli/papers/<id>/studies.py``, called
as ``f(ctx)``). They ask it for a store's frames, a store's status, a report's results in a view,
the catalogue's papers and published tables, and a paper's study code; each is read on first use
and kept for the context's life in caches the context owns. So one build reads each store once,
and nothing is module-global: a new context (the next ``afr report`` in the same process, or a
test that rewrote a store) starts empty, with nothing to reset.

What it does not keep: the files ``afr report`` itself writes (a report's ``compare.md``, the
site), which a later step of the same build reads back as written.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pandas as pd

from afr_cli.catalogue.knowledge import Catalogue, Paper, Report, catalogue
from afr_cli.catalogue.published import published_table
from afr_cli.errors import AfrInputError
from afr_cli.publish.frames import StoreMissing
from afr_cli.publish.page_words import shown_root
from afr_cli.publish.pages import is_project_results
from afr_cli.store import has_results, open_existing
from afr_cli.store.status import StoreStatus, store_status
from afr_cli.tables import results_in_view

T = TypeVar("T")


@dataclass(frozen=True)
class StoreFrames:
    """One store's results and grid rows and the metric its experiment selects by, read once."""

    results: pd.DataFrame
    grid: pd.DataFrame
    select_by: str


class ReportContext:
    """Everything one report build reads from the results ``root``, each read on first use.

    ``shown`` is how the pages name that root (``results`` for the project's own; under ``afr
    report --check`` the scratch copy names the root it stands for); ``known`` the catalogue of
    papers (default: the process's). ``reads`` counts the stores read from disk, by directory:
    after any build each count is 1. ``project``: whether the root is the project's own
    ``results/`` or stands for it (``afr report --check``'s scratch copy), whose committed pages
    are its own; default: whether ``root`` is the project's.
    """

    def __init__(
        self, root: Path, shown: str | None = None, known: Catalogue | None = None, project: bool | None = None
    ):
        self.root = Path(root)
        self.shown = shown if shown is not None else shown_root(self.root)
        self.project = is_project_results(self.root) if project is None else project
        self.catalogue = known if known is not None else catalogue()
        self.reads: Counter[Path] = Counter()
        self._stores: dict[Path, StoreFrames | None] = {}
        self._memo: dict[Hashable, Any] = {}

    # -- the catalogue ----------------------------------------------------------------------------
    @property
    def papers(self) -> tuple[Paper, ...]:
        """Every known paper, in order (the context's catalogue)."""
        return self.catalogue.papers

    def reports_by_name(self) -> dict[str, Report]:
        """Every report of every paper, by name."""
        return {r.name: r for r in self.catalogue.reports()}

    def published_table(self, spec: str) -> pd.DataFrame:
        """The published cells of one table (``paper:table``), as the catalogue read them."""
        return published_table(spec, self.catalogue)

    # -- the stores -------------------------------------------------------------------------------
    def directory(self, store: str | Path) -> Path:
        """A store's directory: ``store`` under the root (a path as it is when absolute)."""
        return self.root / store

    def store(self, store: str | Path) -> StoreFrames | None:
        """A store's frames through the store's read paths (the store, else its export), or None
        when there is neither; a damaged store is its one-line error, not a silently missing store."""
        directory = self.directory(store)
        key = directory.resolve()
        if key not in self._stores:
            frames = None
            if has_results(directory):
                reader = open_existing(directory)
                config = reader.manifest().get("config") or {}
                select_by = (config.get("protocol") or {}).get("select_by", "r2")
                frames = StoreFrames(reader.frame("results"), reader.frame("grid"), select_by)
                self.reads[key] += 1
            self._stores[key] = frames
        return self._stores[key]

    def stored(self, store: str | Path) -> StoreFrames:
        """A store's frames, or ``StoreMissing`` when there is neither the store nor its export."""
        frames = self.store(store)
        if frames is None:
            raise StoreMissing(str(self.directory(store)))
        return frames

    def status(self, store: str | Path) -> StoreStatus:
        """``afr status`` of a store, computed once, or ``StoreMissing`` when the root lacks it."""
        directory = self.directory(store)
        if not has_results(directory):
            raise StoreMissing(str(directory))
        return self.once(("status", directory.resolve()), lambda: store_status(directory))

    def shown_store(self, store: str) -> str:
        """A store's path as a page names it: ``results/dm_soft``, or ``/tmp/p2dm/dm_soft``."""
        return f"{self.shown}/{store}"

    def report_frames(
        self, report: Report | str, reps: int | None = None, selection: str = "stored"
    ) -> pd.DataFrame | None:
        """The report's results over the stores that exist (repetitions 0..reps-1) in one view,
        None without any; each view is computed once, and every caller gets its own copy."""
        if isinstance(report, str):
            report = self.reports_by_name()[report]
        frame = self.once(
            ("view", report.name, report.stores, reps, selection), lambda: self._view(report, reps, selection)
        )
        return None if frame is None else frame.copy()

    def _view(self, report: Report, reps: int | None, selection: str) -> pd.DataFrame | None:
        held = [f for f in (self.store(s) for s in report.stores) if f is not None]
        if not held:
            return None
        return pd.concat(
            [results_in_view(f.results, f.grid, selection, reps, f.select_by) for f in held], ignore_index=True
        )

    # -- the papers' study code -------------------------------------------------------------------
    def studies_module(self, paper: Paper) -> ModuleType:
        """The paper's studies.py, loaded from its file once (a folder outside the package works the same)."""
        return self.once(("studies", paper.studies_file), lambda: load_studies(paper))

    # -- anything else computed once per build ----------------------------------------------------
    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, run the first time ``key`` is asked for and kept for this context."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


def load_studies(paper: Paper) -> ModuleType:
    """A paper's studies.py, executed from its file (no ``__pycache__`` is written into the paper's
    folder: checking a target before it runs writes nothing); a one-line error when it is missing."""
    path = paper.studies_file
    if not path.is_file():
        raise AfrInputError(f"{path}: missing; the paper {paper.id!r} declares studies")
    spec = importlib.util.spec_from_file_location(f"afr_paper_studies_{paper.id}", path)
    module = importlib.util.module_from_spec(spec)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = writes
    return module
