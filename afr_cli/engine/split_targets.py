"""Splits on which R² is undefined, found before a run computes anything.

R² divides by the variance of the scored targets: on a split whose test rows all hold one target
value (a sparse target, two non-zero values in 40 rows) it is undefined. A run would store it as
NULL and tables would average R² over fewer repetitions than they name, or, selecting by R², find
no grid point with a score and stop mid-way. The same holds for an inner validation fold when the
inner CV selects by R². ``check_split_targets`` computes the experiment's splits exactly as the
run makes them (``afr_cli.engine.protocol.UnitSeeds``), and refuses such a dataset in one line naming
each (dataset, repetition); ``afr validate`` and ``afr run`` call it on every file and loader
dataset (the registered ones never have a constant split).
"""

from __future__ import annotations

import numpy as np

from afr_cli.config.experiment import Experiment
from afr_cli.engine.protocol import UnitSeeds, needs_inner_cv
from afr_cli.errors import AfrInputError

SHOWN = 5  # splits named in the message; the count says how many there are in all


def _constant(values: np.ndarray) -> bool:
    return values.size > 0 and bool(np.all(values == values[0]))


def undefined_r2_splits(exp: Experiment, dataset: str, y: np.ndarray) -> list[str]:
    """'(dataset, repetition r[, train_fraction f][, inner fold k])' for every split of ``exp`` on
    ``dataset`` whose scored targets are constant (inner folds only when they select by R²)."""
    folds_matter = needs_inner_cv(exp) and exp.protocol.select_by == "r2"
    found = []
    for fraction in exp.protocol.train_fractions or (None,):
        for rep in range(exp.protocol.reps):
            seeds = UnitSeeds(exp, dataset, None, rep, fraction)
            train, test = seeds.split_rows(len(y))
            where = f"{dataset}, repetition {rep}" + ("" if fraction is None else f", train_fraction {fraction:g}")
            if _constant(y[test]):
                found.append(f"({where})")
            elif folds_matter:
                from sklearn.model_selection import KFold  # only where inner folds are checked

                folds = KFold(exp.protocol.inner_folds, shuffle=True, random_state=seeds.folds)
                bad = [k for k, (_, held_out) in enumerate(folds.split(train)) if _constant(y[train[held_out]])]
                if bad:
                    found.append(f"({where}, inner fold {bad[0]})")
    return found


def check_split_targets(exp: Experiment, dataset: str, y: np.ndarray, where: str) -> None:
    """Refuse in one line a dataset with a split on which R² is undefined (module docstring)."""
    found = undefined_r2_splits(exp, dataset, y)
    if not found:
        return
    splits = len(exp.protocol.train_fractions or (None,)) * exp.protocol.reps
    named = ", ".join(found[:SHOWN]) + (f" and {len(found) - SHOWN} more" if len(found) > SHOWN else "")
    raise AfrInputError(
        f"{where}: the target is constant on the scored rows of {len(found)} of {splits} splits: {named}, so R² "
        f"is undefined there; allowed: a target that varies within every test split and inner fold (more rows, "
        f"a larger test_fraction, fewer inner_folds, or another seed)"
    )
