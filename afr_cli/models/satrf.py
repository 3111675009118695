"""SAT-RF: softmax tree attention (eps) stacked with self-attention between tree predictions (gamma).

    yhat(x) = sum_i sum_k alpha_i(x) beta_ik(x) y_k(x),  y_k(x) = B_k(x)           (paper eq 13)
    alpha_i = (1 - eps) softmax_i(-||x - A_i(x)||^2 / tau) + eps w_i               (eq 19)
    beta_ik = (1 - gamma) softmax_k(-s_ik / kappa) + gamma v_k                     (eq 20)
    s_ik = (y_i - y_k)^2 (-y),  ||A_i - A_k||^2 (-x),  (y_i - y_k)^2 / ||A_i - A_k||^2 (-yx)

Convention (design.md section 2): softmax(-d / kappa), kappa divides. The paper's printed eqs
19-20, 22-23 and 35 drop the minus sign (a typo: attention must fall with dissimilarity) and
eqs 16-17 divide by 2 kappa; we use kappa alone (the same family under kappa -> 2 kappa).

-yx zero denominator: ||A_i - A_k||^2 is floored at YX_FLOOR (1 + ||A_i||^2 + ||A_k||^2), the
rounding level of the Gram form it is computed in. So identical keys with identical values (i = k
always, or two trees with the same leaf) give s = 0, maximal similarity (0/0 := 0), and identical
keys with different values give s ~ 1e12 (y_i - y_k)^2, a zero weight (the limit of c / d, d -> 0).

Training is linear in theta (eqs 21-25). Write S_j = softmax_k(-s / kappa_j) (n, T, T), the chain
Z_t = y, Z_{j-1} = S_j Z_j, a = the alpha softmax, c_j = prod_{l > j} (1 - gamma_l). Then

    yhat = (1 - eps) c_0 a.Z_0  +  eps c_0 w.Z_0  +  sum_j gamma_j c_j v_j.Z_j

(one head: R = (1-eps)(1-gamma) a.Sy, H = eps (1-gamma) Sy, G = gamma y, as eq 25 with
sum_i D_si = 1 - eps). A block whose coefficient is 0 (w when eps = 0 or some gamma = 1, v_j when
gamma_j = 0 or a later gamma = 1) cannot change a prediction: it is left out of the problem and
reported uniform. theta = the remaining blocks in the order (w, v_1, ..., v_t), each on a simplex.

``reading`` "code": what the authors' public code (andruekonst/forest-self-attention) computes
instead (``SATRFFamily.code_differences``): the tree attention softmax(-tau d / 2) and the
self-attention softmax(-kappa s), both multiplying (the grid's tau and kappa go where the code
puts its ``tau`` and ``sa_tau``); a tree's own prediction left out of its self-attention (weight 0:
s_ii = +inf, kept only with a single tree, where the code's softmax has no term left); and -yx
as 1e9 (y_i - y_k)^2, since the code divides by max(-||A_i - A_k||^2, 1e-9) = 1e-9. Training and
prediction are the text's in every other respect (the same simplices, the same linear QP).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache

import numpy as np

from afr_cli.core.params import is_integer
from afr_cli.ensembles.leaf_statistics import RowTensors, softmax_neg
from afr_cli.errors import AfrInputError
from afr_cli.models.abrf import code_temperature
from afr_cli.models.base import (
    CODE,
    DESIGN,
    EPS,
    MIXING,
    TAU,
    TEXT,
    CodeDifference,
    Family,
    Param,
    reading_param,
    uniform,
)
from afr_cli.solvers.solve import ConstraintBuilder, LinearAttentionProblem

VARIANTS = ("y", "x", "yx")
YX_FLOOR = 1e-12
GAMMA = Param("gamma", MIXING, 0.5, 0.0, 1.0, doc="Huber contamination of the softmax self-attention")
KAPPA = Param("kappa", DESIGN, 1.0, 0.0, None, low_open=True, doc="self-attention temperature: softmax(-s / kappa)")
READING = reading_param(
    "tree softmax(-tau d / 2) and self-attention softmax(-kappa s), both multiplying; a tree's own "
    "prediction left out of its self-attention; -yx as 1e9 (y_i - y_k)^2"
)
CODE_YX_SCALE = 1e9  # the code's -yx: (y_i - y_k)^2 / 1e-9


def pair_dissimilarity(values: np.ndarray, keys: np.ndarray, variant: str) -> np.ndarray:
    """s_ik of every row, (n, T, T), for values y (n, T) and keys A (n, T, m); see module doc."""
    if variant == "y":
        diff = values[:, :, None] - values[:, None, :]
        return np.square(diff, out=diff)
    sq = np.einsum("ntm,ntm->nt", keys, keys)
    norms = sq[:, :, None] + sq[:, None, :]
    dist = np.matmul(keys, keys.transpose(0, 2, 1))
    dist *= -2.0
    dist += norms
    np.maximum(dist, 0.0, out=dist)
    diag = np.arange(keys.shape[1])
    dist[:, diag, diag] = 0.0
    if variant == "x":
        return dist
    norms += 1.0
    norms *= YX_FLOOR
    np.maximum(dist, norms, out=dist)
    del norms
    num = values[:, :, None] - values[:, None, :]
    np.square(num, out=num)
    return np.divide(num, dist, out=num)


# Rows per block of the self-attention: one block's (rows, T, T) tensors stay in the CPU cache.
# Every row's numbers are computed alone (batched matmul, per-line sums), so blocking changes no
# bit; at T = 100 and n = 1200 it is 3-6x faster than one whole-set tensor (measured, 1 thread).
CHAIN_BLOCK_ROWS = 32


def attention_chain(rows: RowTensors, variant: str, kappas: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """(Z_0, ..., Z_{t-1}), Z_{j-1} = S_j Z_j, Z_t = B: self-attention applied to the values.

    Each T x T tensor S_j is built vectorised over a block of rows from one dissimilarity tensor,
    used once and freed; only the (n, T) products are cached on the rows, per (variant, kappas).
    """

    def build() -> tuple[np.ndarray, ...]:
        if variant == "y" and _walks_pairs(rows.values):
            return chain_y(rows.values, rows.keys, kappas)
        starts = range(0, rows.n_rows, CHAIN_BLOCK_ROWS) if rows.n_rows else [0]
        blocks = [
            _chain_block(rows.values[a : a + CHAIN_BLOCK_ROWS], rows.keys[a : a + CHAIN_BLOCK_ROWS], variant, kappas)
            for a in starts
        ]
        return tuple(np.concatenate([b[j] for b in blocks]) for j in range(len(kappas)))

    return rows.memo(("sat-rf", "chain", variant, tuple(float(k) for k in kappas)), build)


def _chain_block(
    values: np.ndarray, keys: np.ndarray, variant: str, kappas: tuple[float, ...]
) -> tuple[np.ndarray, ...]:
    if variant == "y" and _walks_pairs(values):
        return chain_block_y(values, kappas)
    if variant == "x" or (variant == "yx" and _walks_pairs(values)):
        return chain_block_fused(values, keys, variant, kappas)
    return tensor_chain_block(values, keys, variant, kappas)


def tensor_chain_block(
    values: np.ndarray, keys: np.ndarray, variant: str, kappas: tuple[float, ...]
) -> tuple[np.ndarray, ...]:
    """A block's chain through the (rows, T, T) tensors: every variant's path, and the reference
    the compiled y step is pinned against (tests, ``afr bench satrf``)."""
    s = pair_dissimilarity(values, keys, variant)
    z = values
    chain = []
    for kappa in reversed(kappas):
        z = attend(self_attention(s, kappa), z)
        chain.append(z)
    return tuple(reversed(chain))


def _walks_pairs(values: np.ndarray) -> bool:
    """Whether the compiled y step gives numpy's bits for this block: two rows or more, two trees
    or more, rows the innermost axis in memory (the leaf values in column order, as every row set
    holds them). Then numpy lays out the dissimilarity tensor rows-innermost, sums each line over
    k one term after another and never hands a matrix to BLAS; a one-row block (a row set of
    n = 1 mod 32 rows ends in one) is laid out k-innermost, summed pairwise and multiplied by BLAS,
    so it stays on numpy's path, as does any other layout."""
    n, T = values.shape
    return n >= 2 and T >= 2 and values.strides[0] == values.itemsize


