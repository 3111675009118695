"""What a results store holds: which (dataset, base, repetition) units, what they cost, how the
solves went. ``afr status`` prints it, so a long run's progress and its solver fallbacks are one
command away, and a reader of a committed store can see what its tables rest on."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from afr_cli.store import find_stores, open_existing


@dataclass
class StoreStatus:
    directory: Path
    manifest: dict
    reps: pd.DataFrame  # index dataset, columns base: how many repetitions are stored
    gaps: list[str] = field(default_factory=list)  # (dataset, base) whose stored reps are not 0..n-1
    compute_minutes: float = 0.0
    solves: Counter = field(default_factory=Counter)  # "SOLVER:status", "fallbacks", "failed"
    source: str = "store"  # "store" (store.sqlite) or "export" (the committed export, no store here)

    @property
    def units(self) -> int:
        return int(self.reps.to_numpy().sum())

    @property
    def solved(self) -> int:
        return sum(n for key, n in self.solves.items() if ":" in key)


def store_status(directory: str | Path) -> StoreStatus:
    """Coverage, compute time and solver outcomes of one store (a one-line error if there is none)."""
    store = open_existing(directory)
    units = store.frame("units")
    results = store.frame("results")
    reps = (units.groupby(["dataset", "base"]).size().unstack("base", fill_value=0)
            if len(units) else pd.DataFrame())
    gaps = []
    for (dataset, base), stored in units.groupby(["dataset", "base"])["rep"]:
        expected = set(range(int(stored.max()) + 1))
        missing = sorted(expected - set(stored))
        if missing:
            gaps.append(f"{dataset} / {base}: {len(stored)} repetitions up to {stored.max()}, "
                        f"missing {_ranges(missing)}")
    solves = Counter()
    # A best-of row repeats its components' solves: count each solve once.
    own = results[~results["params"].map(lambda p: "component" in p)] if len(results) else results
    for status in own.get("solver_status", []):
        solves.update(status)
    return StoreStatus(Path(directory), store.manifest(), reps, gaps,
                       float(units["seconds"].sum()) / 60 if len(units) else 0.0, solves, store.source)


def _ranges(values: list[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    out, run = [], [values[0]]
    for value in values[1:]:
        if value == run[-1] + 1:
            run.append(value)
        else:
            out.append(run)
            run = [value]
    out.append(run)
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in out)


def render_status(status: StoreStatus, detail: bool = False) -> str:
    """A few lines per store; the per-dataset table when coverage is uneven or ``detail`` asks."""
    from tabulate import tabulate

    m = status.manifest
    commit = str(m.get("git_commit") or "unknown")[:7]
    where = f"{status.directory}" + (" (export)" if status.source == "export" else "")
    lines = [f"{where}: experiment {m.get('experiment', '?')} ({m.get('config_source', '?')}, "
             f"config {m.get('config_hash', '?')}, code {commit})"]
    runs = m.get("runs", [])
    if len(runs) > 1:
        commits = list(dict.fromkeys(str(r.get("git_commit") or "unknown")[:7] for r in runs))
        modified = sum(bool(r.get("code_modified")) for r in runs)
        lines.append(f"  {len(runs)} runs, code {', '.join(commits)}"
                     + (f"; {modified} with uncommitted changes to afr_cli" if modified else ""))
    if not status.units:
        return "\n".join(lines + ["  no units stored yet"])
    counts = status.reps.to_numpy()
    low, high = int(counts.min()), int(counts.max())
    same = "every" if low == high else "uneven:"
    span = f"{low} repetitions on {same} (dataset, base)" if low == high else \
        f"{same} {low} to {high} repetitions per (dataset, base)"
    n_data, n_bases = len(status.reps.index), len(status.reps.columns)
    lines.append(f"  {status.units} units: {n_data} dataset{'s' * (n_data != 1)} x {n_bases} base{'s' * (n_bases != 1)}, "
                 f"{span}; {status.compute_minutes:.1f} min of compute")
    if status.solves:
        by_solver = ", ".join(f"{k} {n}" for k, n in sorted(status.solves.items()) if ":" in k)
        fell_back, failed = status.solves.get("fallbacks", 0), status.solves.get("failed", 0)
        share = f" ({100 * fell_back / status.solved:.2f} %)" if status.solved else ""
        lines.append(f"  solves: {by_solver}; fallbacks {fell_back}{share}; failed {failed}")
    lines += [f"  gap: {g}" for g in status.gaps]
    if detail or low != high or status.gaps:
        table = status.reps.reset_index()
        lines.append("  " + tabulate(table.values.tolist(), headers=list(table.columns),
                                     tablefmt="simple").replace("\n", "\n  "))
    return "\n".join(lines)
