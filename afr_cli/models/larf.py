"""LARF (Konstantinov, Utkin, Muliukha 2023): ten variants of a mixture of contamination models.

Second level: M heads with tau_j = 10^linspace(-(M-1)/2, (M-1)/2, M) over keys A_k and values
B_k (plain leaf means for *-ARF, the leaf attention of ``larf_leaf`` for *-LARF). With
S_j(x) = sum_k softmax_k(-||x - A_k(x)||^2 / tau_j) B_k(x), every variant predicts

    yhat(x) = (1/M) sum_j (1 - eps_j) S_j(x) + mean(eps) sum_k w_k B_k(x)

and differs only in what is trained: w- trains w (eps fixed, eq 16), eps- trains eps (w = 1/T,
eq 17), eps-w- trains both (eqs 18-20), epsM-/epsM-w- the same with M heads (eqs 33-35).

``reading`` picks whose computation this is. "text" (the default) is the paper's, as above.
"code" is what the authors' public code (andruekonst/leaf-attention-forest) computes instead:
the leaf attention softmax(-tau0 ||x - x_j||^2 / 2) (the grid's tau0 multiplies; the text's
temperature is 2 / tau0), each head softmax_k(-t_j ||x - A_k(x)|| / 2) on the plain distance
with t_j = 10^linspace(floor(-M/2), floor(M/2), M), and the trained head weights g_j >= 0 free
on the simplex with the static weight (no (1 - varsigma)/M bound per head, no varsigma floor):

    yhat(x) = sum_j g_j S_j(x) + sum_k G_k B_k(x),  g, G >= 0, sum g + sum G = 1,

with G = g_s / T (eps-: w = 1/T) or G free (eps-w-). w- variants, which the code lacks, keep
their fixed eps and differ only in the attention forms. docs/models.md lists each difference
with the file and line of the authors' code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from afr_cli.ensembles.leaf_statistics import RowTensors
from afr_cli.errors import AfrInputError
from afr_cli.models.base import (
    CODE,
    DESIGN,
    EPS,
    MIXING,
    TEXT,
    CodeDifference,
    Family,
    Param,
    reading_param,
    uniform,
)
from afr_cli.models.larf_leaf import leaf_attention
from afr_cli.solvers.solve import ConstraintBuilder, LinearAttentionProblem, simplex_constraints

TAU0 = Param(
    "tau0",
    DESIGN,
    1.0,
    0.0,
    None,
    low_open=True,
    doc="temperature of the leaf attention mu = softmax(-||x - x_j||^2 / tau0)",
)
HEADS = Param(
    "M",
    DESIGN,
    1,
    1.0,
    None,
    integer=True,
    doc="number of contamination models, tau_j = 10^linspace(-(M-1)/2, (M-1)/2, M)",
)
VARSIGMA = Param(
    "varsigma",
    MIXING,
    1e-3,
    0.0,
    1.0,
    low_open=True,
    doc="floor of the trained eps_j (paper's varsigma; fixed, not tuned; unused by reading code)",
)
READING = reading_param(
    "leaf softmax(-tau0 d^2/2), heads on the plain distance with t_j = 10^linspace(-M//2, M//2, M), "
    "head weights free on the simplex"
)
TRAINS = ("w", "eps", "eps-w")
LARF_CODE = "andruekonst/leaf-attention-forest@d5a3527"
LARF_DIFFERENCES = (
    CodeDifference(
        "leaf attention",
        "softmax(-||x - x_j||^2 / tau0) (eq 15)",
        "softmax(-0.5 tau0 ||x - x_j||^2): the grid's tau0 multiplies, so the text's temperature is 2 / tau0",
        "leaf_att_forest/model.py:86-88",
    ),
    CodeDifference(
        "tree-level distance",
        "softmax(-||x - A_k(x)||^2 / tau_j) (eqs 13, 30)",
        "softmax(-0.5 t_j ||x - A_k(x)||): the plain distance, not its square, t_j multiplying",
        "leaf_att_forest/model.py:105-109",
    ),
    CodeDifference(
        "head temperatures",
        "tau_j = 10^linspace(-(M-1)/2, (M-1)/2, M), symmetric about 1 (Section 6: M = 1 gives tau = 1)",
        "t_j = logspace(-M // 2, M // 2, M): floor division makes it asymmetric (M = 3: 10^-2, 10^-0.5, "
        "10^1) and M = 1 gives t = 0.1",
        "leaf_att_forest/model.py:69-71",
    ),
    CodeDifference(
        "head weights (eps- and eps-w- variants)",
        "(1 - eps_j) / M with varsigma <= eps_j <= 1 (eqs 20, 35): each head at most (1 - varsigma) / M, "
        "the static part at least varsigma",
        "gamma_1..gamma_M and gamma_static >= 0 summing to 1 (trained w >= 0 with sum w = gamma_static): "
        "no bound per head, no floor",
        "leaf_att_forest/model.py:155-183",
    ),
)


def head_taus(M: int) -> np.ndarray:
    """The M second-level temperatures 10^-(M-1)/2, ..., 10^(M-1)/2 (M = 1 gives tau = 1)."""
    return 10.0 ** _exponents(M)


def _exponents(M: int) -> np.ndarray:
    return np.arange(M) - (M - 1) / 2.0


def code_head_scales(M: int) -> np.ndarray:
    """The authors' code's M head multipliers t_j = 10^linspace(floor(-M/2), floor(M/2), M): each
    head is softmax(-t_j d / 2). Asymmetric through the floor division (M = 3: 10^-2, 10^-0.5,
    10^1), and M = 1 gives t = 0.1 where the text has tau = 1."""
    return 10.0 ** np.linspace((-M) // 2, M // 2, M)


def code_temperatures(M: int) -> np.ndarray:
    """The code reading's heads as temperatures on the plain distance: softmax(-d / (2 / t_j))."""
    return 2.0 / code_head_scales(M)


