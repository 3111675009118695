"""The contract every model family keeps on every ensemble it can attend over (present and future
families and ensembles are picked up from the registries): predictions are r + Phi theta of the
family's own problem, trained weights are feasible and no worse than random feasible points, the
estimators pass scikit-learn's checks, and runs are bit-identical whatever the worker count."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from afr_cli.ensembles import ENSEMBLES, get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES, LARF, SATRF, AGBoost, EpsABRF
from afr_cli.solvers.solve import LinearAttentionProblem, solve

# Small ensembles: a few trees, small leaves (fast, and every family still has something to attend to).
SMALL = {
    "rf": {"n_estimators": 4, "min_samples_leaf": 5},
    "ert": {"n_estimators": 4, "min_samples_leaf": 5},
    "dt": {"min_samples_leaf": 5},
    "gbm-dt": {"n_estimators": 6, "learning_rate": 0.2, "max_depth": 2, "min_samples_leaf": 5},
    "gbm-ert": {"n_estimators": 6, "learning_rate": 0.2, "max_depth": 2, "min_samples_leaf": 5},
}
PAIRS = [(f, e) for f, fam in FAMILIES.items() for e, ens in ENSEMBLES.items() if ens.structure in fam.structures]


def test_every_family_and_ensemble_is_covered():
    assert set(SMALL) == set(ENSEMBLES)
    assert {f for f, _ in PAIRS} == set(FAMILIES)
    assert ("agboost", "gbm-ert") in PAIRS and ("agboost", "rf") not in PAIRS and ("eps-abrf", "dt") in PAIRS


def _defaults(family) -> tuple[dict, dict]:
    design = {p.name: p.default for p in family.params if p.name in family.design_names()}
    mixing = {p.name: p.default for p in family.params if p.name in family.mixing_names()}
    return design, mixing


def _random_feasible(problem: LinearAttentionProblem, rng: np.random.Generator) -> np.ndarray:
    """A random feasible point: a random vector projected onto the constraints by the solver layer."""
    p = problem.constraints.size
    z = rng.normal(scale=2.0, size=p)
    projection = LinearAttentionProblem(z, np.zeros(p), np.eye(p), problem.constraints)
    return solve(projection, solver="CLARABEL").theta


@pytest.mark.parametrize("family_name, ensemble_name", PAIRS)
def test_family_contract(small_data, family_name, ensemble_name):
    Xtr, ytr, Xte, _ = small_data
    family = FAMILIES[family_name]
    fitted = get_ensemble(ensemble_name).fit(Xtr, ytr, 7, **SMALL[ensemble_name])
    stats = LeafStatistics(fitted, Xtr, ytr)
    design, mixing = _defaults(family)
    feats_train, feats_query = family.features(stats.rows(), design), family.features(stats.rows(Xte), design)
    problem = family.training_problem(feats_train, ytr, mixing)
    if problem is None:  # nothing trained at these values: the untrained prediction is all there is
        pred = family.predict(feats_query, mixing, None)
        assert pred.shape == (len(Xte),) and np.isfinite(pred).all()
        return
    theta = solve(problem, solver="CLARABEL").theta
    assert problem.constraints.violation(theta) < 1e-6
    rng = np.random.default_rng(0)
    if isinstance(problem, LinearAttentionProblem):
        # predictions are r + Phi theta of the family's own problem, on the training and the query rows
        np.testing.assert_allclose(
            family.predict(feats_train, mixing, theta), problem.r + problem.Phi @ theta, rtol=1e-9, atol=1e-9
        )
        on_query = family.training_problem(feats_query, np.zeros(len(Xte)), mixing)
        np.testing.assert_allclose(
            family.predict(feats_query, mixing, theta), on_query.r + on_query.Phi @ theta, rtol=1e-9, atol=1e-9
        )
    else:  # a direct objective (QuadraticProblem / LinearProblem): predictions are still affine in theta
        other = _random_feasible(problem, rng)
        mix = 0.3 * theta + 0.7 * other
        np.testing.assert_allclose(
            family.predict(feats_query, mixing, mix),
            0.3 * family.predict(feats_query, mixing, theta) + 0.7 * family.predict(feats_query, mixing, other),
            rtol=1e-9,
            atol=1e-9,
        )
    # the trained point is no worse than random feasible points on the training objective
    best = problem.objective(theta, "l2")
    for _ in range(5):
        other = _random_feasible(problem, rng)
        assert problem.constraints.violation(other) < 1e-6
        assert best <= problem.objective(other, "l2") * (1 + 1e-6) + 1e-9


ESTIMATORS = {
    "EpsABRF": lambda base: EpsABRF(base=base, n_estimators=4, min_samples_leaf=1, random_state=0),
    "SATRF": lambda base: SATRF(variant="yx", base=base, n_estimators=4, min_samples_leaf=1, random_state=0),
    "LARF": lambda base: LARF(variant="em-w-larf", M=2, base=base, n_estimators=4, min_samples_leaf=1, random_state=0),
    "AGBoost": lambda base: AGBoost(
        learner=base.removeprefix("gbm-"),
        n_estimators=6,
        learning_rate=0.2,
        max_depth=2,
        min_samples_leaf=2,
        random_state=0,
    ),
}
# every estimator on every ensemble it can take (on their defaults, rf and gbm-dt, their own test files check them)
ESTIMATOR_PAIRS = [
    (name, e)
    for name, make in ESTIMATORS.items()
    for e, ens in ENSEMBLES.items()
    if ens.structure in make("rf" if name != "AGBoost" else "gbm-dt").family.structures
    and (name == "AGBoost") == e.startswith("gbm-")
    and e not in ("rf", "gbm-dt")
]


@pytest.mark.slow
@pytest.mark.parametrize("name, ensemble_name", ESTIMATOR_PAIRS)
def test_estimators_pass_sklearn_checks_on_every_ensemble(name, ensemble_name):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(ESTIMATORS[name](ensemble_name))


def _config(path, bases: list[dict], families: list[str]) -> str:
    cfg = {
        "name": "contract",
        "seed": 3,
        "protocol": {"reps": 1, "inner_folds": 2},
        "datasets": ["Friedman1"],
        "bases": bases,
        "models": [{"id": f, "family": f} for f in families],
    }
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("structure", sorted({e.structure for e in ENSEMBLES.values()}))
def test_runs_are_bit_identical_across_worker_counts(tmp_path, structure):
    """Every family on every ensemble of a structure (one unit per ensemble), with 1 worker and with 2."""
    from afr_cli.config.experiment import load_experiment
    from afr_cli.engine.runner import RunOptions, run_experiment
    from afr_cli.store import load_results

    kinds = [e for e, ens in ENSEMBLES.items() if ens.structure == structure]
    families = [f for f, fam in FAMILIES.items() if structure in fam.structures]
    path = _config(tmp_path / "c.yaml", [{"kind": k, **SMALL[k]} for k in kinds], families)
    frames = []
    for jobs in (1, 2):
        exp = load_experiment(path, results_dir=tmp_path / f"jobs{jobs}")
        run_experiment(exp, RunOptions(jobs=jobs, progress=False), echo=lambda *_: None)
        rows = load_results(tmp_path / f"jobs{jobs}").sort_values(["dataset", "base", "model", "rep"])
        frames.append(rows[["dataset", "base", "model", "rep", "r2", "mae", "rmse"]].reset_index(drop=True))
    assert len(frames[0]) == len(kinds) * len(families) and frames[0].r2.notna().all()
    pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)
