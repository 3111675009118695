"""Which repetitions a comparison of B against A pairs: those where both models hold a defined
score. A repetition where one model's score is NaN (R² of a constant test split, a failed unit
stored as NULL) is dropped for BOTH models, so each dataset's two means, its difference and its
correlated t-test are over the same splits; the drop is counted, and a dataset left with no
repetition is named, so that no table claims more repetitions than it used."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

KEYS = ["base", "dataset", "rep"]


@dataclass(frozen=True)
class Dropped:
    """The repetitions of one base dropped from a comparison because a model's score is undefined."""

    by_dataset: dict[str, int] = field(default_factory=dict)  # dataset -> repetitions dropped
    left_out: tuple[str, ...] = ()  # datasets with no repetition left: out of every test

    @property
    def total(self) -> int:
        return sum(self.by_dataset.values())

    def sentence(self, a: str, b: str, metric: str) -> str:
        """'' when nothing was dropped; else what was dropped, where, and what left the tests."""
        if not self.total:
            return ""
        where = ", ".join(f"{d} {n}" for d, n in self.by_dataset.items())
        plural = "repetition" if self.total == 1 else "repetitions"
        text = (
            f"{self.total} {plural} where {a}'s or {b}'s {metric} is undefined (NaN) dropped for both models ({where})"
        )
        if self.left_out:
            text += f"; left out of the tests, no repetition with both scores defined: {', '.join(self.left_out)}"
        return text

    def as_dict(self) -> dict:
        return {"repetitions": self.total, "by_dataset": dict(self.by_dataset), "left_out": list(self.left_out)}


def paired_repetitions(
    results: pd.DataFrame, a: str, b: str, metric: str, order=None
) -> tuple[pd.DataFrame, dict[str, Dropped]]:
    """(rows of A and B on the (base, dataset, repetition) both hold with a defined ``metric``,
    per base what was dropped). Each dataset's two means are then over the same splits, even when
    one store has been extended further than the other or one score is NaN. ``order`` sorts the
    datasets of a drop's sentence (the tables' dataset order)."""
    pair = results[results["model"].isin([a, b])]
    held = pair.groupby(KEYS)["model"].nunique()
    held = held[held == 2].index
    both_held = pair[pd.MultiIndex.from_frame(pair[KEYS]).isin(held)]
    undefined = both_held.loc[both_held[metric].isna(), KEYS].drop_duplicates()
    if undefined.empty:
        return both_held, {}
    bad = pd.MultiIndex.from_frame(undefined)
    kept = both_held[~pd.MultiIndex.from_frame(both_held[KEYS]).isin(bad)]
    dropped = {}
    for base, rows in undefined.groupby("base", sort=False):
        counts = rows.groupby("dataset", sort=False)["rep"].nunique()
        names = sorted(counts.index, key=order) if order else list(counts.index)
        remaining = set(kept.loc[kept["base"] == base, "dataset"])
        dropped[str(base)] = Dropped(
            {str(d): int(counts[d]) for d in names}, tuple(str(d) for d in names if d not in remaining)
        )
    return kept, dropped