def code_leaf_temperature(tau0: float) -> float:
    """The text's leaf temperature the code computes for the grid value tau0: its leaf attention
    is softmax(-tau0 d^2 / 2) = softmax(-d^2 / (2 / tau0))."""
    return 2.0 / float(tau0)


@dataclass(frozen=True)
class MixtureFeatures:
    """Values B (n, T), head sums S (n, M) with S[:, j] = sum_k softmax_k(.. / tau_j) B_k, taus (M,)."""

    values: np.ndarray
    head_sums: np.ndarray
    taus: np.ndarray
    reading: str = TEXT


def mixture_features(
    rows: RowTensors, tau0: float | None, M: int, exclude_self: bool = False, reading: str = TEXT
) -> MixtureFeatures:
    """Features of M heads over plain leaf means (tau0 None) or the leaf attention with tau0
    (``exclude_self``: training rows do not attend to themselves, see ``leaf_attention``), as the
    paper's text computes them or (``reading`` "code") as the authors' code does.

    Each head's sum is cached on the rows per (tau0, tau_j), so the sweep over M reuses them.
    """
    if reading == CODE:
        return _code_features(rows, tau0, M, exclude_self)
    exclude = bool(exclude_self and tau0 is not None and rows.training)
    if tau0 is None:
        sqdist, values = rows.key_sqdist, rows.values
    else:
        level = leaf_attention(rows, tau0, exclude)
        sqdist, values = level.key_sqdist, level.values

    def head(exponent: float) -> np.ndarray:
        return rows.memo(
            ("larf-head", tau0, exclude, exponent), lambda: head_sum(sqdist, values, 10.0**exponent, minima())
        )

    def minima() -> np.ndarray:
        return rows.memo(("larf-head-minima", tau0, exclude), lambda: row_minima(sqdist))

    sums = np.column_stack([head(float(e)) for e in _exponents(M)])
    return MixtureFeatures(values, sums, head_taus(M))


