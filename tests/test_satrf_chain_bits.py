"""SAT-RF's self-attention chain computed faster, bit for bit as the plain formulas (nothing moves):
``self_attention`` drops softmax's shift, which is exactly zero for a dissimilarity with a zero
diagonal, and ``attend`` takes numpy's non-BLAS matmul sums column by column. Both are compared
byte for byte with the plain expressions, on every variant, on the layouts the features produce
(leaf values in column order, sliced per block) and on others, with ties and tiny forests."""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.ensembles.leaf_statistics import softmax_neg
from afr_cli.models.satrf import CHAIN_BLOCK_ROWS, VARIANTS, attend, pair_dissimilarity, self_attention


def _reference_step(s: np.ndarray, kappa: float, z: np.ndarray) -> np.ndarray:
    return np.matmul(softmax_neg(s, kappa, axis=2), z[:, :, None])[:, :, 0]


def _rows(rng: np.random.Generator, n: int, trees: int, features: int, order: str, ties: bool):
    leaf_values = rng.normal(size=40 if ties else 5000)  # few leaves: many equal values and keys
    leaf_keys = rng.normal(size=(leaf_values.size, features))
    leaves = np.asarray(rng.integers(0, leaf_values.size, (n, trees)), order=order)
    return leaf_values[leaves], leaf_keys[leaves]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("order", ["F", "C"])  # F: as apply() lays the leaves out; C: BLAS's path
@pytest.mark.parametrize("trees", [1, 2, 7, 100])
@pytest.mark.parametrize("ties", [False, True])
def test_the_chain_steps_are_bit_identical_to_softmax_then_matmul(variant, order, trees, ties):
    rng = np.random.default_rng(trees * 7 + len(variant) + (order == "F") + 2 * ties)
    values, keys = _rows(rng, 70, trees, 4, order, ties)
    for start in range(0, 70, CHAIN_BLOCK_ROWS):  # the blocks attention_chain takes, last one short
        v, k = values[start : start + CHAIN_BLOCK_ROWS], keys[start : start + CHAIN_BLOCK_ROWS]
        s = pair_dissimilarity(v, k, variant)
        z_new = z_old = v
        for kappa in (10.0, 1.0, 0.37, 1e-3):  # a chain of heads, each step on the last one's output
            z_old = _reference_step(s, kappa, z_old)
            z_new = attend(self_attention(s, kappa), z_new)
            assert z_new.shape == z_old.shape and z_new.tobytes() == z_old.tobytes(), (variant, kappa)
            assert self_attention(s, kappa).tobytes() == softmax_neg(s, kappa, axis=2).tobytes()


def test_attend_takes_numpys_own_path_where_numpy_uses_blas_and_the_loop_elsewhere():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 30))
    contiguous = rng.random((5, 30, 30))
    strided = np.asarray(np.moveaxis(rng.random((30, 30, 5)), 2, 0))  # rows fastest: no unit stride
    for attention in (contiguous, np.swapaxes(contiguous, 1, 2), strided):
        expected = np.matmul(attention, z[:, :, None])[:, :, 0]
        assert attend(attention, z).tobytes() == expected.tobytes()
