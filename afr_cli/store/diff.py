"""Two stores of one experiment, cell by cell: how far each model's score moved between them
(a store regenerated under another solver or version of the code), on the units both hold.

A cell is (dataset, base, model[, protocol axes]); per cell: the repetitions both stores hold,
the largest and the mean change of the metric, and in how many of them the selected
hyperparameters differ (a changed choice of grid point is what moves a score by more than
solver tolerance)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tabulate import tabulate

from afr_cli.errors import AfrInputError
from afr_cli.store.reader import open_existing
from afr_cli.store.schema import axis_names, varying_axes

METRICS = ("r2", "mae", "rmse")
CELL = ["dataset", "base", "model"]


@dataclass(frozen=True)
class StoreDiff:
    """The per-cell changes, and the units only one of the stores holds."""

    cells: pd.DataFrame  # CELL + axes, reps, max_abs, mean, params_changed; largest change first
    metric: str
    common_units: int
    only_old: int
    only_new: int


def changes(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """``new - old`` per value, with NaN on both sides no change (0) and a value on one side only
    an infinite change: a score that appears or vanishes has moved, whatever the threshold."""
    delta = np.where(np.isnan(old) & np.isnan(new), 0.0, new - old)
    return np.where(np.isnan(delta), np.inf, delta)


def _units(frame: pd.DataFrame, axes: list[str]) -> set[tuple]:
    return set(frame[["dataset", "base", "rep", *axes]].itertuples(index=False, name=None))


def diff_stores(old: str | Path, new: str | Path, metric: str = "r2") -> StoreDiff:
    """Compare the selected rows (``results``) of two stores or exports on their common units."""
    if metric not in METRICS:
        raise AfrInputError(f"--metric: {metric!r} is not allowed; allowed: {', '.join(METRICS)}")
    return diff_frames(
        open_existing(old).frame("results"),
        open_existing(new).frame("results"),
        metric,
        old_name=str(old),
        new_name=str(new),
    )


def diff_frames(
    a: pd.DataFrame, b: pd.DataFrame, metric: str = "r2", old_name: str = "the first", new_name: str = "the second"
) -> StoreDiff:
    """:func:`diff_stores` on two ``results`` frames already read (each with the cell columns, ``rep``,
    the metric and ``params``; a kept copy of a store's selected rows serves as well as the store)."""
    axes = [c for c in axis_names() if c in a.columns and c in b.columns]
    key = CELL + axes + ["rep"]
    merged = a[key + [metric, "params"]].merge(b[key + [metric, "params"]], on=key, suffixes=("_old", "_new"))
    if merged.empty:
        raise AfrInputError(f"{new_name}: no (dataset, base, model, repetition) in common with {old_name}")
    axes = varying_axes(merged)
    delta = changes(merged[f"{metric}_old"].to_numpy(float), merged[f"{metric}_new"].to_numpy(float))
    merged = merged.assign(
        delta=delta,
        abs_delta=np.abs(delta),
        changed=[p != q for p, q in zip(merged["params_old"], merged["params_new"])],
    )
    cells = (
        merged.groupby(CELL + axes, sort=True)
        .agg(
            reps=("rep", "nunique"),
            max_abs=("abs_delta", "max"),
            mean=("delta", "mean"),
            params_changed=("changed", "sum"),
        )
        .reset_index()
        .sort_values(["max_abs"] + CELL + axes, ascending=[False] + [True] * (len(CELL) + len(axes)), kind="mergesort")
        .reset_index(drop=True)
    )
    units_a, units_b = _units(a, axes), _units(b, axes)
    return StoreDiff(cells, metric, len(units_a & units_b), len(units_a - units_b), len(units_b - units_a))


def render_diff(d: StoreDiff, threshold: float = 1e-4, top: int | None = 20, fmt: str = "md") -> str:
    """A summary line and the cells, largest change first (``top`` of them; None: all)."""
    cells = d.cells if top is None else d.cells.head(top)
    if fmt == "csv":
        return d.cells.to_csv(index=False, float_format="%.6g").rstrip("\n")
    above = int((d.cells["max_abs"] > threshold).sum())
    worst = d.cells.iloc[0]
    where = " / ".join(str(worst[c]) for c in CELL)
    head = (
        f"{len(d.cells)} cells over {d.common_units} common units (only in the first: {d.only_old}, "
        f"only in the second: {d.only_new}); largest |Δ{d.metric}| {worst['max_abs']:.3g} ({where}); "
        f"{above} cell(s) above {threshold:g}"
    )
    shown = cells.assign(
        max_abs=cells["max_abs"].map(lambda v: f"{v:.3g}"), mean=cells["mean"].map(lambda v: f"{v:+.3g}")
    )
    shown = shown.rename(
        columns={
            "max_abs": f"max |Δ{d.metric}|",
            "mean": f"mean Δ{d.metric}",
            "params_changed": "reps with other params",
        }
    )
    return head + "\n\n" + tabulate(shown, headers="keys", tablefmt="github", showindex=False, disable_numparse=True)
