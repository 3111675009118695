"""SAT-RF-y's compiled self-attention step (models/satrf_kernels.py) pinned byte for byte against
the tensor path it replaces (``pair_dissimilarity``, ``self_attention``, ``attend``).

No tolerance anywhere, on any platform: the kernel only adds, multiplies and divides; every
exponential is numpy's own (taken once per symmetric pair), since on AVX-512 numpy's exp differs
from libm's in the last bit. Cases: 2 to 100 trees, blocks of 2 to 32 rows, a row set of
n = 1 (mod 32) rows whose last block has one row (numpy's BLAS path, kept), tied leaf values,
one and two heads (equal kappas share their exponentials), kappas from 1e-3 (most weights
underflow to 0) to 10, and leaf values laid out by column (as every row set holds them) or by
row (left to numpy's path)."""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES, satrf
from afr_cli.models.satrf import CHAIN_BLOCK_ROWS, attend, pair_dissimilarity, self_attention

KAPPAS = ((1.0,), (0.37,), (1e-3,), (10.0, 10.0), (0.5, 2.0), (1.0, 1e-3))


def _tensor_chain(values: np.ndarray, kappas: tuple[float, ...]) -> list[np.ndarray]:
    """The y chain of one block as before the kernel: the (rows, T, T) tensors."""
    s = pair_dissimilarity(values, None, "y")
    z, chain = values, []
    for kappa in reversed(kappas):
        z = attend(self_attention(s, kappa), z)
        chain.append(z)
    return chain[::-1]


def _values(rng: np.random.Generator, n: int, trees: int, ties: bool, order: str) -> np.ndarray:
    leaf_values = rng.normal(size=6 if ties else 5000)
    return np.asarray(leaf_values[rng.integers(0, leaf_values.size, (n, trees))], order=order)


@pytest.mark.parametrize("trees", [2, 3, 7, 100])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("order", ["F", "C"])
def test_each_block_of_the_y_chain_is_the_tensor_path_byte_for_byte(trees, ties, order):
    rng = np.random.default_rng(trees + 10 * ties + (order == "F"))
    values = _values(rng, 2 * CHAIN_BLOCK_ROWS + 1, trees, ties, order)  # blocks of 32, 32 and 1 rows
    assert satrf._walks_pairs(values[:CHAIN_BLOCK_ROWS]) == (order == "F")
    assert not satrf._walks_pairs(values[-1:])  # the one-row block: numpy's (BLAS) path
    for start in (0, CHAIN_BLOCK_ROWS, 2 * CHAIN_BLOCK_ROWS, 3):
        block = values[start : start + CHAIN_BLOCK_ROWS] if start != 3 else values[3:5]  # 32, 32, 1, 2 rows
        for kappas in KAPPAS:
            got = satrf._chain_block(block, None, "y", kappas)
            want = _tensor_chain(block, kappas)
            assert len(got) == len(want) == len(kappas)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.strides == w.strides, (trees, kappas)
                assert g.tobytes() == w.tobytes(), (trees, ties, order, start, kappas)


def test_the_pair_exponentials_are_the_tensors_own():
    rng = np.random.default_rng(5)
    values = _values(rng, 9, 12, True, "F")
    for kappa in (1.0, 1e-3):
        full = np.exp(pair_dissimilarity(values, None, "y") / -kappa)
        i, k = np.triu_indices(12, 1)
        pairs = satrf.symmetric_exponentials(values, kappa)
        assert pairs.tobytes() == np.ascontiguousarray(full[:, i, k]).tobytes()
        assert pairs.tobytes() == np.ascontiguousarray(full[:, k, i]).tobytes()


@pytest.mark.parametrize("family", ["sat-rf-y", "sat-rf-y2"])
def test_sat_rf_y_features_over_a_row_set_ending_in_a_one_row_block(family):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2 * CHAIN_BLOCK_ROWS + 1, 4))
    y = X[:, 0] + rng.normal(scale=0.1, size=len(X))
    forest = get_ensemble("rf").fit(X, y, 0, n_estimators=9, min_samples_leaf=3)
    rows = LeafStatistics(forest, X, y).rows()
    design = {"tau": 1.0, "kappa": 0.7} if family == "sat-rf-y" else {"tau": 1.0, "kappa1": 0.7, "kappa2": 3.0}
    feats = FAMILIES[family].features(rows, design)
    kappas = (0.7,) if family == "sat-rf-y" else (0.7, 3.0)
    blocks = [_tensor_chain(rows.values[a : a + CHAIN_BLOCK_ROWS], kappas) for a in range(0, len(X), CHAIN_BLOCK_ROWS)]
    for j in range(len(kappas)):
        want = np.concatenate([b[j] for b in blocks])
        assert feats.chain[j].tobytes() == want.tobytes()


def test_the_benchmark_times_both_chains_and_checks_their_bytes():
    from afr_cli.benchmarks.satrf import chain_kernel

    values = _values(np.random.default_rng(9), 2 * CHAIN_BLOCK_ROWS + 1, 6, False, "F")
    r = chain_kernel(values, np.zeros((len(values), 6, 1)))
    assert r["identical"] is True and set(r) == {"one_head", "two_heads", "identical"}
    assert all(r[h]["tensors_over_kernel"] > 0 for h in ("one_head", "two_heads"))


@pytest.mark.parametrize("n", [2, 31, 33, 64, 257, 545])
def test_a_whole_row_set_in_kernel_chunks_is_the_tensor_blocks(n):
    rng = np.random.default_rng(n)
    values = _values(rng, n, 5, n % 2 == 0, "F")
    for kappas in ((1.0,), (0.2, 0.2)):
        got = satrf.chain_y(values, np.zeros((n, 5, 1)), kappas)  # keys: unused by y
        blocks = [_tensor_chain(values[a : a + CHAIN_BLOCK_ROWS], kappas) for a in range(0, n, CHAIN_BLOCK_ROWS)]
        for j in range(len(kappas)):
            assert got[j].tobytes() == np.concatenate([b[j] for b in blocks]).tobytes(), (n, kappas)
