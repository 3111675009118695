"""Shared work gives the same bytes as the path without it: identical problems solved once
(the memo), forests read as prefixes of a larger one (rf, ert), and units differing only in
query-side noise computed together; and runs group their units accordingly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import run_unit
from afr_cli.engine.shared_work import TODAY, SharedWork, Speedups
from afr_cli.engine.tasks import UnitTask, run_task, unit_tasks
from afr_cli.ensembles.random_forests import _Forest, forest_ensemble, forest_prefix
from afr_cli.solvers.memo import SolveMemo, problem_key
from afr_cli.solvers.problems import LinearAttentionProblem, simplex_constraints
from afr_cli.solvers.solve import solve
from afr_cli.store import UnitRecord

SATRF = {
    "name": "memo-test",
    "seed": 5,
    "protocol": {"reps": 1, "inner_folds": 2, "seeding": "rep-index"},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 12, "min_samples_leaf": 10}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "softmax-y", "family": "sat-rf-y", "params": {"eps": 0.0, "gamma": 0.0}},
        {"id": "sat-rf-y", "family": "sat-rf-y", "grid": {"eps": [0.0, 0.5, 1.0], "gamma": [0.0, 0.5, 1.0]}},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}},
    ],
}
TREES = {
    "name": "trees-test",
    "seed": 1,
    "protocol": {"reps": 2, "seeding": "rep-index"},
    "datasets": ["Friedman1"],
    "bases": [{"id": f"{k.upper()}@{n}", "kind": k, "n_estimators": n} for k in ("rf", "ert") for n in (4, 9, 15)],
    "models": [
        {"id": "forest", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5]}},
    ],
}
NOISE = {
    "name": "noise-test",
    "seed": 9,
    "protocol": {
        "reps": 2,
        "inner_folds": 2,
        "train_fractions": [0.4, 0.8],
        "noise_eta": [0.0, 0.5],
        "noise_on": "test",
    },
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 10, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "robust", "family": "robust-rf", "grid": {"alpha": [0.002, 0.05]}},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5], "tau": [1, 10]}},
    ],
}


def _experiment(tmp_path: Path, config: dict, sets: list[str] | None = None):
    path = tmp_path / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config))
    exp = load_experiment(path, sets or [], tmp_path / "out")
    return exp, *load_one(exp, exp.datasets[0])


def _same(a: UnitRecord, b: UnitRecord) -> None:
    """Every stored value equal, bit for bit, but the times (seconds, solve log ms)."""
    assert (a.dataset, a.base, a.rep, a.split_seed, a.n_train, a.n_test, a.axes) == (
        b.dataset,
        b.base,
        b.rep,
        b.split_seed,
        b.n_train,
        b.n_test,
        b.axes,
    )
    untimed = [[{k: v for k, v in r.items() if k != "seconds"} for r in u.results] for u in (a, b)]
    assert repr(untimed[0]) == repr(untimed[1])  # repr: NaN == NaN and -0.0 != 0.0
    logs = [[{**g, "solves": [e[:4] + e[5:] for e in g["solves"]]} for g in u.grid] for u in (a, b)]
    assert repr(logs[0]) == repr(logs[1])


def test_the_memo_solves_identical_problems_once_and_a_unit_gives_the_same_rows(tmp_path):
    exp, X, y = _experiment(tmp_path, SATRF)
    today, memo = SharedWork(TODAY), SharedWork(Speedups())
    plain = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=today)
    shared = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=memo)
    _same(plain, shared)
    assert today.memo.hits == 0 and memo.memo.hits > 0  # the memo did skip solves
    assert memo.memo.solves + memo.memo.hits == today.memo.solves
    assert run_unit(exp, "Friedman1", exp.bases[0], 0, X, y).cpu_seconds > 0  # the default path: memo on


def test_the_memo_keys_every_byte_and_keeps_only_stateless_solvers():
    rng = np.random.default_rng(0)
    Phi, target = rng.random((30, 6)), rng.random(30)
    problem = LinearAttentionProblem(target, np.zeros(30), Phi, simplex_constraints(6))
    last_bit = Phi.copy()
    last_bit[3, 2] = np.nextafter(last_bit[3, 2], 2.0)  # one element one ulp away
    nudged = LinearAttentionProblem(target, np.zeros(30), last_bit, simplex_constraints(6))
    assert problem_key(problem, "l2", "AUTO") == problem_key(
        LinearAttentionProblem(target.copy(), np.zeros(30), Phi.copy(), simplex_constraints(6)), "l2", "auto"
    )
    assert problem_key(problem, "l2", "AUTO") != problem_key(nudged, "l2", "AUTO")
    assert problem_key(problem, "l2", "AUTO") != problem_key(problem, "l1", "AUTO")
    assert problem_key(problem, "l2", "AUTO") != problem_key(problem, "l2", "ECOS")
    memo = SolveMemo()
    first, hit = memo.solve(problem)
    again, hit_again = memo.solve(problem)
    assert not hit and hit_again and np.array_equal(first.theta, again.theta) and again.theta is not first.theta
    assert np.array_equal(first.theta, solve(problem).theta)
    osqp = SolveMemo()
    osqp.solve(problem, solver="OSQP")
    assert osqp.solve(problem, solver="OSQP")[1]  # every backend starts cold: OSQP is memoised too


GRAMS = {
    "name": "gram-test",
    "seed": 4,
    "protocol": {"reps": 1, "inner_folds": 2, "seeding": "rep-index"},
    "datasets": ["Friedman1"],
}
GRAM_MODELS = {  # base -> models whose grid varies r at a fixed Phi = eps B
    "gbm-dt": [{"id": "agboost", "family": "agboost", "grid": {"delta": [0.5, 0.9, 1.0], "eps": [0.0, 0.5, 1.0]}}],
    "rf": [{"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.5, 1.0], "tau": [0.1, 1, 10]}}],
}


@pytest.mark.parametrize("kind", list(GRAM_MODELS))
def test_grid_points_sharing_phi_share_its_gram_and_the_unit_gives_the_same_rows(tmp_path, kind):
    """AGBoost's delta and eps-ABRF's tau change r, not Phi = eps B: the Gram is built once per Phi."""
    config = {
        **GRAMS,
        "bases": [{"kind": kind, "n_estimators": 20, "min_samples_leaf": 5}],
        "models": [{"id": "plain", "family": "forest"}, *GRAM_MODELS[kind]],
    }
    exp, X, y = _experiment(tmp_path, config)
    today, shared = SharedWork(TODAY), SharedWork(Speedups())
    _same(
        run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=today),
        run_unit(exp, "Friedman1", exp.bases[0], 0, X, y, shared=shared),
    )
    assert today.memo.grams_reused == 0 and shared.memo.grams_reused > 0


def test_a_kept_gram_gives_the_bytes_of_a_fresh_one_and_the_memo_keeps_a_bounded_few(monkeypatch):
    import afr_cli.solvers.memo as solve_memo

    rng = np.random.default_rng(3)
    Phi = rng.random((40, 7))
    problems = [
        LinearAttentionProblem(rng.random(40), rng.random(40) * 0.1, Phi.copy(), simplex_constraints(7))
        for _ in range(4)
    ]
    memo = SolveMemo()
    for problem in problems:
        kept, _ = memo.solve(problem)
        assert kept.theta.tobytes() == solve(problem).theta.tobytes()
    assert memo.grams_reused == 3
    transposed = LinearAttentionProblem(problems[0].y, problems[0].r, np.asfortranarray(Phi), simplex_constraints(7))
    memo.solve(transposed)  # same values in another layout: its own Gram (a product's last bits follow the layout)
    assert memo.grams_reused == 3
    monkeypatch.setattr(solve_memo, "GRAM_CACHE_BYTES", 2 * 7 * 7 * 8)
    small = SolveMemo()
    for k in range(5):
        small.solve(LinearAttentionProblem(problems[0].y, problems[0].r, Phi + k, simplex_constraints(7)))
    assert len(small._grams) == 2 and small._gram_bytes == 2 * 7 * 7 * 8


@pytest.mark.parametrize("forest_class", [RandomForestRegressor, ExtraTreesRegressor], ids=["rf", "ert"])
@pytest.mark.parametrize("seed", [0, 7, 2023])
@pytest.mark.parametrize("max_features", [1.0, 0.5, "sqrt"])
def test_a_forest_of_fewer_trees_is_the_prefix_of_a_larger_one(forest_class, seed, max_features):
    X, y = make_friedman1(n_samples=120, random_state=seed)
    Xq = make_friedman1(n_samples=40, random_state=seed + 1)[0]
    large = forest_ensemble(
        forest_class(n_estimators=25, max_features=max_features, min_samples_leaf=3, random_state=seed, n_jobs=1).fit(
            X, y
        )
    )
    for n in (1, 6, 13, 25):
        alone = forest_ensemble(
            forest_class(
                n_estimators=n, max_features=max_features, min_samples_leaf=3, random_state=seed, n_jobs=1
            ).fit(X, y)
        )
        prefix = forest_prefix(large, n)
        assert prefix.n_trees == n and np.array_equal(prefix.tree_weights, alone.tree_weights)
        for a, b in zip(prefix.trees, alone.trees):
            assert np.array_equal(a.tree_.threshold, b.tree_.threshold)
            assert np.array_equal(a.tree_.feature, b.tree_.feature)
            assert np.array_equal(a.tree_.value, b.tree_.value)
        for rows in (X, Xq):
            assert np.array_equal(prefix.predict(rows), alone.predict(rows))
            assert np.array_equal(prefix.apply(rows), alone.apply(rows))
    assert large.n_trees == 25 and large.model.n_estimators == 25  # the large forest is left as it was


def test_bases_differing_in_tree_count_fit_one_forest_and_give_the_same_rows(tmp_path, monkeypatch):
    exp, X, y = _experiment(tmp_path, TREES)
    fitted = []
    fit = _Forest.fit
    monkeypatch.setattr(_Forest, "fit", lambda self, *a, **p: fitted.append(p["n_estimators"]) or fit(self, *a, **p))
    todo = [("Friedman1", b, a, r) for b in range(6) for a in exp.protocol.axes() for r in range(2)]
    tasks = unit_tasks(exp, todo)
    assert sorted(len(t.members) for t in tasks) == [3, 3, 3, 3]  # (rf, ert) x 2 reps
    for task in tasks:
        fitted.clear()
        shared = run_task(exp, task, X, y)
        assert fitted == [15] * 4  # one forest per stage (3 folds + refit), at the largest count
        alone = [
            run_unit(exp, task.dataset, exp.bases[b], task.rep, X, y, None, a[1], SharedWork(TODAY))
            for b, a in task.members
        ]
        for a, b in zip(alone, shared):
            _same(a, b)
    assert unit_tasks(exp, todo, TODAY) == [UnitTask(d, r, ((b, a),)) for d, b, a, r in todo]
    derived, *_ = _experiment(tmp_path, {**TREES, "protocol": {"reps": 2}})  # derived seeds name the base
    assert all(len(t.members) == 1 for t in unit_tasks(derived, todo))


def test_units_differing_only_in_test_noise_share_forest_and_solves_and_give_the_same_rows(tmp_path):
    exp, X, y = _experiment(tmp_path, NOISE)
    todo = [("Friedman1", 0, a, r) for a in exp.protocol.axes() for r in range(2)]
    tasks = unit_tasks(exp, todo)
    assert len(tasks) == 4 and all(len(t.members) == 2 for t in tasks)  # (fraction, rep): clean + noisy
    for task in tasks:
        shared = run_task(exp, task, X, y)
        for (b, axis), unit in zip(task.members, shared):
            _same(run_unit(exp, task.dataset, exp.bases[b], task.rep, X, y, axis[0], axis[1], SharedWork(TODAY)), unit)
    on_train, *_ = _experiment(tmp_path, {**NOISE, "protocol": {**NOISE["protocol"], "noise_on": "train"}})
    assert all(len(t.members) == 1 for t in unit_tasks(on_train, todo))  # noisy training rows: nothing shared
