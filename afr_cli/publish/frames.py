"""The words and choices around the frames every published file is made from: a missing store
(``StoreMissing``), the reports a build writes (``chosen_reports``), a committed report's table
read back (``report_table``), how a store's compute and a repetition count are said.

The lowest layer of afr_cli/publish/: the frames themselves are read once per build by the report
context (context.py), which every step is handed; nothing here keeps state.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from afr_cli.catalogue.knowledge import Report, reports
from afr_cli.errors import AfrInputError
from afr_cli.store import has_results


class StoreMissing(LookupError):
    """A study needs a store that this results root does not hold (a scratch ``--root``): its block
    is left as it is, as a report without stores writes nothing."""


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


def compute_words(minutes: float, measured: str) -> str:
    """A store's recorded compute (``StoreStatus.recorded_compute``) as a page says it: CPU minutes,
    or wall-clock minutes, named as such, for a store made before CPU was recorded."""
    unit = "CPU-min" if measured == "CPU" else "wall-clock min"
    if 0 < minutes < 0.5:  # a small scratch store: never "0 CPU-min" for compute that was spent
        return f"under 1 {unit}"
    return f"{minutes:.0f} {unit}"


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


def report_by_name() -> dict[str, Report]:
    """Every report of every paper's data file, by name (read at call time: a paper folder added
    from outside the package, ``afr reproduce path/to/folder``, is seen)."""
    return {r.name: r for r in reports()}


def chosen_reports(
    names: list[str] | None,
    root: Path | None = None,
    echo=lambda line: sys.stderr.write(line + "\n"),
    known: dict[str, Report] | None = None,
) -> list[Report]:
    """The reports named (all when None), or a one-line error listing the known ones. With
    ``root``, only the reports whose every store ``root`` holds: a report missing a store is
    skipped, and ``echo`` says so in one line naming the stores it lacks, when it was named or
    ``root`` holds another of its stores (a partial target: ``afr reproduce CONFIG --root DIR``
    makes one store of a report that compares two); a report none of whose stores is there is not
    this root's and is left out silently. ``known``: the reports by name (a report context's),
    else every report of the process's catalogue."""
    known = report_by_name() if known is None else known
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