def _code_features(rows: RowTensors, tau0: float | None, M: int, exclude_self: bool) -> MixtureFeatures:
    """The code reading's features: leaf temperature 2 / tau0, heads softmax(-t_j d / 2) on the
    plain distance d = ||x - A_k(x)||, t_j from ``code_head_scales``."""
    exclude = bool(exclude_self and tau0 is not None and rows.training)
    if tau0 is None:
        sqdist, values = rows.key_sqdist, rows.values
    else:
        level = leaf_attention(rows, code_leaf_temperature(tau0), exclude)
        sqdist, values = level.key_sqdist, level.values
    key = ("larf-code", tau0, exclude)
    # sqrt of a squared distance rounded below zero would be NaN: clip, as a distance is >= 0
    dist = rows.memo((*key, "distance"), lambda: np.sqrt(np.maximum(np.asarray(sqdist, dtype=float), 0.0)))
    minima = rows.memo((*key, "minima"), lambda: row_minima(dist))
    temps = code_temperatures(M)
    sums = np.column_stack(
        [rows.memo((*key, float(t)), lambda t=t: head_sum(dist, values, float(t), minima)) for t in temps]
    )
    return MixtureFeatures(values, sums, temps, CODE)


def row_minima(sqdist: np.ndarray) -> np.ndarray:
    """Each row's smallest squared distance, (n,): what every head's softmax shifts by."""
    from afr_cli.models import larf_kernels  # numba only where LARF's features are built

    return larf_kernels.row_minima(np.asarray(sqdist, dtype=float))


def head_sum(sqdist: np.ndarray, values: np.ndarray, tau: float, minima: np.ndarray | None = None) -> np.ndarray:
    """sum_k softmax_k(-sqdist / tau) values_k per row, (n,): ``np.einsum("nt,nt->n",
    softmax_neg(sqdist, tau), values)`` bit for bit, the softmax's passes other than numpy's exp
    compiled (``larf_kernels``; numpy's einsum is faster than a compiled sum in its order
    here). ``minima``: ``row_minima(sqdist)``, shared by every tau."""
    from afr_cli.models import larf_kernels  # numba only where LARF's features are built

    sqdist = np.asarray(sqdist, dtype=float)
    E = larf_kernels.row_logits(sqdist, row_minima(sqdist) if minima is None else minima, tau)
    np.exp(E, out=E)
    return np.einsum("nt,nt->n", larf_kernels.softmax_rows(E), values)


