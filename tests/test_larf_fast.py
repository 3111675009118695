"""LARF's compiled feature passes (models/larf_kernels.py) pinned byte for byte against the numpy
path they replace (kept here as the reference: d23ba31's ``larf_leaf._distances``, ``_attend`` and
``larf.mixture_features``' head, ``np.einsum("nt,nt->n", softmax_neg(d, tau), values)``).

No tolerance: the kernels only negate, divide, subtract, add, multiply and compare; the Gram
blocks, the squared norms and the exponentials stay numpy's, and the kernels' sums of products
add in the order of numpy's einsum (pinned here: another numpy or platform whose einsum adds
otherwise fails these tests, not the numbers). Cases: leaves of 1 to
over 130 training rows (numpy's pairwise sum changes order at 8 and splits above 128), 3 to 130
trees (a head's row sum the same), 1, 3 and 8 features, tied training rows (distance exactly 0),
query rows that are training rows, a Gram taken in several chunks, leave-one-out lines, tau0 from
1e-3 (most leaf weights underflow, some subnormal) to 100 and every head tau of M <= 20; a NaN
distance stays NaN where numpy's is (its sign may differ)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.experiment_data import load_one
from afr_cli.engine.protocol import run_unit
from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics, softmax_neg
from afr_cli.models import larf, larf_kernels, larf_leaf
from afr_cli.models.larf_leaf import LeafAttention, LeafDistances

TAU0S = (1e-3, 0.01, 0.1, 1.0, 10.0, 100.0)
HEAD_TAUS = tuple(10.0 ** (e / 2) for e in range(-19, 20))  # every tau_j of M = 1..20


def reference_distances(rows) -> LeafDistances:
    stats, (n, T) = rows.stats, rows.leaves.shape
    member_ptr, member_rows = stats.membership.indptr, stats.membership.indices
    leaves = rows.leaves.ravel()
    lengths = stats.counts[leaves].astype(np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    offset = np.repeat(member_ptr[leaves] - indptr[:-1], lengths)
    members = member_rows[np.arange(indptr[-1]) + offset]
    X_train = stats.X
    train_sq = np.einsum("jm,jm->j", X_train, X_train)
    query_sq = np.einsum("im,im->i", rows.X, rows.X)
    query = np.repeat(np.arange(n), np.diff(indptr[::T]))
    sqdist = np.empty(len(members))
    step = max(1, larf_leaf.CHUNK_ELEMENTS // max(len(X_train), 1))
    for start in range(0, n, step):
        stop = min(start + step, n)
        a, b = indptr[start * T], indptr[stop * T]
        gram = rows.X[start:stop] @ X_train.T
        cross = gram[query[a:b] - start, members[a:b]]
        sqdist[a:b] = query_sq[query[a:b]] + train_sq[members[a:b]] - 2.0 * cross
    return LeafDistances(indptr, members, np.maximum(sqdist, 0.0))


def reference_attend(rows, dist: LeafDistances, tau0: float) -> LeafAttention:
    stats = rows.stats
    n, T = rows.leaves.shape
    starts, lengths = dist.indptr[:-1], np.diff(dist.indptr)
    z = -dist.sqdist / tau0
    z -= np.repeat(np.maximum.reduceat(z, starts), lengths)
    np.exp(z, out=z)
    z /= np.repeat(np.add.reduceat(z, starts), lengths)
    weights = sp.csr_matrix((z, dist.members, dist.indptr), shape=(n * T, len(stats.y)))
    keys = (weights @ stats.X).reshape(n, T, -1)
    values = (weights @ stats.y).reshape(n, T)
    diff = keys - rows.X[:, None, :]
    return LeafAttention(keys, values, np.einsum("ntm,ntm->nt", diff, diff))


def reference_head(sqdist: np.ndarray, values: np.ndarray, tau: float) -> np.ndarray:
    return np.einsum("nt,nt->n", softmax_neg(sqdist, tau), values)


def _same(got: np.ndarray, want: np.ndarray, where) -> None:
    """The same bytes, except that any NaN equals any NaN (its sign and payload are not a number
    anything stores: a NaN feature fails the solve's finiteness check and the unit's scores)."""
    assert got.dtype == want.dtype and got.shape == want.shape, where
    if got.dtype.kind == "f":
        assert np.array_equal(np.isnan(got), np.isnan(want)), where
        got, want = np.where(np.isnan(got), np.nan, got), np.where(np.isnan(want), np.nan, want)
    assert got.tobytes() == want.tobytes(), where


def _row_sets(seed: int, n: int, features: int, trees: int, leaf: int, ties: bool):
    """Training rows (ties: a third of them repeated rows) and query rows (new rows and some
    training rows), a random forest over them; (training RowTensors, query RowTensors)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, features)) * rng.uniform(0.1, 3.0, size=features)
    if ties:
        X[: n // 3] = X[n // 3 : 2 * (n // 3)]
    y = X @ rng.normal(size=features) + rng.normal(size=n)
    forest = get_ensemble("rf").fit(X, y, seed, n_estimators=trees, min_samples_leaf=leaf)
    stats = LeafStatistics(forest, X, y)
    query = np.vstack([rng.normal(size=(7, features)), X[:5]])
    return stats.rows(), stats.rows(query)


CASES = [  # seed, training rows, features, trees, min_samples_leaf, ties
    (0, 60, 3, 5, 1, False),  # leaves of one row and more
    (1, 90, 8, 3, 5, True),
    (2, 300, 1, 4, 130, False),  # lines above 128 members
    (3, 120, 3, 130, 9, True),  # head rows above 128 trees
]


@pytest.mark.parametrize("case", CASES)
def test_leaf_distances_attention_and_heads_are_the_numpy_path_byte_for_byte(case):
    for rows in _row_sets(*case):
        want_dist = reference_distances(rows)
        for exclude in (False, True):
            got = larf_leaf.leaf_distances(rows, exclude)
            want = larf_leaf._without_self(want_dist, rows.leaves.shape[1]) if exclude and rows.training else want_dist
            for field in ("indptr", "members", "sqdist"):
                _same(getattr(got, field), getattr(want, field), (case, exclude, field))
            for tau0 in TAU0S:
                level = larf_leaf.leaf_attention(rows, tau0, exclude)
                ref = reference_attend(rows, want, tau0)
                for field in ("keys", "values", "key_sqdist"):
                    _same(getattr(level, field), getattr(ref, field), (case, exclude, tau0, field))
                minima = larf.row_minima(level.key_sqdist)
                for tau in HEAD_TAUS[::3] if tau0 != 1.0 else HEAD_TAUS:
                    want_head = reference_head(ref.key_sqdist, ref.values, tau)
                    _same(larf.head_sum(level.key_sqdist, level.values, tau, minima), want_head, (case, tau0, tau))
        for values in (rows.values, np.ascontiguousarray(rows.values)):  # *-ARF heads; by column, by row
            for tau in HEAD_TAUS:
                _same(larf.head_sum(rows.key_sqdist, values, tau), reference_head(rows.key_sqdist, values, tau), tau)


def test_a_gram_taken_in_chunks_gives_the_same_distances(monkeypatch):
    train, query = _row_sets(4, 80, 3, 6, 4, True)
    monkeypatch.setattr(larf_leaf, "CHUNK_ELEMENTS", 3 * 80)  # three rows a chunk, a short last one
    for rows in (train, query):
        got, want = larf_leaf._distances(rows), reference_distances(rows)
        for field in ("indptr", "members", "sqdist"):
            _same(getattr(got, field), getattr(want, field), field)


def test_numpys_exp_is_zero_below_the_underflow_bound_and_a_mark_is_told_apart():
    below = -np.concatenate([np.geomspace(-larf_kernels.UNDERFLOW, 1e308, 100_000), [np.inf]])
    assert not np.exp(below).view(np.int64).any()  # +0.0 exactly, never -0.0
    logits = -np.concatenate([np.linspace(0.0, 746.0, 100_001), [0.0, 1e-300, 5e-324]])
    assert np.exp(logits).max() <= 1.0 < larf_kernels.MARKED < np.exp(larf_kernels.MARK)


def test_heads_keep_numpys_nan_and_a_line_of_one_its_member():
    d = np.array([[0.5, np.nan, 1.0], [2.0, 2.0, 2.0]])
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for tau in (1e-3, 1.0):
        with np.errstate(invalid="ignore"):
            _same(larf.head_sum(d, values, tau), reference_head(d, values, tau), tau)
    one = LeafDistances(np.array([0, 1, 3]), np.array([0, 0, 1], dtype=np.int32), np.array([4.0, 1.0, 1.0]))
    E = larf_kernels.segment_logits(one.sqdist, one.indptr, larf_kernels.segment_minima(one.sqdist, one.indptr), 0.5)
    np.exp(E, out=E)
    X, y, query = np.array([[1.0], [3.0]]), np.array([2.0, 6.0]), np.array([[0.0]])
    keys, values, key_sqdist = larf_kernels.segment_attend(E, one.indptr, one.members, X, y, query, 2)
    assert keys.ravel().tolist() == [1.0, 2.0] and values.tolist() == [2.0, 4.0] and key_sqdist.tolist() == [1.0, 4.0]


@pytest.mark.parametrize("zeros", [False, True])
def test_einsum_dot_adds_as_numpys_einsum(zeros):
    """The einsum the attention kernel stands in for (and its two-operand form), every length to
    140 (blocks of eight, an odd tail), products of any scale and sign, exact zeros among them."""
    rng = np.random.default_rng(int(zeros))
    for n in range(1, 141):
        a = rng.random((9, n)) * 10.0 ** rng.uniform(-8, 8, (9, n))
        b = rng.normal(size=(9, n)) * 10.0 ** rng.uniform(-3, 3, (9, n))
        if zeros:
            a[:, ::3] = 0.0
        want = np.einsum("nt,nt->n", a, b)
        got = [larf_kernels.einsum_dot(a.ravel(), i * n, b.ravel(), i * n, n) for i in range(9)]
        _same(np.array(got), want, n)
        want = np.einsum("ntm,ntm->nt", b.reshape(9, 1, n), b.reshape(9, 1, n)).ravel()
        _same(np.array([larf_kernels.einsum_dot(b.ravel(), i * n, b.ravel(), i * n, n) for i in range(9)]), want, n)


def test_a_larf_unit_gives_the_numpy_paths_rows(tmp_path, monkeypatch):
    config = {
        "name": "larf-fast",
        "seed": 5,
        "protocol": {"reps": 1, "inner_folds": 2, "seeding": "rep-index"},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
        "models": [
            {"id": "em-w-larf", "family": "em-w-larf", "grid": {"tau0": [0.01, 1], "M": [1, 4]}},
            {"id": "em-larf-loo", "family": "em-larf-loo", "grid": {"tau0": [0.1], "M": [3]}},
            {"id": "em-arf", "family": "em-arf", "grid": {"M": [2, 5]}},
        ],
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config))
    exp = load_experiment(path, [], tmp_path / "out")
    X, y = load_one(exp, "Friedman1")
    fast = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y)
    monkeypatch.setattr(larf_leaf, "_distances", reference_distances)
    monkeypatch.setattr(
        larf_leaf, "_attend", lambda rows, tau0, ex: reference_attend(rows, larf_leaf.leaf_distances(rows, ex), tau0)
    )
    monkeypatch.setattr(larf, "head_sum", lambda d, v, tau, minima=None: reference_head(d, v, tau))
    numpy_path = run_unit(exp, "Friedman1", exp.bases[0], 0, X, y)
    rows = [[{k: v for k, v in r.items() if k != "seconds"} for r in u.results] for u in (fast, numpy_path)]
    assert repr(rows[0]) == repr(rows[1])
    logs = [[{**g, "solves": [e[:4] + e[5:] for e in g["solves"]]} for g in u.grid] for u in (fast, numpy_path)]
    assert repr(logs[0]) == repr(logs[1])
