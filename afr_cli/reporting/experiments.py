"""A results root's own experiments: every store under it that no paper of the catalogue claims.

A researcher's ``afr run mine.yaml --out results/mine`` leaves a store at ``results/mine``; that
store is an experiment of the root, named by its path under the root (``mine``,
``sweeps/noise``), and ``afr report`` gives it a summary, a report and a page beside the papers'.
A store a paper's report or experiment names is the paper's, reported on its page instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from afr_cli.catalogue.knowledge import Catalogue
from afr_cli.errors import AfrInputError
from afr_cli.store import has_results, open_existing

SKIPPED_FOLDERS = frozenset({"site", "bench"})  # written by afr report and afr bench: never stores


@dataclass(frozen=True)
class Experiment:
    """One store of a root that is not a paper's: its name (the store's path under the root, with
    ``/``), the config's name and description as the store's manifest records them."""

    name: str
    config_name: str
    description: str

    @property
    def store(self) -> str:
        """The store's directory under the root."""
        return self.name

    @property
    def page(self) -> str:
        """Its page under ``site/``: ``experiment-<name>.html``, a ``/`` in the name as ``-``."""
        return f"experiment-{self.name.replace('/', '-')}.html"


def paper_stores(known: Catalogue) -> set[str]:
    """Every store a paper of ``known`` names: its reports' stores and its experiments' stores."""
    stores = {s for report in known.reports() for s in report.stores}
    for paper in known.papers:
        for spec in getattr(paper, "experiments", ()):
            try:
                stores.add(spec.store())
            except AfrInputError:  # a config without a name names no store
                continue
    return stores


def _described(root: Path, name: str) -> Experiment:
    config = (open_existing(root / name).manifest().get("config")) or {}
    return Experiment(name, str(config.get("name") or name), str(config.get("description") or ""))


def root_experiments(root: Path, known: Catalogue) -> list[Experiment]:
    """The experiments of ``root``, by name: each directory holding a store (its SQLite file or its
    export) that no paper of ``known`` names; the folders afr itself writes are not looked into,
    nor is a store's own folder."""
    root = Path(root)
    if not root.is_dir():
        return []
    claimed = paper_stores(known)
    found = []
    for folder, subfolders, _ in os.walk(root):
        here = Path(folder)
        if here != root and has_results(here):
            subfolders[:] = []
            name = here.relative_to(root).as_posix()
            if name not in claimed:
                found.append(name)
            continue
        subfolders[:] = sorted(
            d for d in subfolders if not d.startswith(".") and not (here == root and d in SKIPPED_FOLDERS)
        )
    return [_described(root, name) for name in sorted(found)]


def experiments_named(root: Path, known: Catalogue, names: list[str]) -> list[Experiment]:
    """The experiments of ``root`` that ``names`` name (a trailing ``/`` ignored), in that order."""
    held = {e.name: e for e in root_experiments(root, known)}
    return [held[n.rstrip("/")] for n in names if n.rstrip("/") in held]
