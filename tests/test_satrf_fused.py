"""SAT-RF-x and -yx chains with their elementwise passes fused (models/satrf_kernels.py:
``dissimilarity_from_gram``, ``normalize_lines``, ``attend_lines``) pinned byte for byte against
the tensor path (``pair_dissimilarity``, ``self_attention``, ``attend``).

No tolerance anywhere, on any platform: the kernels only add, multiply, divide and compare; the
Gram stack, the key norms and every exponential are numpy's own. Cases: 2 to 130 trees (above
128 numpy's pairwise sum splits a line in two), one to four key features, tied leaf values and
tied keys (distance 0: the yx floor), leaf values and keys laid out by column or by row, blocks
of 1, 2 and 32 rows (a row set of n = 1 (mod 32) rows ends in a one-row block, which yx leaves
to numpy's BLAS path), one and two heads, kappas from 1e-3 (most weights underflow) to 10."""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES, satrf
from afr_cli.models.satrf import CHAIN_BLOCK_ROWS, chain_block_fused, satrf_family, tensor_chain_block

KAPPAS = ((1.0,), (1e-3,), (10.0, 10.0), (0.5, 2.0))


def _block(seed: int, n: int, trees: int, features: int, ties: bool, order: str):
    """Leaf values (n, T) and keys (n, T, m) drawn from few distinct leaves (ties) or many."""
    rng = np.random.default_rng(seed)
    leaves = 5 if ties else 4000
    values = rng.normal(size=leaves)[rng.integers(0, leaves, (n, trees))]
    keys = rng.normal(size=(leaves, features))[rng.integers(0, leaves, (n, trees))]
    return np.asarray(values, order=order), np.asarray(keys, order=order)


def _same(got: tuple, want: tuple, where) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.strides == w.strides, where
        assert g.tobytes() == w.tobytes(), where


@pytest.mark.parametrize("trees", [2, 3, 9, 100, 130])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("variant", ["x", "yx"])
def test_each_block_of_the_x_and_yx_chains_is_the_tensor_path_byte_for_byte(trees, ties, order, variant):
    features = 1 + trees % 4
    values, keys = _block(trees + 10 * ties, CHAIN_BLOCK_ROWS + 3, trees, features, ties, order)
    for rows in (slice(0, CHAIN_BLOCK_ROWS), slice(CHAIN_BLOCK_ROWS, CHAIN_BLOCK_ROWS + 1), slice(5, 7)):
        for kappas in KAPPAS:
            got = satrf._chain_block(values[rows], keys[rows], variant, kappas)
            want = tensor_chain_block(values[rows], keys[rows], variant, kappas)
            _same(got, want, (trees, ties, order, variant, rows, kappas))


def test_the_fused_path_is_the_one_taken_where_it_applies(monkeypatch):
    values, keys = _block(1, CHAIN_BLOCK_ROWS + 1, 6, 2, False, "F")
    calls = []
    tensor = satrf.tensor_chain_block
    monkeypatch.setattr(satrf, "tensor_chain_block", lambda *a: calls.append(a[2]) or tensor(*a))
    satrf._chain_block(values[:CHAIN_BLOCK_ROWS], keys[:CHAIN_BLOCK_ROWS], "x", (1.0,))
    satrf._chain_block(values[:CHAIN_BLOCK_ROWS], keys[:CHAIN_BLOCK_ROWS], "yx", (1.0,))
    satrf._chain_block(values[-1:], keys[-1:], "x", (1.0,))  # x: the one-row block is C-ordered too
    assert calls == []
    satrf._chain_block(values[-1:], keys[-1:], "yx", (1.0,))  # yx's one-row block: numpy's BLAS path
    satrf._chain_block(np.ascontiguousarray(values[:4]), keys[:4], "yx", (1.0,))  # values by row
    assert calls == ["yx", "yx"]


def test_tied_keys_meet_the_yx_floor_and_give_numpys_bits():
    values, keys = _block(3, 8, 12, 3, True, "F")
    keys[:, 1] = keys[:, 0]  # trees 0 and 1 share a key: distance 0, the floor decides
    values[:, 1] = values[:, 0] + 0.5  # with different values: s ~ 1e12 (y_i - y_k)^2
    for kappas in KAPPAS:
        _same(chain_block_fused(values, keys, "yx", kappas), tensor_chain_block(values, keys, "yx", kappas), kappas)


@pytest.mark.parametrize("variant, heads", [("x", 1), ("yx", 1), ("x", 2)])
def test_features_over_a_row_set_ending_in_a_one_row_block(variant, heads):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2 * CHAIN_BLOCK_ROWS + 1, 4))
    y = X[:, 0] + rng.normal(scale=0.1, size=len(X))
    forest = get_ensemble("rf").fit(X, y, 0, n_estimators=9, min_samples_leaf=3)
    rows = LeafStatistics(forest, X, y).rows()
    family = satrf_family(variant, heads)
    assert heads > 1 or FAMILIES[f"sat-rf-{variant}"] is family
    kappas = (0.7,) if heads == 1 else (0.7, 3.0)
    feats = family.features(rows, {"tau": 1.0, **dict(zip(family.kappa_names(), kappas))})
    blocks = [
        tensor_chain_block(rows.values[a : a + CHAIN_BLOCK_ROWS], rows.keys[a : a + CHAIN_BLOCK_ROWS], variant, kappas)
        for a in range(0, len(X), CHAIN_BLOCK_ROWS)
    ]
    for j in range(len(kappas)):
        assert feats.chain[j].tobytes() == np.concatenate([b[j] for b in blocks]).tobytes()
