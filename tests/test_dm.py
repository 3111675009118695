"""Decision Machines: the paper's worked example, exactness against scikit-learn (thresholds
included), Theorems 1-2 on fitted trees, the soft machine, round trips and bad matrices."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor, ExtraTreeRegressor

from afr_cli.dm import Leaf
from afr_cli.errors import AfrInputError
from afr_cli.models import DecisionMachine

# Paper Fig. 1: internal nodes breadth-first (F1<=1, F2<=4, F3<=3, F2<=2, F4<=5), leaves v1..v6.
FIG1_S = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])
FIG1_T = np.array([1.0, 4.0, 3.0, 2.0, 5.0])
FIG1_B = np.array(
    [[-1, -1, 0, -1, 0], [-1, -1, 0, 1, -1], [-1, -1, 0, 1, 1], [-1, 1, 0, 0, 0], [1, 0, -1, 0, 0], [1, 0, 1, 0, 0]]
)
FIG1_V = np.array([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
FIG1_X = np.array([[2.0, 1.0, 2.0, 2.0]])


@pytest.fixture
def fig1() -> DecisionMachine:
    return DecisionMachine(FIG1_S, FIG1_T, FIG1_B, FIG1_V)


def test_worked_example_exit_leaf_and_scores_with_corrected_p4(fig1):
    assert fig1.leaves(FIG1_X)[0] == 4 and fig1.predict(FIG1_X)[0] == 50.0  # v5
    # the paper prints p4 = 0; B_4 h = (-1)(+1) + (+1)(-1) = -2 over ||B_4||^2 = 2 gives -1
    np.testing.assert_array_equal(fig1.scores(FIG1_X)[0], [1 / 3, 0, -1 / 2, -1, 1, 0])
    assert fig1.scores(FIG1_X).min() == -1.0  # the logical similarity reaches -1: it lies in [-1, 1]


def test_worked_example_soft_predictions_tend_to_v5(fig1):
    gaps = [abs(fig1.predict_soft(FIG1_X, tau)[0] - 50.0) for tau in (1.0, 0.1, 0.01)]
    assert gaps[0] > gaps[1] > gaps[2] and gaps[0] > 1.0 and gaps[2] < 1e-9
    for tau in (1.0, 0.1, 0.01):
        p = fig1.leaf_probabilities(FIG1_X, tau)[0]
        assert p.argmax() == 4 and p.sum() == pytest.approx(1.0, abs=1e-12)


def test_eq11_with_k_equal_b_picks_the_wrong_leaf():
    """Why eqs 12-13 and not eq 11: softmax(B (S x - t) / tau) peaks at v2 on the worked example."""
    Bq = FIG1_B @ (FIG1_S @ FIG1_X[0] - FIG1_T)
    np.testing.assert_array_equal(Bq, [3, 4, -2, -4, 2, 0])
    assert Bq.argmax() == 1


def test_worked_example_tree_rebuilt_from_b(fig1):
    root = fig1.to_tree()
    assert (root.column, root.feature, root.threshold) == (0, 0, 1.0)
    assert isinstance(root.right.left, Leaf) and root.right.left.value == 50.0  # F1 > 1, F3 <= 3: v5
    assert root.left.left.column == 3 and root.left.left.right.column == 4  # F2<=2 then F4<=5


def _models():
    X, y = make_friedman1(600, noise=1.0, random_state=0)
    return X, [
        DecisionTreeRegressor(min_samples_leaf=3, random_state=0).fit(X, y),
        ExtraTreeRegressor(min_samples_leaf=2, random_state=0).fit(X, y),
        RandomForestRegressor(20, min_samples_leaf=5, random_state=0, n_jobs=1).fit(X, y),
        ExtraTreesRegressor(10, min_samples_leaf=5, random_state=0, n_jobs=1).fit(X, y),
        GradientBoostingRegressor(n_estimators=30, random_state=0).fit(X, y),
    ]


def _on_and_near_thresholds(model, X: np.ndarray, rng: np.random.Generator, n: int = 4000) -> np.ndarray:
    """Rows with one feature set exactly on a threshold, within 1e-9 of it, or one float32 step away."""
    trees = getattr(model, "estimators_", [model])
    splits = [
        (tr.tree_.feature[j], tr.tree_.threshold[j])
        for tr in np.ravel(trees)
        for j in np.flatnonzero(tr.tree_.children_left != -1)
    ]
    rows = X[rng.integers(0, len(X), n)].copy()
    for r, (f, t) in zip(rows, (splits[i] for i in rng.integers(0, len(splits), n))):
        t32 = np.float32(t)
        r[f] = rng.choice(
            [
                t,
                t + 1e-9,
                t - 1e-9,
                float(t32),
                float(np.nextafter(t32, np.float32(np.inf))),
                float(np.nextafter(t32, np.float32(-np.inf))),
            ]
        )
    return rows


def test_predict_and_leaves_equal_scikit_learn_on_and_near_thresholds():
    X, models = _models()
    rng = np.random.default_rng(1)
    naive_misses = 0
    for model in models:
        Xq = np.vstack([X, _on_and_near_thresholds(model, X, rng)])
        dm = DecisionMachine.from_ensemble(model)
        assert np.array_equal(dm.predict(Xq), model.predict(Xq)), type(model).__name__
        trees = np.ravel(getattr(model, "estimators_", [model]))
        sk_nodes = np.column_stack([tr.apply(Xq.astype(np.float32)) for tr in trees])
        ours = dm.leaves(Xq).reshape(len(Xq), -1)
        offsets = np.cumsum([0] + [int((tr.tree_.children_left == -1).sum()) for tr in trees])[:-1]
        for k, tr in enumerate(trees):  # our leaf order is scikit-learn's leaf node-id order
            leaf_nodes = np.flatnonzero(tr.tree_.children_left == -1)
            assert np.array_equal(leaf_nodes[ours[:, k] - offsets[k]], sk_nodes[:, k])
        # the trap is real: comparing float64 x with the thresholds sends some of these rows elsewhere
        tr = trees[0]
        leaf_nodes = np.flatnonzero(tr.tree_.children_left == -1)
        naive = DecisionMachine.from_tree(tr)
        naive_leaf = _float64_leaves(naive, Xq)
        naive_misses += int(np.sum(leaf_nodes[naive_leaf] != tr.apply(Xq.astype(np.float32))))
    assert naive_misses > 0


def _float64_leaves(dm: DecisionMachine, X: np.ndarray) -> np.ndarray:
    """The exit leaf computed naively in float64 (no float32 rounding of x)."""
    h = np.where(X[:, dm.S.indices] - dm.t > 0, 1, -1)
    Bh = (dm.B.astype(float) @ h.T).T
    return np.argmax(Bh == np.asarray(abs(dm.B).sum(axis=1)).ravel(), axis=1)


def test_duck_typed_ensemble_with_intercept_and_weights():
    X, y = make_friedman1(300, noise=1.0, random_state=2)
    trees = [DecisionTreeRegressor(max_depth=4, random_state=k).fit(X[k::3], y[k::3]) for k in range(3)]

    class Ensemble:  # the ensemble registry's contract: trees, intercept, tree_weights
        def __init__(self):
            self.trees, self.intercept, self.tree_weights = trees, 1.5, np.array([0.2, 0.5, 0.3])

    expected = 1.5 + sum(w * tr.predict(X) for w, tr in zip([0.2, 0.5, 0.3], trees))
    np.testing.assert_allclose(DecisionMachine.from_ensemble(Ensemble()).predict(X), expected, rtol=1e-13)
    rf = RandomForestRegressor(5, random_state=0).fit(X, y)
    w = np.array([0.1, 0.2, 0.3, 0.2, 0.2])
    expected = sum(wk * tr.predict(X) for wk, tr in zip(w, rf.estimators_))
    np.testing.assert_allclose(DecisionMachine.from_ensemble(rf, weights=w).predict(X), expected, rtol=1e-13)


@pytest.mark.parametrize(
    "kind, params",
    [
        ("rf", {"n_estimators": 10}),
        ("ert", {"n_estimators": 10}),
        ("dt", {}),
        ("gbm-dt", {"n_estimators": 15, "learning_rate": 0.2, "max_depth": 3}),
        ("gbm-ert", {"n_estimators": 15, "learning_rate": 0.2, "max_depth": 3}),
    ],
)
def test_every_registry_ensemble_is_reproduced_exactly(kind, params):
    from afr_cli.ensembles import get_ensemble

    X, y = make_friedman1(400, noise=1.0, random_state=3)
    fitted = get_ensemble(kind).fit(X[:300], y[:300], 0, **params)
    rng = np.random.default_rng(0)
    Xq = np.vstack([X, _on_and_near_thresholds(SimpleNamespace(estimators_=fitted.trees), X, rng, 1000)])
    assert np.array_equal(DecisionMachine.from_ensemble(fitted).predict(Xq), fitted.predict(Xq))


def _per_tree_blocks(dm: DecisionMachine):
    B = dm.B.toarray()
    start_r = start_c = 0
    for tree in dm.to_trees():
        L = sum(1 for _ in _leaves_of(tree))
        yield B[start_r : start_r + L, start_c : start_c + L - 1]
        start_r, start_c = start_r + L, start_c + L - 1


def _leaves_of(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Leaf):
            yield n
        else:
            stack.extend((n.left, n.right))


def test_theorems_1_and_2_on_every_tree_of_a_forest():
    X, y = make_friedman1(400, noise=1.0, random_state=4)
    forest = RandomForestRegressor(25, min_samples_leaf=3, random_state=0, n_jobs=1).fit(X, y)
    Xq = np.vstack([X, make_friedman1(400, random_state=5)[0]])
    for tree in forest.estimators_:
        dm = DecisionMachine.from_tree(tree)
        B = dm.B.toarray().astype(float)
        assert np.linalg.matrix_rank(B) == B.shape[1]  # Theorem 1
        p = dm.scores(Xq)
        top = p.max(axis=1)
        assert np.all(top == 1.0) and np.all((p == 1.0).sum(axis=1) == 1)  # Theorem 2: one maximum, = 1
        assert p.min() >= -1.0
    whole = DecisionMachine.from_ensemble(forest)
    assert [b.shape[1] for b in _per_tree_blocks(whole)] == [tr.tree_.node_count // 2 for tr in forest.estimators_]


def test_soft_machine_sums_to_one_and_tends_to_the_hard_forest():
    X, y = make_friedman1(300, noise=1.0, random_state=6)
    forest = ExtraTreesRegressor(15, min_samples_leaf=5, random_state=0, n_jobs=1).fit(X, y)
    dm = DecisionMachine.from_ensemble(forest)
    Xq = make_friedman1(200, random_state=7)[0]
    for tau in (10.0, 1.0, 0.01):
        p = dm.leaf_probabilities(Xq, tau)
        per_tree = p @ np.asarray(dm._leaf_tree.todense())
        np.testing.assert_allclose(per_tree, 1.0, atol=1e-12)
    gaps = [np.abs(dm.predict_soft(Xq, tau) - forest.predict(Xq)).max() for tau in (1.0, 0.1, 1e-3, 1e-12)]
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 1e-10
    np.testing.assert_allclose(
        dm.tree_predictions_soft(Xq, 1e-12), np.column_stack([t.predict(Xq) for t in forest.estimators_]), atol=1e-10
    )


def test_to_tree_round_trip_and_structure_match_scikit_learn():
    X, y = make_friedman1(300, noise=1.0, random_state=8)
    tree = DecisionTreeRegressor(min_samples_leaf=4, random_state=0).fit(X, y)
    dm = DecisionMachine.from_tree(tree)
    root = dm.to_tree()
    back = DecisionMachine.from_tree(root)
    assert (back.S != dm.S).nnz == 0 and (back.B != dm.B).nnz == 0
    assert np.array_equal(back.t, dm.t) and np.array_equal(back.v, dm.v)
    t = tree.tree_
    stack = [(root, 0)]
    while stack:  # the rebuilt tree is scikit-learn's, node for node
        node, sk = stack.pop()
        if isinstance(node, Leaf):
            assert t.children_left[sk] == -1 and node.value == t.value[sk, 0, 0]
        else:
            assert (node.feature, node.threshold) == (t.feature[sk], t.threshold[sk])
            stack += [(node.left, t.children_left[sk]), (node.right, t.children_right[sk])]
    forest = DecisionMachine.from_ensemble(RandomForestRegressor(4, random_state=0).fit(X, y))
    again = DecisionMachine.from_nodes(forest.to_trees(), forest.n_features, average_trees=True)
    assert np.array_equal(again.predict(X), forest.predict(X))


def test_npz_round_trip(tmp_path):
    X, y = make_friedman1(300, noise=1.0, random_state=9)
    gbm = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    dm = DecisionMachine.from_ensemble(gbm)
    dm.save(tmp_path / "gbm.npz")
    back = DecisionMachine.load(tmp_path / "gbm.npz")
    assert (back.S != dm.S).nnz == 0 and (back.B != dm.B).nnz == 0 and back.intercept == dm.intercept
    assert np.array_equal(back.predict(X), gbm.predict(X))
    assert list(tmp_path.iterdir()) == [tmp_path / "gbm.npz"]  # no temporary file left behind
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(AfrInputError, match="bad.npz: cannot read"):
        DecisionMachine.load(tmp_path / "bad.npz")


def test_single_leaf_tree():
    X = np.random.default_rng(0).normal(size=(30, 3))
    tree = DecisionTreeRegressor().fit(X, np.full(30, 2.5))
    dm = DecisionMachine.from_tree(tree)
    assert dm.n_leaves == 1 and dm.n_nodes == 0
    assert np.array_equal(dm.predict(X), tree.predict(X)) and np.all(dm.scores(X) == 1.0)
    assert np.all(dm.predict_soft(X, 0.5) == 2.5)


@pytest.mark.parametrize(
    "change, needle",
    [
        (lambda S, t, B, v: (S, t, np.delete(B, 4, axis=1), v), "B: shape"),
        (lambda S, t, B, v: (S, t, _no_plus(B), v), r"column 2 has no \+1"),
        (lambda S, t, B, v: (S, t, _dependent(B), v), "not full column rank"),
        (lambda S, t, B, v: (S, t, _swap_root_signs(B), v), "no column is nonzero on exactly the leaves"),
        (lambda S, t, B, v: (S * 2, t, B, v), "S: row 0 is not a single 1"),
        (lambda S, t, B, v: (S, t[:4], B, v), "t: shape"),
        (lambda S, t, B, v: (S, t, B * 2, v), "entries other than -1, 0, 1"),
        (lambda S, t, B, v: (S, t, B, np.append(v, 1.0)), "v: shape"),
    ],
)
def test_bad_matrices_are_input_errors(change, needle):
    with pytest.raises(AfrInputError, match=needle):
        DecisionMachine(*change(FIG1_S, FIG1_T, FIG1_B, FIG1_V))


def _no_plus(B):
    B = B.copy()
    B[5, 2] = -1  # node F3<=3 loses its right leaf
    return B


def _dependent(B):
    B = B.copy()
    B[:, 4] = B[:, 0]  # two equal columns (each still has a +1 and a -1)
    return B


def _swap_root_signs(B):
    B = B.copy()
    B[4, 0] = -1
    B[3, 0] = 1  # leaves v4 and v5 on the wrong sides of the root: full rank, but no tree
    return B


def test_bad_inputs_to_methods():
    dm = DecisionMachine(FIG1_S, FIG1_T, FIG1_B, FIG1_V)
    with pytest.raises(AfrInputError, match=r"X: shape"):
        dm.predict(np.zeros((2, 3)))
    with pytest.raises(AfrInputError, match="NaN"):
        dm.predict(np.array([[np.nan, 0, 0, 0]]))
    with pytest.raises(AfrInputError, match="tau"):
        dm.predict_soft(FIG1_X, 0.0)
    with pytest.raises(AfrInputError, match="not a fitted scikit-learn tree"):
        DecisionMachine.from_tree(DecisionTreeRegressor())
    with pytest.raises(AfrInputError, match="weights"):
        DecisionMachine.from_ensemble(RandomForestRegressor(3).fit(FIG1_S, FIG1_T), weights=[1.0])


def test_full_rank_matrix_that_is_no_tree_is_refused():
    """Theorem 1's precondition is not enough: B must be a tree's template (a root column, recursively)."""
    B = np.array([[-1, 0], [1, -1], [0, 1]])  # full column rank, +1 and -1 in each column, no root
    assert np.linalg.matrix_rank(B) == 2
    with pytest.raises(AfrInputError, match=r"tree 0: no column is nonzero on exactly the leaves \{0, 1, 2\}"):
        DecisionMachine(np.eye(2), [0.0, 0.0], B, [1.0, 2.0, 3.0])


@pytest.mark.slow
def test_afr_dm_export_is_the_forest_behind_the_stored_table_cell(tmp_path):
    """The committed abrf_rf store's plain-RF R² for Diabetes, repetition 3, recomputed from the
    exported file alone (its machine and its test rows)."""
    from conftest import ROOT, run_afr

    from afr_cli.store import load_results

    out = tmp_path / "diabetes_rf_3.npz"
    proc = run_afr(
        "dm",
        "export",
        "configs/abrf_rf.yaml",
        "--dataset",
        "Diabetes",
        "--base",
        "RF",
        "--rep",
        "3",
        "--out",
        str(out),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    data = np.load(out)
    y, pred = data["y_test"], DecisionMachine.load(out).predict(data["X_test"])
    r2 = 1.0 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    rows = load_results(ROOT / "results" / "abrf_rf")  # the store, or on a fresh clone its committed export
    stored = rows.query("dataset == 'Diabetes' and model == 'rf' and rep == 3")["r2"].item()
    assert r2 == pytest.approx(stored, abs=1e-12)
    bad = run_afr(
        "dm",
        "export",
        "configs/abrf_rf.yaml",
        "--dataset",
        "Diabetes",
        "--base",
        "XX",
        "--rep",
        "3",
        "--out",
        str(tmp_path / "x.npz"),
        timeout=60,
    )
    assert bad.returncode == 2 and "--base: 'XX'" in bad.stderr and not (tmp_path / "x.npz").exists()


def test_float32_floor_gives_scikit_learns_comparison():
    """x <= t for float32 x (promoted, as scikit-learn compares) iff x <= the largest float32 <= t."""
    from afr_cli.dm.hard import float32_floor

    rng = np.random.default_rng(3)
    t = np.concatenate([rng.normal(size=5000), rng.normal(size=5000).astype(np.float32), [0.0]])
    t32 = t.astype(np.float32)
    x = np.column_stack([t32, np.nextafter(t32, np.float32(np.inf)), np.nextafter(t32, np.float32(-np.inf))])
    assert np.array_equal(x.astype(np.float64) <= t[:, None], x <= float32_floor(t)[:, None])
    with np.errstate(over="ignore"):
        far = float32_floor(np.array([1e300, -1e300]))
    assert far[0] == np.finfo(np.float32).max and far[1] == -np.inf


def test_log_sigmoid_is_stable_and_accurate():
    from afr_cli.dm.soft import log_sigmoid

    u = np.concatenate([np.linspace(-800, 800, 20001), [0.0, 1e-300, -1e-300, 1e308, -1e308]])
    ref = -np.logaddexp(0.0, -u)
    np.testing.assert_allclose(log_sigmoid(u), ref, rtol=1e-15, atol=0)
    assert log_sigmoid(np.array([0.0]))[0] == np.log(0.5)
