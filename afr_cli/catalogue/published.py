"""The papers, one folder each (``afr_cli/papers/<id>/``): their published tables and t-tests
as DataFrames; ``afr_cli.catalogue.knowledge`` reads the folders' data files.

The CSVs keep every number as printed (see README.md here); the loaders add a float
``value`` beside the printed string ``value_str`` so both exact and numeric views exist.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.catalogue.knowledge import Catalogue, catalogue, unit_axes
from afr_cli.errors import AfrInputError

PAPERS_DIR = Path(__file__).resolve().parents[1] / "papers"
TTESTS_FILE = PAPERS_DIR / "ttests.csv"  # the t-tests printed in the papers' texts, one file for all


def _published_files(known: Catalogue) -> dict[str, Path]:
    """Paper id -> its published CSV (in its folder, as its data file names it)."""
    return {p.id: (p.folder / p.published if p.folder else PAPERS_DIR / p.published) for p in known.papers}


def extra_keys() -> tuple[str, ...]:
    """Key columns some tables have beyond (dataset, base): the papers' unit axes."""
    return tuple(unit_axes())


def _read_file(path: Path, keys: tuple[str, ...]) -> pd.DataFrame:
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame = raw.rename(columns={"value": "value_str"})
    frame["value"] = frame["value_str"].astype(float)
    for key in keys:
        if key in frame.columns:
            frame[key] = frame[key].astype(float)
    return frame


def _read(paper: str, known: Catalogue) -> pd.DataFrame:
    """One paper's published cells, read once per catalogue (callers must not change the frame)."""
    path = _published_files(known)[paper]
    keys = tuple(axis for p in known.papers for axis in p.axes)
    return known.read_once(("published", path), lambda: _read_file(path, keys))


def load_published(paper: str | None = None, known: Catalogue | None = None) -> pd.DataFrame:
    """All published table cells (or one paper's): paper, table, base, dataset, model,
    metric, value_str (as printed), value (float), plus train_fraction/noise_eta for robust_rf."""
    known = known or catalogue()
    files = _published_files(known)
    if paper is None:
        return pd.concat([_read(p, known) for p in files], ignore_index=True)
    if paper not in files:
        raise AfrInputError(f"unknown paper {paper!r}; allowed: {', '.join(files)}")
    return _read(paper, known).copy()


def load_ttests(known: Catalogue | None = None) -> pd.DataFrame:
    """The t-tests reported in the papers' text; numbers stay printed strings ('' = not given)."""
    known = known or catalogue()
    frame = known.read_once(("ttests", TTESTS_FILE), lambda: pd.read_csv(TTESTS_FILE, dtype=str, keep_default_na=False))
    return frame.copy()


def available_tables(known: Catalogue | None = None) -> list[str]:
    """Every published table as a ``paper:table`` spec, e.g. ``satrf:9`` or ``agboost:II``."""
    known = known or catalogue()
    return [
        f"{paper}:{table}" for paper in _published_files(known) for table in pd.unique(_read(paper, known)["table"])
    ]


def published_table(spec: str, known: Catalogue | None = None) -> pd.DataFrame:
    """The cells of one published table, given as ``paper:table`` (case-insensitive), from the
    catalogue ``known`` (default: the process's)."""
    known = known or catalogue()
    info = known.table_info(spec)
    wanted = info.spec.lower() if info is not None else spec.strip().lower()
    tables = available_tables(known)
    for name in tables:
        if name.lower() == wanted:
            paper, table = name.split(":")
            frame = _read(paper, known)
            return frame[frame["table"] == table].reset_index(drop=True)
    raise AfrInputError(f"unknown paper table {spec!r}; allowed: {', '.join(tables)}")
