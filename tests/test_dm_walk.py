"""The compiled dm-soft tree walk (afr_cli/dm/walk.py) pinned byte for byte against the matrices
(``DecisionMachine.tree_predictions_soft``, the path it replaces in dm-soft's features).

No tolerance anywhere, on any platform: the kernels only add and compare, and every exp and
log1p is still numpy's own (on this project's AVX-512 machine numpy's exp and log1p differ from
libm's in the last bit, which is why the kernels call neither). Cases: RF, ERT and GBM (values
times the learning rate), 1 to 40 trees, shallow and deep trees, rows lying exactly on thresholds
and repeated rows, tau from 1e-12 (every path but one pruned) to 100, rows not a multiple of the
kernel's block, several chunks (the last one short), no rows, and a tau so small that u reaches -inf (NaN in the
matrices, kept)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor, GradientBoostingRegressor, RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

from afr_cli.dm import DecisionMachine, ensemble_parts, walk
from afr_cli.dm.walk import tree_predictions, walkable
from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES

TAUS = (1e-12, 1e-3, 0.01, 0.1, 1.0, 100.0)


def _data(n: int = 150, seed: int = 0):
    X, y = make_friedman1(n, n_features=6, noise=1.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def _both(model, X: np.ndarray, tau: float) -> tuple[np.ndarray, np.ndarray]:
    parts = ensemble_parts(model)
    T = len(parts.trees)
    scale = np.ones(T) if parts.average else T * parts.weights  # as dm-soft scales its trees
    forest = walkable(parts.trees, scale)
    assert forest is not None
    matrices = DecisionMachine.from_ensemble(model, weights=scale).tree_predictions_soft(X, tau)
    return tree_predictions(forest, X, tau), matrices


def _query(X: np.ndarray, model) -> np.ndarray:
    """Fresh-looking rows (226: not a multiple of the kernel's blocks of 16), with rows set
    exactly on thresholds (as the trees test them: float32) and repeated rows."""
    rng = np.random.default_rng(1)
    Q = np.vstack([X, rng.normal(size=(71, X.shape[1]))])
    tree = ensemble_parts(model).trees[0].tree_
    for i, node in enumerate(np.flatnonzero(tree.children_left != -1)[:20]):
        Q[i, tree.feature[node]] = np.float32(tree.threshold[node])  # x_f == t after the float32 cast
    return np.vstack([Q, Q[:5]])


@pytest.mark.parametrize("kind", ["rf", "ert"])
@pytest.mark.parametrize(
    "trees, leaf", [(1, 1), (2, 1), (7, 1), (1, 10), (2, 10), (7, 10), (40, 10)]
)  # deep: few trees
def test_the_walk_is_the_matrices_byte_for_byte(kind, trees, leaf, monkeypatch):
    monkeypatch.setattr(walk, "BLOCK_ENTRIES", 1)  # blocks of 16 rows: several per call, the last one short
    X, y = _data()
    cls = RandomForestRegressor if kind == "rf" else ExtraTreesRegressor
    model = cls(n_estimators=trees, min_samples_leaf=leaf, max_features=1.0, random_state=trees).fit(X, y)
    Q = _query(X, model)
    for tau in TAUS:
        walked, matrices = _both(model, Q, tau)
        assert walked.flags.c_contiguous and walked.shape == matrices.shape
        assert walked.tobytes() == matrices.tobytes(), (kind, trees, leaf, tau)


def test_boosted_trees_chunks_and_no_rows(monkeypatch):
    X, y = _data(120, seed=2)
    model = GradientBoostingRegressor(n_estimators=15, max_depth=4, random_state=0).fit(X, y)
    Q = _query(X, model)
    forest = walkable(ensemble_parts(model).trees, np.ones(15))
    rows_per_chunk = 9  # 196 rows: 21 chunks of 9 and one of 7
    monkeypatch.setattr(walk, "CHUNK_ENTRIES", rows_per_chunk * (len(forest.features) + forest.n_leaves))
    chunks = []
    log_sigmoid = walk.log_sigmoid  # taken once per chunk: counts the chunks the walk takes
    monkeypatch.setattr(walk, "log_sigmoid", lambda U: chunks.append(U.shape[1]) or log_sigmoid(U))
    for tau in TAUS:
        chunks.clear()
        walked, matrices = _both(model, Q, tau)
        assert walked.tobytes() == matrices.tobytes(), tau
        assert chunks == [min(rows_per_chunk, len(Q) - s) for s in range(0, len(Q), rows_per_chunk)], tau
    walked, matrices = _both(model, Q[:0], 0.1)
    assert walked.shape == matrices.shape == (0, 15)


def test_a_tau_that_overflows_u_keeps_the_matrices_nan():
    X, y = _data(80)
    model = RandomForestRegressor(n_estimators=3, min_samples_leaf=5, random_state=0).fit(X, y)
    with np.errstate(over="ignore", invalid="ignore"):  # |x - t| / tau overflows: u = +-inf, log sigmoid(-u) NaN
        walked, matrices = _both(model, X, 1e-320)
    assert np.isnan(matrices).any()
    assert np.array_equal(walked, matrices, equal_nan=True)


def test_a_tree_not_in_preorder_is_left_to_the_matrices(small_data):
    Xtr, ytr, Xte, _ = small_data
    best_first = DecisionTreeRegressor(max_leaf_nodes=6, random_state=0).fit(Xtr, ytr)  # ids not preorder
    depth_first = DecisionTreeRegressor(max_depth=3, random_state=0).fit(Xtr, ytr)
    assert walkable([best_first], np.ones(1)) is None
    assert walkable([depth_first], np.ones(1)) is not None
    assert walkable([depth_first], np.array([np.nan])) is None  # the matrices say what is wrong


@pytest.mark.parametrize("kind", ["rf", "ert"])
def test_dm_soft_features_are_the_matrices_own(kind, small_data):
    Xtr, ytr, Xte, _ = small_data
    forest = get_ensemble(kind).fit(Xtr, ytr, 0, n_estimators=8, min_samples_leaf=5)
    stats = LeafStatistics(forest, Xtr, ytr)
    machine = DecisionMachine.from_ensemble(forest, weights=np.ones(8))
    for rows in (stats.rows(), stats.rows(Xte)):
        for tau in (0.001, 0.1, 1.0):
            feats = FAMILIES["dm-soft"].features(rows, {"tau": tau})
            assert feats.trees.tobytes() == machine.tree_predictions_soft(rows.X, tau).tobytes()
            assert feats.intercept == machine.intercept


def test_the_benchmark_times_both_paths_and_checks_their_bytes():
    from afr_cli.benchmarks.dm import WALK_TAUS, soft_walk

    X, y = _data(90)
    forest = RandomForestRegressor(n_estimators=4, min_samples_leaf=5, random_state=0).fit(X, y)
    r = soft_walk(forest, X)
    assert r["identical"] is True and set(r["taus"]) == {str(t) for t in WALK_TAUS}
    assert all(v["matrices_over_walk"] > 0 for v in r["taus"].values())