def symmetric_exponentials(values: np.ndarray, kappa: float) -> np.ndarray:
    """exp(-(y_i - y_k)^2 / kappa) once per pair i < k, (n, T(T-1)/2), row-major pairs: each the same
    subtraction, square and division as ``self_attention`` of ``pair_dissimilarity`` takes for
    (i, k), and for (k, i) too ((y_k - y_i)^2 is (y_i - y_k)^2 exactly), computed in the kernel;
    the exponential is numpy's."""
    from afr_cli.models import satrf_kernels

    return np.exp(satrf_kernels.pair_scores(values, -kappa))


# Rows per call of the compiled step: each row's numbers are its own, so this only bounds the
# memory of the pair exponentials (rows x T(T-1)/2 floats: 10 MB at T = 100).
KERNEL_ROWS = 256


def chain_y(values: np.ndarray, keys: np.ndarray, kappas: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """The y chain of a whole row set, bit for bit the tensor path's blocks of CHAIN_BLOCK_ROWS: the
    compiled step over every row but a last one-row block (n = 1 mod 32), which numpy's BLAS path
    computes (``tensor_chain_block``, as before)."""
    n = values.shape[0]
    end = n - 1 if n % CHAIN_BLOCK_ROWS == 1 else n
    parts = [chain_block_y(values[a : min(a + KERNEL_ROWS, end)], kappas) for a in range(0, end, KERNEL_ROWS)]
    if end < n:
        parts.append(tensor_chain_block(values[end:], keys[end:], "y", kappas))
    return tuple(np.concatenate([p[j] for p in parts]) for j in range(len(kappas)))


def chain_block_y(values: np.ndarray, kappas: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """The y chain of a block by the compiled step (``satrf_kernels``): bit for bit the tensor path;
    the exponentials of a kappa repeated across heads are taken once."""
    from afr_cli.models import satrf_kernels  # numba only where SAT-RF-y features are built

    exps: dict[float, np.ndarray] = {}
    z = values
    chain = []
    for kappa in reversed(kappas):
        if kappa not in exps:
            exps[kappa] = symmetric_exponentials(values, kappa)
        z = satrf_kernels.attend_symmetric(exps[kappa], np.ascontiguousarray(z))
        chain.append(z)
    return tuple(reversed(chain))


def chain_block_fused(
    values: np.ndarray, keys: np.ndarray, variant: str, kappas: tuple[float, ...]
) -> tuple[np.ndarray, ...]:
    """The x or yx chain of a block with its elementwise passes fused (``satrf_kernels``), bit for
    bit ``tensor_chain_block``: numpy still takes the key norms (einsum), the Gram stack (matmul),
    s / -kappa and every exponential; one compiled pass turns the Gram stack into the dissimilarity
    (the six to twelve passes of ``pair_dissimilarity``), another divides each line by its sum.

    x: the tensors are C-ordered, so numpy sums each line pairwise (``normalize_lines`` does the
    same) and ``attend`` hands the matrices to BLAS, as before. yx (rows innermost, as
    ``_walks_pairs`` requires): each line summed one term after another and attended column by
    column, both in ``attend_lines``. Any other block (T < 2 trees; yx with one row, or leaf values
    laid out by row) stays on the tensor path."""
    from afr_cli.models import satrf_kernels  # numba only where SAT-RF features are built

    if values.shape[1] < 2:
        return tensor_chain_block(values, keys, variant, kappas)
    sq = np.einsum("ntm,ntm->nt", keys, keys)
    gram = np.matmul(keys, keys.transpose(0, 2, 1))
    if not gram.flags.c_contiguous:  # numpy's own layout decides its sums: not a layout seen here
        return tensor_chain_block(values, keys, variant, kappas)
    s = satrf_kernels.dissimilarity_from_gram(gram, sq, values, variant == "yx")
    z = values
    chain = []
    for kappa in reversed(kappas):
        e = np.divide(s, -kappa)
        np.exp(e, out=e)
        if variant == "x":
            z = attend(satrf_kernels.normalize_lines(e), z)
        else:
            z = satrf_kernels.attend_lines(e, np.ascontiguousarray(z))
        chain.append(z)
    return tuple(reversed(chain))


def self_attention(s: np.ndarray, kappa: float) -> np.ndarray:
    """softmax_k(-s / kappa) of a dissimilarity tensor (n, T, T), bit for bit ``softmax_neg(s, kappa,
    axis=2)`` in three passes instead of six.

    ``pair_dissimilarity`` is never negative and is exactly zero on the diagonal (s_kk = 0), so the
    largest entry of every line of -s / kappa is a zero: the stabilising shift subtracts (signed) zero,
    which changes no exponential, and is left out. ``s / -kappa`` is ``-s / kappa`` exactly (IEEE
    division is sign-symmetric)."""
    z = np.divide(s, -kappa)
    np.exp(z, out=z)
    z /= z.sum(axis=2, keepdims=True)
    return z


def _blas_matrix(a: np.ndarray) -> bool:
    """Whether numpy's matmul hands each (T, T) matrix of ``a`` to BLAS: one of its two axes has unit
    stride and the other a stride of at least the matrix's side (numpy's ``is_blasable2d``, C or F)."""
    item = a.itemsize
    (rows, cols), (s_rows, s_cols) = a.shape[1:], a.strides[1:]
    c_order = s_cols == item and s_rows % item == 0 and s_rows // item >= cols
    f_order = s_rows == item and s_cols % item == 0 and s_cols // item >= rows
    return c_order or f_order


def attend(attention: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per row, attention (T, T) times z (T): ``np.matmul(attention, z[:, :, None])[:, :, 0]``, bit for bit.

    Where numpy would hand the matrices to BLAS (gemv) it still does. Otherwise, as with the
    dissimilarity tensors built from the column-ordered leaf values, numpy's own loop sums each
    row's products one after another from zero, striding across memory per element; the same sums
    taken for all rows at once, one product column at a time, are identical and 2-3x faster."""
    if attention.shape[2] < 2 or _blas_matrix(attention):
        return np.matmul(attention, z[:, :, None])[:, :, 0]
    out = np.zeros(attention.shape[:2])
    for k in range(attention.shape[2]):
        out += attention[:, :, k] * z[:, k, None]
    return out


def code_attention_chain(rows: RowTensors, variant: str, sa_taus: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """(Z_0, ..., Z_{t-1}) under the code reading: each head's self-attention ``code_self_attention``
    of ``code_dissimilarity`` at the grid's kappa_j (the code's ``sa_tau``), built per block of
    rows and cached on the rows per (variant, kappas)."""

    def build() -> tuple[np.ndarray, ...]:
        starts = range(0, rows.n_rows, CHAIN_BLOCK_ROWS) if rows.n_rows else [0]
        blocks = []
        for a in starts:
            values = rows.values[a : a + CHAIN_BLOCK_ROWS]
            s = code_dissimilarity(values, rows.keys[a : a + CHAIN_BLOCK_ROWS], variant)
            z, chain = values, []
            for sa_tau in reversed(sa_taus):
                z = attend(code_self_attention(s, sa_tau), z)
                chain.append(z)
            blocks.append(tuple(reversed(chain)))
        return tuple(np.concatenate([b[j] for b in blocks]) for j in range(len(sa_taus)))

    return rows.memo(("sat-rf", "code chain", variant, tuple(float(k) for k in sa_taus)), build)


def code_dissimilarity(values: np.ndarray, keys: np.ndarray, variant: str) -> np.ndarray:
    """s_ik as the authors' code computes it, (n, T, T): the text's for -y and -x; for -yx the -y
    dissimilarity times 1e9 (its denominator max(-||A_i - A_k||^2, 1e-9) is always 1e-9)."""
    if variant != "yx":
        return pair_dissimilarity(values, keys, variant)
    s = pair_dissimilarity(values, keys, "y")
    s *= CODE_YX_SCALE
    return s


def code_self_attention(s: np.ndarray, sa_tau: float) -> np.ndarray:
    """softmax_k(-sa_tau s_ik) with k = i left out (weight 0), as the code's default
    ``sa_zero_diagonals`` does; with a single tree there is nothing else, and its own weight stays 1."""
    z = np.multiply(s, -float(sa_tau))
    trees = z.shape[2]
    if trees > 1:
        diag = np.arange(trees)
        z[:, diag, diag] = -np.inf
    z -= z.max(axis=2, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=2, keepdims=True)
    return z


def tree_attention(rows: RowTensors, tau: float) -> np.ndarray:
    """softmax_i(-||x - A_i(x)||^2 / tau), (n, T), cached on the rows per tau."""
    return rows.memo(("sat-rf", "alpha", float(tau)), lambda: softmax_neg(rows.key_sqdist, tau))


@dataclass(frozen=True)
class SATFeatures:
    """Per row set and design: the alpha softmax a (n, T) and the chain (Z_0, ..., Z_t = B)."""

    attention: np.ndarray
    chain: tuple[np.ndarray, ...]


class SATRFFamily(Family):
    """SAT-RF with ``heads`` stacked self-attentions (paper Section 6, eqs 34-35).

    Two heads: yhat = sum_i sum_k1 sum_k2 alpha_i beta1_{i k1} beta2_{k1 k2} y_k2 (eq 34, t = 2;
    eq 33's beta2(y_i, y_k2) would let beta1 sum out, so eq 34-35 is the form meant), with
    beta_j = (1 - gamma_j) softmax(-s / kappa_j) + gamma_j v^(j) (eq 35). Linear in (w, v1, v2)
    (Proposition 1): the products w_i v1_k1, w_i v2_k2, v1_k1 v2_k2 each meet a factor that sums
    to one (sum_i alpha_i = 1, sum_k1 beta1_{i k1} = 1), e.g. eps gamma2 (1 - gamma1)
    sum_i w_i v2_k y_k = eps gamma2 (1 - gamma1) v2_k y_k; collected, this is the module doc's
    yhat = (1-eps)(1-g1)(1-g2) a.S1S2y + eps (1-g1)(1-g2) w.S1S2y + g1 (1-g2) v1.S2y + g2 v2.y.
    """

    variant: str
    heads: int
    code_source = "andruekonst/forest-self-attention@129a6d7"
    code_differences = (
        CodeDifference(
            "tree attention",
            "softmax(-||x - A_k(x)||^2 / tau)",
            "softmax(-0.5 tau ||x - A_k(x)||^2): tau multiplies, so the text's temperature is 2 / tau",
            "sa_forest/model.py:219, 223",
        ),
        CodeDifference(
            "self-attention temperature",
            "softmax(-s_ik / kappa) (eqs 16-17; afr drops the printed 2)",
            "softmax(-sa_tau s_ik): sa_tau multiplies, so the text's kappa is 1 / sa_tau",
            "sa_forest/model.py:263",
        ),
        CodeDifference(
            "a tree's own prediction",
            "the sum over k includes k = i (s_ii = 0, the largest weight)",
            "sa_zero_diagonals=True by default: s_ii = -inf before the softmax, weight 0",
            "sa_forest/model.py:23, 259-262",
        ),
        CodeDifference(
            "-yx dissimilarity",
            "(y_i - y_k)^2 / ||A_i - A_k||^2",
            "-(y_i - y_k)^2 / max(-||A_i - A_k||^2, 1e-9): the denominator is always 1e-9, so the -y "
            "dissimilarity times 1e9",
            "sa_forest/model.py:252-256",
        ),
    )

    @classmethod
    def gamma_names(cls) -> tuple[str, ...]:
        return ("gamma",) if cls.heads == 1 else tuple(f"gamma{j}" for j in range(1, cls.heads + 1))

    @classmethod
    def kappa_names(cls) -> tuple[str, ...]:
        return ("kappa",) if cls.heads == 1 else tuple(f"kappa{j}" for j in range(1, cls.heads + 1))

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> SATFeatures:
        """The tree attention and the self-attention chain of the rows, under the text reading or
        the code's (module doc)."""
        kappas = tuple(design[k] for k in self.kappa_names())
        if design.get("reading", TEXT) == CODE:
            chain = code_attention_chain(rows, self.variant, kappas) + (rows.values,)
            return SATFeatures(tree_attention(rows, code_temperature(design["tau"])), chain)
        chain = attention_chain(rows, self.variant, kappas) + (rows.values,)
        return SATFeatures(tree_attention(rows, design["tau"]), chain)

    def coefficients(self, mixing: Mapping[str, float]) -> tuple[float, np.ndarray]:
        """Scale of R and of each block's column (w, v_1, ..., v_t): the c_j of the module doc."""
        eps = mixing["eps"]
        gammas = np.array([mixing[g] for g in self.gamma_names()])
        tail = np.append(np.cumprod((1.0 - gammas)[::-1])[::-1], 1.0)  # c_0, ..., c_t
        return (1.0 - eps) * tail[0], np.concatenate([[eps * tail[0]], gammas * tail[1:]])

    def training_problem(
        self, feats: SATFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> LinearAttentionProblem | None:
        r_scale, scales = self.coefficients(mixing)
        active = np.flatnonzero(scales > 0.0)
        if not len(active):
            return None
        T = feats.attention.shape[1]
        Phi = np.hstack([scales[j] * feats.chain[j] for j in active])
        builder = ConstraintBuilder(len(active) * T)
        for b in range(len(active)):
            builder.simplex(slice(b * T, (b + 1) * T))
        r = r_scale * np.einsum("nt,nt->n", feats.attention, feats.chain[0])
        return LinearAttentionProblem(y, r, Phi, builder.build())

    def blocks(self, feats: SATFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> list[np.ndarray]:
        """(w, v_1, ..., v_t) from theta; blocks left out of training are uniform."""
        T = feats.attention.shape[1]
        scales = self.coefficients(mixing)[1]
        out = [uniform(T) for _ in scales]
        for b, j in enumerate(np.flatnonzero(scales > 0.0)):
            out[j] = theta[b * T : (b + 1) * T]
        return out

    def predict(self, feats: SATFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        r_scale, scales = self.coefficients(mixing)
        pred = r_scale * np.einsum("nt,nt->n", feats.attention, feats.chain[0])
        for scale, z, block in zip(scales, feats.chain, self.blocks(feats, mixing, theta)):
            pred += scale * (z @ block)
        return pred

    def fitted_attributes(self, feats, mixing, theta):
        w, *vs = self.blocks(feats, mixing, theta)
        return {"w_": w, "v_": vs[0] if self.heads == 1 else np.vstack(vs)}


def satrf_family(variant: str = "y", heads: int = 1) -> SATRFFamily:
    """The SAT-RF family for a variant ('y', 'x', 'yx') and head count (names sat-rf-y, sat-rf-y2, ...)."""
    if variant not in VARIANTS:
        raise AfrInputError(f"SAT-RF variant: {variant!r} is not allowed; allowed: {', '.join(VARIANTS)}")
    if not is_integer(heads) or heads < 1:
        raise AfrInputError(f"SAT-RF heads: {heads!r} is not allowed; heads must be an integer >= 1")
    return _family(variant, int(heads))


# What each variant's self-attention compares between two trees i, k (s_ik of the module doc).
_COMPARES = {
    "y": "their predictions, (y_i - y_k)^2",
    "x": "the mean training vectors of the leaves x falls in, ||A_i - A_k||^2",
    "yx": "their predictions relative to their leaf means' distance, (y_i - y_k)^2 / ||A_i - A_k||^2",
}


def _summary(variant: str, heads: int) -> str:
    """The ``afr models`` line of a variant: what its self-attention between trees compares, and
    how many self-attentions are stacked (paper Sections 4-5 define the variants, 6 the heads)."""
    if heads == 1:
        return (
            f"SAT-RF-{variant}: eps-ABRF's tree attention, then self-attention between trees that "
            f"compares {_COMPARES[variant]} (SAT-RF paper sec. 4-5)"
        )
    return (
        f"SAT-RF-{variant} with {heads} heads: eps-ABRF's tree attention, then {heads} stacked "
        f"self-attentions between trees, each with its own gamma and kappa, that compare "
        f"{_COMPARES[variant]} (SAT-RF paper sec. 6)"
    )


@cache
def _family(variant: str, heads: int) -> SATRFFamily:
    """One instance per (variant, heads): a subclass fixing name, params (gamma1.., kappa1..), variant."""
    suffix = "" if heads == 1 else str(heads)
    if heads == 1:
        head_params = (GAMMA, KAPPA)
    else:
        head_params = tuple(
            replace(p, name=f"{p.name}{j}", doc=f"{p.doc} (head {j})")
            for p in (GAMMA, KAPPA)
            for j in range(1, heads + 1)
        )
    attrs = {
        "name": f"sat-rf-{variant}{suffix}",
        "variant": variant,
        "heads": heads,
        "summary": _summary(variant, heads),
        "params": (EPS, TAU) + head_params + (READING,),
    }
    return type(f"SATRF{variant.upper()}{suffix}Family", (SATRFFamily,), attrs)()
