"""An idle baseline of what the reproduction costs: the code before against today's, same units.

``afr bench baseline BEFORE AFTER`` reads two results roots that the same command wrote over the
same units (``afr reproduce ... --reps N --root DIR``), one by the code that recorded the committed
stores (a worktree of that commit) and one by today's code, run one after the other on an
otherwise idle machine. A CPU second is worth a different amount of work from one day to the
next on a shared virtual machine (forest fitting, whose code did not change, took 1.4x longer on
one day than on another), so a total recorded on another day is no baseline for a CPU target:
the two sides of this comparison ran in the same hour.

Per store it reports:

- the units both roots hold, and whether the code changed any number on them (the comparison of
  ``afr bench regenerated``: cells moved above the threshold, grid points moved, other
  selections and solver outcomes);
- each side's recorded CPU (``cpu_seconds``) on those units, and their ratio;
- the CPU the committed store recorded on the same units (the day it was made), when it has it;
- both sides projected to the repetitions the committed store holds (the units the paper runs):
  each side's CPU times the committed units over the sampled ones.

Shared forests' CPU sits on the unit that fits them first in both runs alike (``afr reproduce``
fuses the same way whatever ``--reps``), so a group's stores add up to the same work on each side.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.benchmarks.regenerated import compare_store
from afr_cli.errors import AfrInputError
from afr_cli.store.reader import find_stores, has_results, open_existing
from afr_cli.store.schema import KEYS, axis_names


def unit_key(units: pd.DataFrame) -> list[str]:
    """A unit's key in a units frame: dataset, base, the protocol axes it has, repetition."""
    dataset, base, rep = KEYS["units"]
    return [dataset, base, *[a for a in axis_names() if a in units.columns], rep]


def cpu_minutes(units: pd.DataFrame, keys: pd.DataFrame) -> float | None:
    """The recorded CPU minutes of the units of ``units`` whose key is in ``keys``; None when any
    of them has no CPU recorded (a store made before ``cpu_seconds``)."""
    if "cpu_seconds" not in units:
        return None
    chosen = units.merge(keys, on=list(keys.columns))
    cpu = chosen["cpu_seconds"]
    if len(chosen) < len(keys) or cpu.isna().any():
        return None
    return float(cpu.sum()) / 60


def compare_cost(before_dir: Path, after_dir: Path, committed_dir: Path, threshold: float) -> dict:
    """One store: numbers unchanged by the code, each side's CPU on the common units, the committed
    store's on them, and both sides projected to the committed store's units."""
    before, after = open_existing(before_dir).frame("units"), open_existing(after_dir).frame("units")
    key = unit_key(after)
    common = before[key].merge(after[key], on=key).drop_duplicates()
    if not len(common):
        raise AfrInputError(f"{after_dir}: no unit in common with {before_dir}; allowed: two runs of the same units")
    numbers = compare_store(before_dir, after_dir, threshold)
    cpu_before, cpu_after = cpu_minutes(before, common), cpu_minutes(after, common)
    if cpu_before is None or cpu_after is None:
        raise AfrInputError(
            f"{before_dir if cpu_before is None else after_dir}: units without recorded CPU; allowed: "
            "stores written by a reproduction that records cpu_seconds"
        )
    committed = open_existing(committed_dir).frame("units")
    scale = len(committed) / len(common)
    return {
        "units": len(common),
        "units_committed": len(committed),
        "cells_above": numbers["cells_above"],
        "grid_moved": numbers["grid_moved"],
        "grid_rows": numbers["grid_rows"],
        "grid_rounding_flips": numbers["grid_rounding_flips"],
        "params_changed": numbers["params_changed"],
        "solver_status_changed": numbers["solver_status_changed"],
        "cpu_min_before": round(cpu_before, 3),
        "cpu_min_after": round(cpu_after, 3),
        "cpu_min_committed_same_units": _rounded(cpu_minutes(committed, common)),
        "cpu_min_committed": _rounded(cpu_minutes(committed, committed[unit_key(committed)])),
        "projected_before": round(cpu_before * scale, 2),
        "projected_after": round(cpu_after * scale, 2),
    }


def _rounded(minutes: float | None) -> float | None:
    return None if minutes is None else round(minutes, 3)


def compare_costs(
    before_root: str | Path, after_root: str | Path, committed_root: str | Path, threshold: float
) -> dict:
    """Every store under ``after_root`` against the same place under ``before_root``, projected
    with the committed store at that place under ``committed_root``; totals over the stores."""
    before_root, after_root, committed_root = Path(before_root), Path(after_root), Path(committed_root)
    stores = find_stores(after_root)
    if not stores:
        raise AfrInputError(f"{after_root}: no results store here; allowed: a root afr reproduce --root DIR wrote")
    rows = []
    for after_dir in stores:
        rel = after_dir.relative_to(after_root)
        for root in (before_root, committed_root):
            if not has_results(root / rel):
                raise AfrInputError(
                    f"{root / rel}: no store or export to compare {after_dir} with; allowed: a root holding "
                    f"the same stores (the run by the code before, the committed results)"
                )
        rows.append(
            {
                "store": rel.as_posix(),
                **compare_cost(before_root / rel, after_root / rel, committed_root / rel, threshold),
            }
        )
    total = {
        k: round(sum(r[k] for r in rows), 2)
        for k in ("cpu_min_before", "cpu_min_after", "projected_before", "projected_after")
    }
    committed = [r["cpu_min_committed"] for r in rows]
    return {
        "before": str(before_root),
        "after": str(after_root),
        "committed": str(committed_root),
        "threshold": threshold,
        "stores": rows,
        "cells_above": sum(r["cells_above"] for r in rows),
        "grid_moved": sum(r["grid_moved"] for r in rows),
        **total,
        "ratio": round(total["cpu_min_after"] / total["cpu_min_before"], 4) if total["cpu_min_before"] else None,
        "cpu_min_committed": None if None in committed else round(sum(committed), 2),
    }
