"""Committed stores against their regeneration: does the new path give the same numbers?

``afr bench regenerated OLD NEW`` pairs every store under ``NEW`` (a ``afr reproduce --all --root
NEW`` run) with the store or export at the same place under ``OLD`` (the committed ``results``)
and compares them on the units both hold:

- the selected rows (``results``): every metric (R², MAE, RMSE) and the inner-CV score, and
  whether the selected hyperparameters and the solver outcomes are the same;
- every grid point's test scores (``grid``), at the precision the export keeps them (``grid_digits``
  significant digits): a new exact score within half a unit of the last kept digit of the old
  one has not moved, and is counted apart where it rounds the other way (an earlier export that
  rounded a value twice, through an intermediate precision, lands on the other side of a tie);
- the compute: the new units' recorded CPU seconds and the old units' wall seconds.

Its record is what the pages quote for "regenerated, nothing moved" (``bench:regenerated``): a
claim about numbers that the reproduction can no longer recompute once the new exports replace
the old ones, so the command that compared them writes it down.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from afr_cli.errors import AfrInputError
from afr_cli.store.diff import CELL, METRICS, changes
from afr_cli.store.export import GRID_ROUNDED, rounded
from afr_cli.store.reader import find_stores, has_results, open_existing
from afr_cli.store.schema import axis_names

SCORES = (*METRICS, "cv_score")  # every number of a selected row that must not move


def _rounded(values: pd.Series, digits: int) -> np.ndarray:
    """The export's rounding of each grid score (``export.rounded``; not finite: as it is)."""
    x = values.to_numpy(float)
    return np.array([rounded(v, digits) if np.isfinite(v) else v for v in x]) if digits else x


def _abs_change(both: pd.DataFrame, column: str) -> np.ndarray:
    """|new - old| of ``column`` per row of a merged frame (``column_old``/``column_new``), by
    ``diff.changes``'s rule for missing values."""
    return np.abs(changes(both[f"{column}_old"].to_numpy(float), both[f"{column}_new"].to_numpy(float)))


