"""dm-soft's log sigmoids without the exponentials that cannot move a bit (afr_cli/dm/walk.py:
``log_sigmoid``, the kernels ``count_at_least``, ``split_tails``, ``subtract_at``) and its walk in
cache-sized row chunks, pinned byte for byte against ``soft.log_sigmoid`` and the matrices.

No tolerance anywhere: the left-out entries are min(u, 0) exactly (exp rounds to 0 at -746 and
below; log1p(exp(u)) is below half an ulp of u at u <= -40), every exponential and log1p taken is
numpy's own on a gathered copy of the entries, and the kernels only compare, negate, copy and
subtract. Cases: u drawn at scales from 1 to 5,000 (a tau of 1 down to 0.001 on standardised
rows), every boundary (+-40, +-708, +-745.13, +-746, +-0, subnormal u, +-inf), sizes from 0 to
past a SIMD vector, both paths forced, and the walk at one row per chunk and at the default."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from afr_cli.dm import DecisionMachine, soft, walk, walk_kernels

EDGES = np.array(
    [
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        1e-300,
        39.999999999999,
        40.0,
        40.00000000001,
        707.9999,
        708.0,
        708.39,
        708.4,
        745.13,
        745.1332191019,
        745.14,
        745.9999999,
        746.0,
        746.0000001,
        1e6,
        1.7e308,
        np.inf,
    ]
)


def _cases():
    rng = np.random.default_rng(5)
    for scale in (1.0, 10.0, 100.0, 300.0, 700.0, 1000.0, 5000.0):
        yield f"normal*{scale:g}", rng.normal(size=(37, 53)) * scale
    edges = np.concatenate([EDGES, -EDGES])
    yield "edges", np.ascontiguousarray(np.tile(edges, (3, 1)))
    yield "edges shuffled in", np.concatenate([edges, rng.normal(size=200) * 800]).reshape(2, -1)
    for n in (0, 1, 7, 8, 9, 17):
        yield f"{n} entries", rng.normal(size=(1, n)) * 900


@pytest.mark.parametrize("sparse_from", [0.0, 0.1, 2.0])  # always gathered, as measured, never
def test_the_log_sigmoid_is_numpys_byte_for_byte(sparse_from, monkeypatch):
    monkeypatch.setattr(walk, "SPARSE_FROM", sparse_from)
    for name, u in _cases():
        want = soft.log_sigmoid(u)
        got = walk.log_sigmoid(u)
        assert got.shape == want.shape and got.flags.c_contiguous, name
        assert got.tobytes() == want.tobytes(), (name, sparse_from)


def test_the_gathered_entries_are_the_ones_that_need_an_exponential():
    u = np.concatenate([EDGES, -EDGES]).reshape(1, -1)
    vals, idx, f, b = walk_kernels.split_tails(u, walk.FAST_BELOW, walk.EXP_IS_ZERO_AT, walk.EXACT_BELOW)
    flat = u.ravel()
    taken = np.concatenate([idx[:f], idx[b:]])
    a = np.abs(flat)
    need = (a < walk.EXP_IS_ZERO_AT) & (flat > -walk.EXACT_BELOW)
    assert sorted(taken) == list(np.flatnonzero(need))
    assert np.all(a[idx[:f]] < walk.FAST_BELOW) and np.all(a[idx[b:]] >= walk.FAST_BELOW)
    assert np.array_equal(vals[:f], -a[idx[:f]]) and np.array_equal(vals[b:], -a[idx[b:]])
    # what is left out is min(u, 0) exactly, as numpy's path makes it
    left = ~need
    assert soft.log_sigmoid(u).ravel()[left].tobytes() == np.minimum(flat, 0.0)[left].tobytes()


def _data(n: int = 150, seed: int = 0):
    X, y = make_friedman1(n, n_features=6, noise=1.0, random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor])
def test_the_walk_in_small_chunks_and_either_path_is_the_matrices(cls, monkeypatch):
    X, y = _data()
    model = cls(n_estimators=12, min_samples_leaf=3, max_features=1.0, random_state=1).fit(X, y)
    forest = walk.walkable(model.estimators_, np.ones(12))
    machine = DecisionMachine.from_ensemble(model, weights=np.ones(12))
    Q = np.vstack([X, np.random.default_rng(2).normal(size=(41, 6)) * 3])
    for chunk in (1, 7 * (len(forest.features) + forest.n_leaves), walk.CHUNK_ENTRIES):
        monkeypatch.setattr(walk, "CHUNK_ENTRIES", chunk)
        for sparse_from in (0.0, 2.0, 0.1):
            monkeypatch.setattr(walk, "SPARSE_FROM", sparse_from)
            for tau in (1e-4, 1e-3, 0.01, 0.1, 1.0):
                got = walk.tree_predictions(forest, Q, tau)
                assert got.tobytes() == machine.tree_predictions_soft(Q, tau).tobytes(), (chunk, sparse_from, tau)


def test_a_small_tau_takes_exponentials_only_where_they_can_move_a_bit(monkeypatch):
    """The saving itself: at tau = 0.001 the old walk took exp of every (node, row) and every
    (leaf, row); the new one leaves out about half the nodes' (and here fails on the old code)."""
    X, y = _data(200)
    model = RandomForestRegressor(n_estimators=10, min_samples_leaf=5, random_state=0).fit(X, y)
    forest = walk.walkable(model.estimators_, np.ones(10))
    taken = []
    real_exp = np.exp

    def counting_exp(x, *args, **kwargs):
        taken.append(np.size(x))
        return real_exp(x, *args, **kwargs)

    monkeypatch.setattr(np, "exp", counting_exp)
    walk.tree_predictions(forest, X, 1e-3)
    every = len(X) * (len(forest.features) + forest.n_leaves)
    assert sum(taken) < every - len(X) * len(forest.features) // 4
