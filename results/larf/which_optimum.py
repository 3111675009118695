"""Evidence for afr_cli/papers/larf/page.md, "Which optimum": on an 80-row set the epsM-w-LARF training
QP can have a zero objective on a whole face of its feasible set, and each solver returns another
point of it. Regression, RF, repetition 34 (the repetition `afr diff` found moved most), the
unit's own split, scaling and forest, refit on its 80 training rows at the two grid points the
old (OSQP) and new (AUTO) stores selected; per solver: the objective, the weights' norm and the
test R² (the AUTO and OSQP rows equal the stores' cells: results/larf_rf and its OSQP predecessor).
Run:  PYTHONPATH=. python results/larf/which_optimum.py
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import r2_score
from sklearn.preprocessing import StandardScaler

from afr_cli.config import load_experiment
from afr_cli.data import load_dataset
from afr_cli.models import LARF
from afr_cli.protocol import UnitSeeds

DATASET, REP = "Regression", 34
POINTS = ({"tau0": 100.0, "M": 1}, {"tau0": 1.0, "M": 20})  # chosen under OSQP, under AUTO
SOLVERS = ("OSQP", "auto", "CLARABEL", "ECOS")


def main() -> None:
    exp = load_experiment("configs/larf_rf.yaml")
    base = exp.bases[0]
    X, y = load_dataset(DATASET, exp.data_seed, exp.synthetic_noise)
    seeds = UnitSeeds(exp, DATASET, base, REP)
    train, test = seeds.split_rows(len(y))
    scaler = StandardScaler().fit(X[train])
    X_train, X_test = scaler.transform(X[train]), scaler.transform(X[test])
    print(f"{DATASET} / RF, repetition {REP}: {len(train)} training rows")
    for point in POINTS:
        for solver in SOLVERS:
            model = LARF(variant="em-w-larf", base=base.kind, random_state=seeds.forest(-1), solver=solver,
                         **point, **{k: v for k, v in base.params.items() if v is not None}).fit(X_train, y[train])
            result = model.solve_result_
            r2 = r2_score(y[test], model.predict(X_test))
            print(f"  tau0={point['tau0']:g} M={point['M']} {solver:8s} ({result.solver}: {result.status}) "
                  f"objective {result.objective:.3g}, |weights| {np.linalg.norm(result.theta):.3g}, "
                  f"{result.theta.size} weights, test R2 {r2:.4f}")


if __name__ == "__main__":
    main()
