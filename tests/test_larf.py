"""LARF: leaf attention against a brute-force loop, every variant's formula, constraints, equivalences."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, LARF, EpsABRF, larf_leaf
from afr_cli.models.larf import LARF_FAMILIES, head_taus, larf_family, mixture_features
from afr_cli.models.larf_leaf import leaf_attention, leaf_distances
from afr_cli.solvers.solve import ConstraintBuilder, LinearAttentionProblem, solve

SMALL = dict(n_estimators=6, min_samples_leaf=5, random_state=0)
DESIGN = dict(tau0=0.5, M=3)


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(70, noise=1.0, random_state=1)
    return X[:50], y[:50], X[50:]


@pytest.fixture(scope="module")
def stats(data):
    X, y, _ = data
    return LeafStatistics(get_ensemble("rf").fit(X, y, 3, n_estimators=7, min_samples_leaf=5), X, y)


def brute_leaf(stats: LeafStatistics, X: np.ndarray, tau0: float, leave_self_out: bool = False):
    """keys (n, T, m) and values (n, T) by a loop over rows and trees (``leave_self_out``: X is
    the training set and row i leaves itself out of its leaves, unless alone there)."""
    leaves = stats.leaf_ids(X)
    n, T = leaves.shape
    keys, values = np.zeros((n, T, X.shape[1])), np.zeros((n, T))
    for i in range(n):
        for k in range(T):
            members = stats.members(leaves[i, k])
            if leave_self_out and len(members) > 1:
                members = members[members != i]
            d = ((stats.X[members] - X[i]) ** 2).sum(axis=1)
            mu = np.exp(-(d - d.min()) / tau0)
            mu /= mu.sum()
            keys[i, k], values[i, k] = mu @ stats.X[members], mu @ stats.y[members]
    return keys, values


def softmax_rows(d: np.ndarray, tau: float) -> np.ndarray:
    z = np.exp(-(d - d.min(axis=1, keepdims=True)) / tau)
    return z / z.sum(axis=1, keepdims=True)


def brute_prediction(model: LARF, X: np.ndarray) -> np.ndarray:
    """(1/M) sum_j (1-eps_j) sum_k softmax_k(-||x - A_k||^2 / tau_j) B_k + mean(eps) sum_k w_k B_k."""
    family = larf_family(model.variant)
    stats = model.leaf_stats_
    if family.leaf:
        keys, values = brute_leaf(stats, X, model.tau0)
    else:
        leaves = stats.leaf_ids(X)
        keys, values = stats.mean_x[leaves], stats.mean_y[leaves]
    d = ((keys - X[:, None, :]) ** 2).sum(axis=2)
    out = np.zeros(len(X))
    for tau, eps in zip(model.taus_, model.eps_):
        out += (1 - eps) * (softmax_rows(d, tau) * values).sum(axis=1) / len(model.taus_)
    return out + model.eps_.mean() * values @ model.w_


def fitted(variant: str, data, **kw) -> LARF:
    X, y, _ = data
    return LARF(variant=variant, **{**DESIGN, **SMALL, **kw}).fit(X, y)


def test_leaf_attention_equals_brute_force_loop(stats, data):
    X_test = data[2]
    for X in (stats.X, X_test):
        rows = stats.rows(None if X is stats.X else X)
        level = leaf_attention(rows, 0.3)
        keys, values = brute_leaf(stats, X, 0.3)
        np.testing.assert_allclose(level.keys, keys, atol=1e-10)
        np.testing.assert_allclose(level.values, values, atol=1e-10)
        np.testing.assert_allclose(level.key_sqdist, ((keys - X[:, None]) ** 2).sum(axis=2), atol=1e-9)


def test_leave_self_out_equals_brute_force_and_touches_training_rows_only(stats, data):
    train, test = stats.rows(), stats.rows(data[2])
    level = leaf_attention(train, 0.3, exclude_self=True)
    keys, values = brute_leaf(stats, stats.X, 0.3, leave_self_out=True)
    np.testing.assert_allclose(level.keys, keys, atol=1e-10)
    np.testing.assert_allclose(level.values, values, atol=1e-10)
    assert not np.allclose(level.values, leaf_attention(train, 0.3).values)
    np.testing.assert_array_equal(leaf_attention(test, 0.3, exclude_self=True).values, leaf_attention(test, 0.3).values)
    # the experiment's families differ from the paper's only in that option
    loo, paper = FAMILIES["em-w-larf-loo"], FAMILIES["em-w-larf"]
    assert loo.leave_self_out and not paper.leave_self_out and loo.params == paper.params
    np.testing.assert_array_equal(loo.features(test, DESIGN).head_sums, paper.features(test, DESIGN).head_sums)


def test_leaf_distances_are_chunk_independent(stats, data, monkeypatch):
    whole = leaf_distances(stats.rows(data[2]))
    monkeypatch.setattr(larf_leaf, "CHUNK_ELEMENTS", 1)  # one query row per chunk
    chunked = leaf_distances(stats.rows(data[2]))
    np.testing.assert_array_equal(chunked.members, whole.members)
    np.testing.assert_allclose(chunked.sqdist, whole.sqdist, atol=1e-12)


def test_huge_tau0_gives_plain_leaf_means(stats, data):
    rows = stats.rows(data[2])
    level = leaf_attention(rows, 1e12)
    np.testing.assert_allclose(level.keys, rows.keys, atol=1e-9)
    np.testing.assert_allclose(level.values, rows.values, atol=1e-9)


def test_head_temperatures():
    np.testing.assert_allclose(head_taus(1), [1.0])
    np.testing.assert_allclose(head_taus(5), [0.01, 0.1, 1, 10, 100])
    np.testing.assert_allclose(head_taus(4), 10.0 ** np.linspace(-1.5, 1.5, 4))


def test_families_are_registered():
    assert set(LARF_FAMILIES) == {
        "eps-arf",
        "w-arf",
        "eps-w-arf",
        "em-arf",
        "em-w-arf",
        "eps-larf",
        "w-larf",
        "eps-w-larf",
        "em-larf",
        "em-w-larf",
    }
    assert all(FAMILIES[name] is family for name, family in LARF_FAMILIES.items())
    assert LARF_FAMILIES["em-w-larf"].design_names() == ("M", "tau0", "reading")
    assert LARF_FAMILIES["w-arf"].mixing_names() == ("eps",)


@pytest.mark.parametrize("variant", sorted(LARF_FAMILIES))
def test_prediction_is_the_variant_formula(variant, data):
    X, y, X_test = data
    model = fitted(variant, data)
    family = model.family
    M = DESIGN["M"] if family.mixture else 1
    np.testing.assert_allclose(model.taus_, head_taus(M))
    # the identity with taus_, eps_, w_ (first level recomputed by brute force)
    np.testing.assert_allclose(model.predict(X_test), brute_prediction(model, X_test), atol=1e-8)
    # on the training rows, the prediction is the trained problem's r + Phi theta (eqs 16-20, 33-35)
    feats = family.features(model.leaf_stats_.rows(), model._values(family.design_names()))
    problem = family.training_problem(feats, y, model._values(family.mixing_names()))
    np.testing.assert_allclose(model.predict(X), problem.r + problem.Phi @ model.theta_, atol=1e-6)


@pytest.mark.parametrize("variant", sorted(LARF_FAMILIES))
def test_trained_parameters_meet_the_constraints(variant, data):
    model = fitted(variant, data, varsigma=0.05)
    family, T = model.family, SMALL["n_estimators"]
    assert model.w_.shape == (T,) and np.all(model.w_ >= 0) and model.w_.sum() == pytest.approx(1)
    floor = 0.05 if family.eps_floor else 0.0
    assert np.all(model.eps_ >= floor - 1e-9) and np.all(model.eps_ <= 1 + 1e-9)
    if family.trains == "w":
        assert model.eps_.tolist() == [0.5]
    if family.trains == "eps":
        np.testing.assert_allclose(model.w_, 1 / T)
    if family.trains == "eps-w":  # sum_k G_k = sum_j eps_j
        assert model.theta_[:T].sum() == pytest.approx(model.eps_.sum(), abs=1e-7)


@pytest.mark.parametrize("arf", ["arf", "larf"])
def test_one_head_mixtures_equal_single_models(arf, data):
    X_test = data[2]
    # em- has the floor varsigma of eq 35, eps- the [0, 1] of eq 17: a tiny floor makes them agree
    em = fitted(f"em-{arf}", data, M=1, varsigma=1e-10).predict(X_test)
    np.testing.assert_allclose(em, fitted(f"eps-{arf}", data).predict(X_test), atol=1e-6)
    emw = fitted(f"em-w-{arf}", data, M=1).predict(X_test)
    np.testing.assert_allclose(emw, fitted(f"eps-w-{arf}", data).predict(X_test), atol=1e-6)


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_w_arf_is_eps_abrf(eps, data):
    X, y, X_test = data
    larf = LARF(variant="w-arf", eps=eps, **SMALL).fit(X, y)
    abrf = EpsABRF(eps=eps, tau=1.0, **SMALL).fit(X, y)
    np.testing.assert_array_equal(larf.predict(X_test), abrf.predict(X_test))
    np.testing.assert_array_equal(larf.w_, abrf.w_)


def random_feasible(family, T: int, M: int, floor: float, rng) -> np.ndarray:
    if family.trains == "w":
        return rng.dirichlet(np.ones(T))
    eps = rng.uniform(floor, 1.0, M)
    return eps if family.trains == "eps" else np.concatenate([rng.dirichlet(np.ones(T)) * eps.sum(), eps])


@pytest.mark.parametrize("loss", ["l2", "l1"])
@pytest.mark.parametrize("variant", ["w-larf", "eps-arf", "em-larf", "eps-w-arf", "em-w-larf"])
def test_trained_objective_beats_random_feasible_points(variant, loss, stats):
    family = LARF_FAMILIES[variant]
    design = {k: v for k, v in DESIGN.items() if k in family.design_names()}
    mixing = {"eps": 0.4, "varsigma": 1e-3}
    feats = family.features(stats.rows(), design)
    problem = family.training_problem(feats, stats.y, {k: mixing[k] for k in family.mixing_names()})
    result = solve(problem, loss=loss)
    assert problem.constraints.violation(result.theta) < 1e-7
    rng = np.random.default_rng(0)
    floor = 1e-3 if family.eps_floor else 0.0
    M = feats.taus.size
    for _ in range(50):
        theta = random_feasible(family, stats.n_trees, M, floor, rng)
        assert problem.constraints.violation(theta) < 1e-9
        assert result.objective <= problem.objective(theta, loss) + 1e-6


def test_reduced_layout_matches_eq_33_with_a_gamma_per_head(stats):
    """eqs 33-35 literally: M*T + M variables gamma_k^(j), eps_j; same optimum as (G, eps)."""
    family, M, T = LARF_FAMILIES["em-w-larf"], 3, stats.n_trees
    feats = mixture_features(stats.rows(), 0.5, M)
    reduced = family.training_problem(feats, stats.y, {"varsigma": 1e-3})
    B, S = feats.values, feats.head_sums
    builder = ConstraintBuilder(M * T + M).bounds(slice(M * T, None), 1e-3, 1.0)
    for j in range(M):
        builder.linked_sum(slice(j * T, (j + 1) * T), M * T + j)
    full = LinearAttentionProblem(stats.y, reduced.r, np.hstack([B] * M + [-S]) / M, builder.build())
    got = solve(reduced).objective
    assert solve(full).objective == pytest.approx(got, rel=1e-6)


def test_bad_variant_and_heads_are_input_errors(data):
    X, y, _ = data
    with pytest.raises(AfrInputError, match="LARF.variant: unknown LARF variant 'eps-m-arf'"):
        LARF(variant="eps-m-arf", **SMALL).fit(X, y)
    with pytest.raises(AfrInputError, match="LARF.M: 0 is not allowed; M must be an integer >= 1"):
        LARF(variant="em-arf", M=0, **SMALL).fit(X, y)


def test_larf_passes_sklearn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(LARF(variant="em-w-larf", M=2, n_estimators=5, min_samples_leaf=1, random_state=0))