def _largest_change(both: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row of a merged frame: the largest |new - old| over ``columns``, and which column it is."""
    if not len(both):
        return np.zeros(0), np.zeros(0, dtype=int)
    per_column = np.column_stack([_abs_change(both, c) for c in columns])
    return per_column.max(axis=1), per_column.argmax(axis=1)


def _keys(frame: pd.DataFrame, extra: list[str]) -> list[str]:
    """A row's key: its cell, protocol axes, repetition, then ``extra``."""
    return [*CELL, *[c for c in axis_names() if c in frame.columns], "rep", *extra]


def compare_store(old_dir: Path, new_dir: Path, threshold: float) -> dict:
    """One store against its regeneration (see the module docstring); the numbers a record keeps."""
    old, new = open_existing(old_dir), open_existing(new_dir)
    old_units, new_units = old.frame("units"), new.frame("units")
    old_res, new_res = old.frame("results"), new.frame("results")
    key = _keys(old_res, [])
    both = old_res.merge(new_res, on=key, suffixes=("_old", "_new"))
    if not len(both):
        raise AfrInputError(f"{new_dir}: no (dataset, base, model, repetition) in common with {old_dir}")
    moved, which = _largest_change(both, list(SCORES))
    cell = key[:-1]
    per_cell = pd.Series(moved).groupby([both[c].to_numpy() for c in cell]).max()
    at = int(np.argmax(moved))
    where = (
        "—"
        if moved[at] == 0
        else (
            f"{SCORES[which[at]]}, "
            + " / ".join(str(both[c].iloc[at]) for c in CELL)
            + f" / rep {both['rep'].iloc[at]}"
        )
    )
    grid_rows, grid_moved, grid_flips, grid_largest = _compare_grids(
        old.frame("grid"), new.frame("grid"), _grid_digits(old)
    )
    cpu = new_units["cpu_seconds"].dropna() if "cpu_seconds" in new_units else pd.Series(dtype=float)
    return {
        "units_old": len(old_units),
        "units_new": len(new_units),
        "units_common": len(both[[c for c in key if c not in ("model",)]].drop_duplicates()),
        "cells": int(len(per_cell)),
        "cells_above": int((per_cell > threshold).sum()),
        "largest": float(moved[at]),
        "largest_where": where,
        "params_changed": int(sum(p != q for p, q in zip(both["params_old"], both["params_new"]))),
        "solver_status_changed": int(sum(p != q for p, q in zip(both["solver_status_old"], both["solver_status_new"]))),
        "grid_rows": grid_rows,
        "grid_moved": grid_moved,
        "grid_rounding_flips": grid_flips,
        "grid_largest": grid_largest,
        "cpu_min_new": round(float(cpu.sum()) / 60, 2),
        "cpu_units_new": int(len(cpu)),
        "wall_min_old": round(float(old_units["seconds"].sum()) / 60, 2) if len(old_units) else 0.0,
    }


ROUNDING_SLACK = 1e-3  # relative slack on half a unit of the last kept digit (a value rounded twice)


def _half_unit(rounded: np.ndarray, digits: int) -> np.ndarray:
    """Half a unit in the last of ``digits`` significant digits of each (rounded) value: how far the
    exact value it was rounded from can lie (0 where the value is 0 or not finite)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = np.floor(np.log10(np.abs(rounded)))
        half = 0.5 * 10.0 ** (exponent - digits + 1)
    return np.where(np.isfinite(half), half, 0.0)


def _compare_grids(old: pd.DataFrame, new: pd.DataFrame, digits: int) -> tuple[int, int, int, float]:
    """Grid points both hold: how many, how many moved, how many only round the other way, and the
    largest |change| of a moved test score. With ``digits`` (the old side is an export that keeps
    that many significant digits), a new exact score within half a unit of the old rounded one
    (and ``ROUNDING_SLACK``, for a value an earlier export rounded twice) has not moved, even where
    it rounds to the neighbouring value; otherwise each side is compared as it is."""
    if not len(old) or not len(new):
        return 0, 0, 0, 0.0
    scores = [c for c in GRID_ROUNDED if c in old.columns and c in new.columns]
    key = _keys(old, ["point"])
    sides = []
    for frame in (old, new):
        side = frame[key + scores].copy()
        side["point"] = side["point"].map(lambda p: json.dumps(p, sort_keys=True))
        sides.append(side)
    both = sides[0].merge(sides[1], on=key, suffixes=("_old", "_new"))
    moved = np.zeros(len(both), dtype=bool)
    flipped = np.zeros(len(both), dtype=bool)
    largest = 0.0
    for c in scores:
        x = both[f"{c}_old"].to_numpy(float)
        change = _abs_change(both, c)
        if digits:
            away = change > _half_unit(x, digits) * (1 + ROUNDING_SLACK)
            flipped |= ~away & (_rounded(both[f"{c}_new"], digits) != x) & ~np.isnan(x)
        else:
            away = change > 0
        moved |= away
        if away.any():
            largest = max(largest, float(change[away].max()))
    return len(both), int(moved.sum()), int((flipped & ~moved).sum()), largest


def _grid_digits(reader) -> int:
    """The significant digits the old side keeps grid scores to: its export's, or exact for a store
    (or an export from before grid scores were rounded)."""
    return int(reader.meta().get("grid_digits", 0)) if reader.source == "export" else 0


def compare_roots(old_root: str | Path, new_root: str | Path, threshold: float = 1e-9) -> dict:
    """Every store under ``new_root`` against the one at the same place under ``old_root``."""
    old_root, new_root = Path(old_root), Path(new_root)
    stores = find_stores(new_root)
    if not stores:
        raise AfrInputError(
            f"{new_root}: no results store here; allowed: a root a reproduction wrote (afr reproduce --all --root DIR)"
        )
    rows = []
    for new_dir in stores:
        rel = new_dir.relative_to(new_root)
        old_dir = old_root / rel
        if not has_results(old_dir):
            raise AfrInputError(
                f"{old_dir}: no store or export to compare {new_dir} with; allowed: the "
                f"committed results root the new root regenerates"
            )
        rows.append({"store": rel.as_posix(), **compare_store(old_dir, new_dir, threshold)})
    return {
        "old": str(old_root),
        "new": str(new_root),
        "threshold": threshold,
        "stores": rows,
        "cells_above": sum(r["cells_above"] for r in rows),
        "cpu_min_new": round(sum(r["cpu_min_new"] for r in rows), 1),
    }
