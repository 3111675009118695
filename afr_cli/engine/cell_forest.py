"""The forest behind one cell of an experiment, as a Decision Machine: refit, not stored.

A store keeps metrics, not forests; but every seed depends on names and indices only, so the
forest of (config, dataset, base, repetition)'s final stage (fit on the 80 %, scored on the 20 %)
is refit here exactly as the protocol fits it, and written with the (scaled) rows it was fit and
scored on, so its test metric can be recomputed from the file alone.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from afr_cli.config.experiment import load_experiment
from afr_cli.dm.machine import DecisionMachine
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import refit_final_stage
from afr_cli.errors import AfrInputError


def export_forest(
    config: str | Path, dataset: str, base_id: str, rep: int, out: str | Path, overrides: list[str] | None = None
) -> DecisionMachine:
    """Refit the final-stage forest of one unit, save it with its data to ``out``; returns the machine."""
    exp = load_experiment(config, overrides)
    if dataset not in exp.datasets:
        raise AfrInputError(
            f"{config}: --dataset: {dataset!r} is not in the experiment; allowed: {', '.join(exp.datasets)}"
        )
    bases = {b.id: b for b in exp.bases}
    if base_id not in bases:
        raise AfrInputError(
            f"{config}: --base: {base_id!r} is not a base of the experiment; allowed: {', '.join(bases)}"
        )
    if rep < 0:
        raise AfrInputError(f"{config}: --rep: {rep} is not allowed; allowed: an integer >= 0")
    out = Path(out)
    if out.suffix != ".npz" or not out.parent.is_dir():
        raise AfrInputError(f"--out: {out}: allowed: a .npz file in an existing directory")

    X, y = load_one(exp, dataset)
    stage = refit_final_stage(exp, dataset, bases[base_id], rep, X, y)
    machine = DecisionMachine.from_ensemble(stage.ensemble)
    machine.save(
        out,
        extra=dict(
            X_train=stage.X_train,
            y_train=stage.y_train,
            X_test=stage.X_test,
            y_test=stage.y_test,
            dataset=np.array(dataset),
            base=np.array(base_id),
            rep=np.int64(rep),
            config=np.array(str(config)),
            unit_hash=np.array(exp.unit_hash()),
        ),
    )
    return machine
