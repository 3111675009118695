"""SAT-RF: predictions against the paper's formula by brute force, the linear form, training."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics, softmax_neg
from afr_cli.errors import AfrInputError
from afr_cli.models import FAMILIES, SATRF, EpsABRF
from afr_cli.models.satrf import YX_FLOOR, pair_dissimilarity, satrf_family
from afr_cli.solvers.solve import solve

SMALL = dict(n_estimators=6, min_samples_leaf=5, random_state=0)


@pytest.fixture(scope="module")
def data():
    X, y = make_friedman1(n_samples=50, noise=0.5, random_state=3)
    return X[:40], y[:40], X[40:]


def random_simplex(rng, T, size=None):
    return rng.dirichlet(np.ones(T), size=size)


def brute_dissimilarity(variant, A, B, i, k):
    """s_ik straight from the definition, with the -yx zero-denominator rule of the module."""
    dy2 = (B[i] - B[k]) ** 2
    dx2 = float(np.sum((A[i] - A[k]) ** 2))
    if variant == "y":
        return dy2
    if variant == "x":
        return dx2
    if dy2 == 0.0:
        return 0.0
    return dy2 / max(dx2, YX_FLOOR * (1 + A[i] @ A[i] + A[k] @ A[k]))


def brute_force(est, Xq, eps, gammas, tau, kappas, w, vs, variant):
    """yhat by python loops: leaf means from `apply`, alpha, beta per head, stacked sums (eq 34)."""
    Xtr, ytr = est.leaf_stats_.X, est.leaf_stats_.y
    train_leaves, query_leaves = est.forest_.apply(Xtr), est.forest_.apply(Xq)
    n_train, T = train_leaves.shape
    out = []
    for s in range(len(Xq)):
        A, B = [], []
        for t in range(T):
            members = [j for j in range(n_train) if train_leaves[j, t] == query_leaves[s, t]]
            A.append(Xtr[members].mean(axis=0))
            B.append(ytr[members].mean())
        dist = [float(np.sum((Xq[s] - A[i]) ** 2)) for i in range(T)]
        norm = sum(np.exp(-d / tau) for d in dist)
        alpha = [(1 - eps) * np.exp(-dist[i] / tau) / norm + eps * w[i] for i in range(T)]
        betas = []
        for gamma, kappa, v in zip(gammas, kappas, vs):
            beta = np.zeros((T, T))
            for i in range(T):
                weights = [np.exp(-brute_dissimilarity(variant, A, B, i, k) / kappa) for k in range(T)]
                for k in range(T):
                    beta[i, k] = (1 - gamma) * weights[k] / sum(weights) + gamma * v[k]
            betas.append(beta)
        total = 0.0
        if len(betas) == 1:
            for i in range(T):
                for k in range(T):
                    total += alpha[i] * betas[0][i, k] * B[k]
        else:
            for i in range(T):
                for k1 in range(T):
                    for k2 in range(T):
                        total += alpha[i] * betas[0][i, k1] * betas[1][k1, k2] * B[k2]
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("variant,heads", [("y", 1), ("x", 1), ("yx", 1), ("y", 2), ("yx", 2)])
def test_predictions_equal_brute_force_formula(data, variant, heads):
    Xtr, ytr, Xq = data
    gamma, kappa = (0.4, 0.7) if heads == 1 else ((0.4, 0.3), (0.7, 2.0))
    est = SATRF(variant=variant, heads=heads, eps=0.6, gamma=gamma, tau=3.0, kappa=kappa, **SMALL).fit(Xtr, ytr)
    rng = np.random.default_rng(1)
    w, vs = random_simplex(rng, 6), random_simplex(rng, 6, size=heads)
    est.theta_ = np.concatenate([w, *vs])
    gammas, kappas = (np.atleast_1d(gamma), np.atleast_1d(kappa))
    expected = brute_force(est, Xq, 0.6, gammas, 3.0, kappas, w, vs, variant)
    np.testing.assert_allclose(est.predict(Xq), expected, rtol=1e-9, atol=1e-9)


def direct_matrix_form(feats_rows, family, design, mixing, w, vs):
    """alpha' B_1 ... B_t y per row, B_j = (1 - gamma_j) S_j + gamma_j 1 v_j' (no expansion)."""
    rows = feats_rows
    a = softmax_neg(rows.key_sqdist, design["tau"])
    s = pair_dissimilarity(rows.values, rows.keys, family.variant)
    alpha = (1 - mixing["eps"]) * a + mixing["eps"] * w
    z = rows.values
    for g, k, v in reversed(list(zip(family.gamma_names(), family.kappa_names(), vs))):
        beta = (1 - mixing[g]) * softmax_neg(s, design[k], axis=2) + mixing[g] * v[None, None, :]
        z = np.einsum("nik,nk->ni", beta, z)
    return np.einsum("ni,ni->n", alpha, z)


@pytest.mark.parametrize("variant,heads", [("y", 1), ("x", 1), ("yx", 1), ("y", 2), ("x", 2), ("yx", 3)])
def test_linear_form_reproduces_prediction(data, variant, heads):
    Xtr, ytr, _ = data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=8, min_samples_leaf=5)
    rows = LeafStatistics(forest, Xtr, ytr).rows()
    family = satrf_family(variant, heads)
    design = {"tau": 2.0, **{k: 0.5 + j for j, k in enumerate(family.kappa_names())}}
    mixing = {"eps": 0.3, **{g: 0.2 + 0.1 * j for j, g in enumerate(family.gamma_names())}}
    feats = family.features(rows, design)
    problem = family.training_problem(feats, ytr, mixing)
    assert problem.Phi.shape == (40, 8 * (heads + 1))
    rng = np.random.default_rng(2)
    for _ in range(5):
        w, vs = random_simplex(rng, 8), random_simplex(rng, 8, size=heads)
        theta = np.concatenate([w, *vs])
        pred = family.predict(feats, mixing, theta)
        np.testing.assert_allclose(problem.r + problem.Phi @ theta, pred, rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(
            pred, direct_matrix_form(rows, family, design, mixing, w, vs), rtol=1e-10, atol=1e-10
        )


def test_two_heads_linear_in_w_v1_v2(data):
    """The bilinear products w_i v_k collapse (sum_i w_i = 1): yhat is affine on the simplices."""
    Xtr, ytr, _ = data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=6, min_samples_leaf=5)
    rows = LeafStatistics(forest, Xtr, ytr).rows()
    family = FAMILIES["sat-rf-y2"]
    design, mixing = {"tau": 1.0, "kappa1": 1.0, "kappa2": 3.0}, {"eps": 0.5, "gamma1": 0.4, "gamma2": 0.6}
    rng = np.random.default_rng(5)
    w, v1, v2 = random_simplex(rng, 6, size=3), random_simplex(rng, 6, size=3), random_simplex(rng, 6, size=3)
    lam = random_simplex(rng, 3)

    def f(wi, v1i, v2i):
        return direct_matrix_form(rows, family, design, mixing, wi, [v1i, v2i])

    mixed = f(lam @ w, lam @ v1, lam @ v2)
    combo = sum(lam[j] * f(w[j], v1[j], v2[j]) for j in range(3))
    np.testing.assert_allclose(mixed, combo, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("loss", ["l2", "l1"])
@pytest.mark.parametrize("variant,heads", [("y", 1), ("yx", 1), ("y", 2)])
def test_trained_weights_on_simplices_and_optimal(data, loss, variant, heads):
    Xtr, ytr, _ = data
    gamma, kappa = (0.5, 1.0) if heads == 1 else ((0.5, 0.25), (1.0, 2.0))
    est = SATRF(variant=variant, heads=heads, eps=0.5, gamma=gamma, kappa=kappa, loss=loss, **SMALL).fit(Xtr, ytr)
    assert est.solve_result_.status == "optimal"
    v = np.atleast_2d(est.v_)
    assert v.shape == (heads, 6) and est.w_.shape == (6,)
    for block in (est.w_, *v):
        assert block.min() >= -1e-6 and abs(block.sum() - 1) <= 1e-6
    family = est.family
    design, mixing = est._values(family.design_names()), est._values(family.mixing_names())
    problem = family.training_problem(family.features(est.leaf_stats_.rows(), design), ytr, mixing)
    best = problem.objective(est.theta_, loss)
    rng = np.random.default_rng(3)
    for _ in range(100):
        theta = np.concatenate(list(random_simplex(rng, 6, size=heads + 1)))
        assert best <= problem.objective(theta, loss) * (1 + 1e-7) + 1e-9


def test_qp_and_lp_both_solve_with_ecos_and_the_fast_path(data):
    Xtr, ytr, _ = data
    for loss, fast in (("l2", "DAQP"), ("l1", "HIGHS")):
        est = SATRF(variant="x", loss=loss, solver="ECOS", **SMALL).fit(Xtr, ytr)
        assert est.solve_result_.solver == "ECOS" and not est.solve_result_.fell_back
        auto = SATRF(variant="x", loss=loss, **SMALL).fit(Xtr, ytr)
        assert auto.solve_result_.solver == fast and not auto.solve_result_.fell_back
        assert auto.solve_result_.objective == pytest.approx(est.solve_result_.objective, rel=1e-7)


def test_eps_gamma_zero_is_the_softmax_model(data):
    Xtr, ytr, Xq = data
    est = SATRF(variant="y", eps=0.0, gamma=0.0, **SMALL).fit(Xtr, ytr)
    assert est.theta_ is None and est.solve_result_ is None
    np.testing.assert_allclose(est.w_, 1 / 6)
    np.testing.assert_allclose(est.v_, 1 / 6)
    np.testing.assert_allclose(
        est.predict(Xq), brute_force(est, Xq, 0.0, [0.0], 1.0, [1.0], est.w_, [est.v_], "y"), rtol=1e-9
    )
    # The self-attention softmax is still there; as kappa -> 0 it is the identity on the values
    # (ties share weight among equal values), and SAT-RF-y is eps-ABRF's Softmax model.
    sharp = SATRF(variant="y", eps=0.0, gamma=0.0, kappa=1e-12, **SMALL).fit(Xtr, ytr)
    abrf = EpsABRF(eps=0.0, **SMALL).fit(Xtr, ytr)
    np.testing.assert_allclose(sharp.predict(Xq), abrf.predict(Xq), rtol=1e-9)


def test_untrained_block_is_dropped_and_uniform(data):
    Xtr, ytr, Xq = data
    rng = np.random.default_rng(4)
    # eps = 0: w has no effect; gamma = 1: the self-attention is v alone, so w has no effect either.
    for eps, gamma in ((0.0, 0.5), (0.7, 1.0)):
        est = SATRF(variant="yx", eps=eps, gamma=gamma, **SMALL).fit(Xtr, ytr)
        assert est.theta_.shape == (6,)
        np.testing.assert_allclose(est.w_, 1 / 6)
        any_w = random_simplex(rng, 6)
        expected = brute_force(est, Xq, eps, [gamma], 1.0, [1.0], any_w, [est.v_], "yx")
        np.testing.assert_allclose(est.predict(Xq), expected, rtol=1e-9)
    est = SATRF(variant="y", eps=0.5, gamma=0.0, **SMALL).fit(Xtr, ytr)
    np.testing.assert_allclose(est.v_, 1 / 6)
    assert est.theta_.shape == (6,)


def test_yx_zero_denominator_rule():
    keys = np.array([[[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [0.0, 0.0]]])  # A_0 = A_1 = A_2
    values = np.array([[3.0, 3.0, 5.0, 4.0]])  # y_0 = y_1 != y_2
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        s = pair_dissimilarity(values, keys, "yx")
        weights = softmax_neg(s, 1.0, axis=2)
    assert np.all(np.isfinite(s))
    np.testing.assert_array_equal(np.diagonal(s[0]), 0.0)  # i = k: same key, same value
    assert s[0, 0, 1] == 0.0 and s[0, 1, 0] == 0.0  # same key, same value
    assert s[0, 0, 2] >= 4.0 / (YX_FLOOR * 11) * (1 - 1e-12)  # same key, other value
    assert weights[0, 0, 2] == 0.0 and weights[0, 0, 1] == weights[0, 0, 0]
    np.testing.assert_allclose(s[0, 0, 3], (3.0 - 4.0) ** 2 / 5.0)  # the ordinary ratio


def test_yx_single_leaf_forest_gives_uniform_self_attention(data):
    """Trees with one leaf: every key and value equal, all 0/0 -> s = 0, prediction = mean(y)."""
    Xtr, ytr, Xq = data
    est = SATRF(variant="yx", eps=0.5, gamma=0.5, n_estimators=4, min_samples_leaf=40, random_state=0).fit(Xtr, ytr)
    np.testing.assert_allclose(est.predict(Xq), ytr.mean(), rtol=1e-12)


def test_self_attention_built_once_per_row_set_and_kappa(data):
    Xtr, ytr, _ = data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=6, min_samples_leaf=5)
    rows = LeafStatistics(forest, Xtr, ytr).rows()
    family = FAMILIES["sat-rf-x"]
    first = family.features(rows, {"tau": 1.0, "kappa": 1.0})
    again = family.features(rows, {"tau": 2.0, "kappa": 1.0})
    other = family.features(rows, {"tau": 1.0, "kappa": 2.0})
    assert again.chain[0] is first.chain[0] and other.chain[0] is not first.chain[0]
    problems = [family.training_problem(first, ytr, {"eps": e, "gamma": g}) for e in (0.25, 0.5) for g in (0.25, 0.75)]
    assert all(p is not None for p in problems)
    assert solve(problems[0]).status == "optimal"


@pytest.mark.parametrize("variant", ["y", "x", "yx"])
def test_row_blocks_change_no_bit_of_the_self_attention(data, variant, monkeypatch):
    import afr_cli.models.satrf as satrf

    Xtr, ytr, _ = data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=8, min_samples_leaf=3)
    stats = LeafStatistics(forest, Xtr, ytr)
    monkeypatch.setattr(satrf, "CHAIN_BLOCK_ROWS", 7)  # 40 rows: five full blocks and a short one
    blocked = satrf.attention_chain(stats.rows(), variant, (0.5, 2.0))
    monkeypatch.setattr(satrf, "CHAIN_BLOCK_ROWS", 10_000)
    whole = satrf.attention_chain(stats.rows(), variant, (0.5, 2.0))
    assert all(np.array_equal(a, b) for a, b in zip(blocked, whole))


def test_registry_names_and_parameter_kinds():
    assert {"sat-rf-y", "sat-rf-x", "sat-rf-yx", "sat-rf-y2"} <= set(FAMILIES)
    assert FAMILIES["sat-rf-yx"].design_names() == ("tau", "kappa", "reading")
    assert FAMILIES["sat-rf-yx"].mixing_names() == ("eps", "gamma")
    assert FAMILIES["sat-rf-y2"].design_names() == ("tau", "kappa1", "kappa2", "reading")
    assert FAMILIES["sat-rf-y2"].mixing_names() == ("eps", "gamma1", "gamma2")


def test_bad_inputs_are_one_line_errors(data):
    Xtr, ytr, _ = data
    with pytest.raises(AfrInputError, match="variant"):
        SATRF(variant="z", **SMALL).fit(Xtr, ytr)
    with pytest.raises(AfrInputError, match="gamma"):
        SATRF(heads=2, gamma=0.5, kappa=(1.0, 1.0), **SMALL).fit(Xtr, ytr)
    with pytest.raises(AfrInputError, match=r"SATRF.kappa\[1\]"):
        SATRF(heads=2, gamma=(0.5, 0.5), kappa=(1.0, 0.0), **SMALL).fit(Xtr, ytr)


def test_sklearn_check_estimator_with_two_head_tuples():
    """check_estimator passes in full, with tuple-valued gamma/kappa (clone, get_params)."""
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(
        SATRF(
            variant="yx",
            heads=2,
            gamma=(0.5, 0.25),
            kappa=(1.0, 2.0),
            n_estimators=5,
            min_samples_leaf=1,
            random_state=0,
        )
    )
