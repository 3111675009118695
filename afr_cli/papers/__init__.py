"""The papers' published tables and t-tests (package data in this folder), as DataFrames.

The CSVs keep every number as printed (see README.md here); the loaders add a float
``value`` beside the printed string ``value_str`` so both exact and numeric views exist.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

from afr_cli.errors import AfrInputError

PAPER_DIR = Path(__file__).resolve().parent



def _paper_files() -> dict[str, str]:
    """Paper id -> its published CSV, as each paper's data file names it."""
    from afr_cli.papers.knowledge import papers

    return {p.id: p.published for p in papers()}


PAPER_FILES: dict[str, str] = _paper_files()


def extra_keys() -> tuple[str, ...]:
    """Key columns some tables have beyond (dataset, base): the papers' unit axes."""
    from afr_cli.papers.knowledge import unit_axes

    return tuple(unit_axes())


EXTRA_KEYS = extra_keys()


@lru_cache(maxsize=None)
def _read(paper: str) -> pd.DataFrame:
    raw = pd.read_csv(PAPER_DIR / PAPER_FILES[paper], dtype=str, keep_default_na=False)
    frame = raw.rename(columns={"value": "value_str"})
    frame["value"] = frame["value_str"].astype(float)
    for key in EXTRA_KEYS:
        if key in frame.columns:
            frame[key] = frame[key].astype(float)
    return frame


def load_published(paper: str | None = None) -> pd.DataFrame:
    """All published table cells (or one paper's): paper, table, base, dataset, model,
    metric, value_str (as printed), value (float), plus train_fraction/noise_eta for robust_rf."""
    if paper is None:
        return pd.concat([_read(p) for p in PAPER_FILES], ignore_index=True)
    if paper not in PAPER_FILES:
        raise AfrInputError(f"unknown paper {paper!r}; allowed: {', '.join(PAPER_FILES)}")
    return _read(paper).copy()


@lru_cache(maxsize=None)
def _read_ttests() -> pd.DataFrame:
    return pd.read_csv(PAPER_DIR / "ttests.csv", dtype=str, keep_default_na=False)


def load_ttests() -> pd.DataFrame:
    """The t-tests reported in the papers' text; numbers stay printed strings ('' = not given)."""
    return _read_ttests().copy()


def available_tables() -> list[str]:
    """Every published table as a ``paper:table`` spec, e.g. ``satrf:9`` or ``agboost:II``."""
    return [f"{paper}:{table}" for paper in PAPER_FILES for table in pd.unique(_read(paper)["table"])]


def published_table(spec: str) -> pd.DataFrame:
    """The cells of one published table, given as ``paper:table`` (case-insensitive)."""
    from afr_cli.papers.knowledge import table_info

    info = table_info(spec)
    wanted = info.spec.lower() if info is not None else spec.strip().lower()
    for known in available_tables():
        if known.lower() == wanted:
            paper, table = known.split(":")
            frame = _read(paper)
            return frame[frame["table"] == table].reset_index(drop=True)
    raise AfrInputError(f"unknown paper table {spec!r}; allowed: {', '.join(available_tables())}")
