"""The frames every published file is made from: each store's results and grid, loaded once per
process, and a report's results over its stores under one selection and repetition count.

The lowest layer of afr_cli/publish/: tables, claims, pages and the site all read their numbers
through ``report_frames`` / ``load_store``, and nothing here imports them back.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from afr_cli.catalogue.knowledge import Report, reports
from afr_cli.errors import AfrInputError
from afr_cli.store import has_results, load_grid, load_results, store_select_by
from afr_cli.store.status import StoreStatus, store_status
from afr_cli.tables import results_in_view


@dataclass
class StoreFrames:
    """One store's results and grid rows, loaded once per ``afr report``."""

    results: pd.DataFrame
    grid: pd.DataFrame


_LOADED: dict[Path, StoreFrames | None] = {}


def load_store(directory: Path) -> StoreFrames | None:
    """A store's frames through the store's read paths (the store, else its export), or None when
    there is neither; a damaged store is its one-line error, not a silently missing store."""
    key = Path(directory).resolve()
    if key not in _LOADED:
        _LOADED[key] = StoreFrames(load_results(directory), load_grid(directory)) if has_results(directory) else None
    return _LOADED[key]


class StoreMissing(LookupError):
    """A study needs a store that this results root does not hold (a scratch ``--root``): its block
    is left as it is, as a report without stores writes nothing."""


def stored(directory: Path) -> StoreFrames:
    """A store's frames, or ``StoreMissing`` when there is neither the store nor its export."""
    frames = load_store(directory)
    if frames is None:
        raise StoreMissing(str(directory))
    return frames


def report_table(path: Path) -> pd.DataFrame:
    """The first Markdown table of a committed report (e.g. a ``compare.md`` written by ``afr
    report``) as text cells, one column per header; it ends at the first line that is not a row."""
    lines = [line for line in Path(path).read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header):
            break
        rows.append(dict(zip(header, cells)))
    return pd.DataFrame(rows)


def stored_status(directory: Path) -> StoreStatus:
    """``afr status`` of a store (:class:`afr_cli.store.status.StoreStatus`), or ``StoreMissing`` when
    there is neither the store nor its export (a study on a scratch root)."""
    if not has_results(directory):
        raise StoreMissing(str(directory))
    return store_status(directory)


def compute_words(minutes: float, measured: str) -> str:
    """A store's recorded compute (``StoreStatus.recorded_compute``) as a page says it: CPU minutes,
    or wall-clock minutes, named as such, for a store made before CPU was recorded."""
    unit = "CPU-min" if measured == "CPU" else "wall-clock min"
    if 0 < minutes < 0.5:  # a small scratch store: never "0 CPU-min" for compute that was spent
        return f"under 1 {unit}"
    return f"{minutes:.0f} {unit}"


def forget_loaded() -> None:
    """Drop the loaded stores (a test that rewrites a store in one process)."""
    _LOADED.clear()


def reps_shortfall(frame: pd.DataFrame, reps: int | None, where: str) -> str:
    """'' when every (dataset, base, model) of ``frame`` holds at least ``reps`` repetitions;
    otherwise one line saying that fewer are used than --reps asked for, and how many are held."""
    if reps is None or frame.empty:
        return ""
    held = frame.groupby(["dataset", "base", "model"])["rep"].nunique()
    short = held[held < reps]
    if short.empty:
        return ""
    if len(short) == len(held) and short.nunique() == 1:
        span = f"only {short.iloc[0]} repetitions are stored"
    else:
        fewest = short.groupby(level=["model", "base"]).min()
        span = f"{len(short)} of {len(held)} (dataset, base, model) hold fewer: " + ", ".join(
            f"{m} ({b}) {n}" for (m, b), n in fewest.items()
        )
    return f"--reps {reps}: {span} in {where}; those are used"


def reps_suffix(reps: int | None) -> str:
    """'' for every repetition, 'reps<N>' for the first N: how files of a restricted count are named."""
    return "" if reps is None else f"reps{reps}"


def report_frames(
    report: Report, root: Path, reps: int | None = None, selection: str = "stored"
) -> pd.DataFrame | None:
    """The report's results over the stores that exist (repetitions 0..reps-1), None without any."""
    stores = [(root / s, load_store(root / s)) for s in report.stores]
    stores = [(d, f) for d, f in stores if f is not None]
    if not stores:
        return None
    return pd.concat(
        [results_in_view(f.results, f.grid, selection, reps, store_select_by(d)) for d, f in stores], ignore_index=True
    )


def report_by_name() -> dict[str, Report]:
    """Every report of every paper's data file, by name (read at call time: a paper folder added
    from outside the package, ``afr reproduce path/to/folder``, is seen)."""
    return {r.name: r for r in reports()}


def chosen_reports(
    names: list[str] | None, root: Path | None = None, echo=lambda line: sys.stderr.write(line + "\n")
) -> list[Report]:
    """The reports named (all when None), or a one-line error listing the known ones. With
    ``root``, only the reports whose every store ``root`` holds: a report missing a store is
    skipped, and ``echo`` says so in one line naming the stores it lacks, when it was named or
    ``root`` holds another of its stores (a partial target: ``afr reproduce CONFIG --root DIR``
    makes one store of a report that compares two); a report none of whose stores is there is not
    this root's and is left out silently."""
    known = report_by_name()
    for name in names or []:
        if name not in known:
            raise AfrInputError(f"report {name!r} is unknown; allowed: {', '.join(known)}")
    chosen = [known[n] for n in names] if names else list(known.values())
    if root is None:
        return chosen
    out = []
    for report in chosen:
        lacking = [s for s in report.stores if not has_results(Path(root) / s)]
        if not lacking:
            out.append(report)
        elif names or len(lacking) < len(report.stores):
            echo(
                f"skipped report {report.name}: {root} lacks its store{'s' * (len(lacking) > 1)} "
                f"{', '.join(str(Path(root) / s) for s in lacking)}"
            )
    return out
