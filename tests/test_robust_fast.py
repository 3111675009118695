"""The robust RF's features and costs without repeated work (afr_cli/models/robust.py), pinned byte
for byte against the literal formulas they replace.

- ``half_widths`` takes scipy's t quantile once per distinct count (it took it per leaf of every
  row set: most of the family's features);
- a row set's half-widths are the forest's per-node ones (``node_half_widths``, once per forest
  and alpha) gathered at its leaves, C-ordered like the array they replace;
- the scaled costs are computed once per features and training targets (``IntervalFeatures.costs``),
  not once per (eps, lambda) point of the grid, and kept read-only.

No tolerance: the quantile is a scalar function of each count, and the products, quotients and
sums after it are the same operations on the same numbers in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from afr_cli.ensembles import get_ensemble
from afr_cli.ensembles.leaf_statistics import LeafStatistics
from afr_cli.models import FAMILIES
from afr_cli.models.robust import half_widths, node_table, scaled_costs


def _literal_half_widths(sd: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """The quantile taken per leaf, as before."""
    from scipy import stats as sps

    counts = np.asarray(counts, dtype=float)
    ok = counts >= 2
    out = np.zeros(np.shape(counts))
    t = sps.t.ppf(1.0 - alpha / 2.0, counts[ok] - 1.0)
    out[ok] = t * np.asarray(sd, dtype=float)[ok] / np.sqrt(counts[ok])
    return out


@pytest.mark.parametrize("alpha", [0.05, 0.2, 1e-6, 0.999])
def test_half_widths_per_distinct_count_are_the_literal_ones(alpha):
    rng = np.random.default_rng(3)
    counts = np.concatenate([[0, 1, 2, 3, 2, 1e6, 1.5, 2.5], rng.integers(0, 40, 3000)]).astype(float)
    sd = np.concatenate([[0.0, 1.0, 0.0, 2.5, 1e-300, 3.0, 1.0, 7.0], rng.gamma(1.0, 2.0, 3000)])
    for shape in ((len(counts),), (4, len(counts) // 4)):
        c, s = counts.reshape(shape), sd.reshape(shape)
        got, want = half_widths(s, c, alpha), _literal_half_widths(s, c, alpha)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert half_widths(np.zeros(0), np.zeros(0), alpha).shape == (0,)
    assert half_widths(np.ones(3), np.ones(3), alpha).tobytes() == np.zeros(3).tobytes()


@pytest.mark.parametrize("family", ["robust-rf", "robust-rf-train"])
@pytest.mark.parametrize("kind, leaf", [("rf", 1), ("rf", 5), ("ert", 1)])
def test_features_and_costs_are_the_literal_ones(family, kind, leaf, small_data):
    Xtr, ytr, Xte, _ = small_data
    forest = get_ensemble(kind).fit(Xtr, ytr, 1, n_estimators=9, min_samples_leaf=leaf)
    stats = LeafStatistics(forest, Xtr, ytr)
    fam = FAMILIES[family]
    for rows in (stats.rows(), stats.rows(Xte), stats.rows(np.asfortranarray(Xte[::-1]))):
        table = node_table(rows, fam.leaf_stats)
        for alpha in (0.2, 0.05):
            feats = fam.features(rows, {"alpha": alpha})
            want = _literal_half_widths(table.sd[rows.leaves], table.count[rows.leaves], alpha)
            assert feats.h.flags.c_contiguous and feats.h.tobytes() == want.tobytes()
    feats = fam.features(stats.rows(), {"alpha": 0.2})
    for y in (ytr, ytr[::-1].copy(), np.zeros_like(ytr)):
        got = fam.costs(feats, y)
        assert got.tobytes() == scaled_costs(y, feats.z, feats.h).tobytes()


def test_costs_are_computed_once_per_features_and_targets(small_data):
    """Fails on the old code, which recomputed them for every grid point (a new array each time)."""
    Xtr, ytr, _, _ = small_data
    forest = get_ensemble("rf").fit(Xtr, ytr, 0, n_estimators=6, min_samples_leaf=2)
    fam = FAMILIES["robust-rf"]
    feats = fam.features(LeafStatistics(forest, Xtr, ytr).rows(), {"alpha": 0.2})
    first = fam.costs(feats, ytr)
    assert fam.costs(feats, ytr.copy()) is first  # the same targets: the kept array
    assert not first.flags.writeable  # no problem built from it can change another's
    other = fam.costs(feats, ytr + 1.0)
    assert other is not first and other.tobytes() == scaled_costs(ytr + 1.0, feats.z, feats.h).tobytes()
    problems = [fam.training_problem(feats, ytr, {"eps": 0.5, "lam": lam}) for lam in (0.0, 0.1)]
    assert all(p.c is first for p in problems[:1]) and problems[1].f is first