class LARFFamily(Family):
    """One LARF variant; subclasses pass ``leaf``, ``trains`` and ``mixture`` as class keywords.

    theta layout: w- (w_1..w_T) on the simplex; eps- (eps_1..eps_M) in boxes; eps-w-
    (G_1..G_T, eps_1..eps_M) with G = sum_j gamma^(j) >= 0 and sum_k G_k = sum_j eps_j.
    """

    leaf: ClassVar[bool]
    trains: ClassVar[str]
    mixture: ClassVar[bool]
    eps_floor: ClassVar[bool]
    # Every grid point has its own Phi (tau0 and M change the head sums or the leaf attention, eps
    # scales B; varsigma only bounds), and each stage its own rows: 0 repeated problems in 976
    # solves of LARF's units measured, so the solve memo does not key them.
    repeats_problems = False
    code_source = LARF_CODE
    code_differences = LARF_DIFFERENCES

    def __init_subclass__(cls, *, leaf: bool, trains: str, mixture: bool, leave_self_out: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        if trains not in TRAINS:
            raise ValueError(f"trains must be one of {TRAINS}, got {trains!r}")
        cls.leaf, cls.trains, cls.mixture = leaf, trains, mixture
        cls.leave_self_out = leave_self_out
        # eq 17 (eps-) keeps eps in [0, 1]; eqs 20 and 35 put a floor varsigma under eps_j.
        cls.eps_floor = trains == "eps-w" or (trains == "eps" and mixture)
        used = ((EPS, trains == "w"), (VARSIGMA, cls.eps_floor), (HEADS, mixture), (TAU0, leaf), (READING, True))
        cls.params = tuple(p for p, on in used if on)

    def features(self, rows: RowTensors, design: Mapping[str, float]) -> MixtureFeatures:
        return mixture_features(
            rows,
            design["tau0"] if self.leaf else None,
            int(design["M"]) if self.mixture else 1,
            self.leave_self_out,
            design.get("reading", TEXT),
        )

    def training_problem(
        self, feats: MixtureFeatures, y: np.ndarray, mixing: Mapping[str, float]
    ) -> LinearAttentionProblem | None:
        B, S = feats.values, feats.head_sums
        T, M = B.shape[1], S.shape[1]
        if feats.reading == CODE and self.trains != "w":
            return _code_problem(self.trains, B, S, y)
        if self.trains == "w":  # eq 16: r = (1-eps) C, Phi = eps D, w in simplex
            eps = mixing["eps"]
            if eps == 0.0:
                return None
            return LinearAttentionProblem(y, (1.0 - eps) * S[:, 0], eps * B, simplex_constraints(T))
        floor = mixing["varsigma"] if self.eps_floor else 0.0
        r = S.mean(axis=1)
        if self.trains == "eps":  # eqs 17, 33 with w = 1/T
            Phi = (B.mean(axis=1)[:, None] - S) / M
            return LinearAttentionProblem(y, r, Phi, ConstraintBuilder(M).bounds(slice(None), floor, 1.0).build())
        # eqs 18-20 / 33-35: every head's gamma^(j) meets the same column block B / M, so the
        # loss depends on gamma only through G = sum_j gamma^(j); any G >= 0 summing to
        # sum_j eps_j splits back as gamma^(j) = G eps_j / sum(eps), i.e. w_k eps_j.
        eps_block = slice(T, T + M)
        cons = ConstraintBuilder(T + M).linked_sum(slice(0, T), eps_block).bounds(eps_block, floor, 1.0).build()
        return LinearAttentionProblem(y, r, np.hstack([B, -S]) / M, cons)

    def parameters(
        self, feats: MixtureFeatures, mixing: Mapping[str, float], theta: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(eps_1..eps_M, w on the simplex) of the trained (or untrained, eps = 0) model; under
        the code reading eps_j = 1 - M g_j, so the same formula predicts (eps_j may be < 0)."""
        T = feats.values.shape[1]
        if feats.reading == CODE and self.trains != "w":
            heads, static = _code_weights(self.trains, T, feats.head_sums.shape[1], theta)
            total = static.sum()
            return 1.0 - len(heads) * heads, static / total if total > 0 else uniform(T)
        if self.trains == "w":
            return np.array([mixing["eps"]]), uniform(T) if theta is None else theta
        if self.trains == "eps":
            return theta, uniform(T)
        G = theta[:T]
        return theta[T:], G / G.sum()

    def predict(self, feats: MixtureFeatures, mixing: Mapping[str, float], theta: np.ndarray | None) -> np.ndarray:
        if feats.reading == CODE and self.trains != "w":
            heads, static = _code_weights(self.trains, feats.values.shape[1], feats.head_sums.shape[1], theta)
            return feats.head_sums @ heads + feats.values @ static
        eps, w = self.parameters(feats, mixing, theta)
        return feats.head_sums @ (1.0 - eps) / len(eps) + eps.mean() * (feats.values @ w)

    def fitted_attributes(
        self, feats: MixtureFeatures, mixing: Mapping[str, float], theta: np.ndarray | None
    ) -> dict[str, np.ndarray]:
        eps, w = self.parameters(feats, mixing, theta)
        return {"taus_": feats.taus, "eps_": eps, "w_": w}


def _code_problem(trains: str, B: np.ndarray, S: np.ndarray, y: np.ndarray) -> LinearAttentionProblem:
    """The code reading's training QP: y ~ S g + B G with (g, G) on one simplex, g the M head
    weights. eps- (w = 1/T): theta = (g_1..g_M, g_s), G = g_s / T; eps-w-: theta = (G_1..G_T,
    g_1..g_M), G free. No head weight is bounded by (1 - varsigma)/M and g_s has no floor."""
    if trains == "eps":
        Phi = np.column_stack([S, B.mean(axis=1)])
    else:
        Phi = np.hstack([B, S])
    return LinearAttentionProblem(y, np.zeros(len(y)), Phi, simplex_constraints(Phi.shape[1]))


def _code_weights(trains: str, T: int, M: int, theta: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(head weights g (M,), static weights G (T,)) of the code reading's theta; untrained
    (theta None): the plain forest, g = 0 and G = 1/T."""
    if theta is None:
        return np.zeros(M), uniform(T)
    if trains == "eps":
        return theta[:-1], np.full(T, theta[-1] / T)
    return theta[T:], theta[:T]


class EpsARFFamily(LARFFamily, leaf=False, trains="eps", mixture=False):
    name = "eps-arf"
    summary = "LARF eps-ARF: trained eps, w = 1/T, plain leaf means (eq 17)"


class WARFFamily(LARFFamily, leaf=False, trains="w", mixture=False):
    name = "w-arf"
    summary = "LARF w-ARF: trained w, fixed eps, plain leaf means (eq 16; = eps-ABRF, tau = 1)"


class EpsWARFFamily(LARFFamily, leaf=False, trains="eps-w", mixture=False):
    name = "eps-w-arf"
    summary = "LARF eps-w-ARF: trained eps and w, plain leaf means (eqs 18-20)"


class EpsMARFFamily(LARFFamily, leaf=False, trains="eps", mixture=True):
    name = "em-arf"
    summary = "LARF epsM-ARF: M heads, trained eps_1..eps_M, w = 1/T, plain leaf means (eqs 33-35)"


class EpsMWARFFamily(LARFFamily, leaf=False, trains="eps-w", mixture=True):
    name = "em-w-arf"
    summary = "LARF epsM-w-ARF: M heads, trained eps_1..eps_M and w, plain leaf means (eqs 33-35)"


class EpsLARFFamily(LARFFamily, leaf=True, trains="eps", mixture=False):
    name = "eps-larf"
    summary = "LARF eps-LARF: trained eps, w = 1/T, leaf attention tau0 (eqs 15, 17)"


class WLARFFamily(LARFFamily, leaf=True, trains="w", mixture=False):
    name = "w-larf"
    summary = "LARF w-LARF: trained w, fixed eps, leaf attention tau0 (eqs 15-16)"


class EpsWLARFFamily(LARFFamily, leaf=True, trains="eps-w", mixture=False):
    name = "eps-w-larf"
    summary = "LARF eps-w-LARF: trained eps and w, leaf attention tau0 (eqs 15, 18-20)"


class EpsMLARFFamily(LARFFamily, leaf=True, trains="eps", mixture=True):
    name = "em-larf"
    summary = "LARF epsM-LARF: M heads, trained eps_1..eps_M, w = 1/T, leaf attention (eqs 33-35)"


class EpsMWLARFFamily(LARFFamily, leaf=True, trains="eps-w", mixture=True):
    name = "em-w-larf"
    summary = "LARF epsM-w-LARF: M heads, trained eps_1..eps_M and w, leaf attention (eqs 33-35)"


# Not in the paper: the two leaf-attention models LARF Table 10 picks from, with each training
# row left out of its own leaves' attention (the paper does not say whether a training row
# attends to itself; with small tau0 it then sees its own target). An experiment, not a variant.
class EpsMWLARFLeaveSelfOutFamily(LARFFamily, leaf=True, trains="eps-w", mixture=True, leave_self_out=True):
    name = "em-w-larf-loo"
    summary = "epsM-w-LARF whose training rows do not attend to themselves in the leaf (ours, not the paper's)"


class EpsMLARFLeaveSelfOutFamily(LARFFamily, leaf=True, trains="eps", mixture=True, leave_self_out=True):
    name = "em-larf-loo"
    summary = "epsM-LARF whose training rows do not attend to themselves in the leaf (ours, not the paper's)"


LEAVE_SELF_OUT_FAMILIES: dict[str, LARFFamily] = {
    f.name: f for f in (EpsMWLARFLeaveSelfOutFamily(), EpsMLARFLeaveSelfOutFamily())
}


LARF_FAMILIES: dict[str, LARFFamily] = {
    f.name: f
    for f in (
        EpsARFFamily(),
        WARFFamily(),
        EpsWARFFamily(),
        EpsMARFFamily(),
        EpsMWARFFamily(),
        EpsLARFFamily(),
        WLARFFamily(),
        EpsWLARFFamily(),
        EpsMLARFFamily(),
        EpsMWLARFFamily(),
    )
}


def larf_family(variant: str, where: str = "variant") -> LARFFamily:
    """The LARF variant called ``variant`` or an AfrInputError listing the ten names."""
    try:
        return LARF_FAMILIES[variant]
    except (KeyError, TypeError):
        raise AfrInputError(f"{where}: unknown LARF variant {variant!r}; allowed: {', '.join(LARF_FAMILIES)}") from None
