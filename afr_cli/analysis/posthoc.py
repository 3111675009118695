"""Post-hoc tests after a Friedman test, for critical-difference diagrams: which models differ.

Two choices, each at a stated alpha:

- **Nemenyi** (Demšar 2006): two models differ when their mean ranks are more than one critical
  difference apart (``afr_cli.analysis.stats.nemenyi_cd``); ``FriedmanResult.cliques`` groups them.
- **Wilcoxon–Holm** (Benavoli, Corani & Mangili 2016; the ``cd-diagram`` and aeon style): every
  pair of models is compared by the Wilcoxon signed-rank test over the datasets (scipy's defaults:
  zero differences dropped, two-sided; ``afr_cli.analysis.stats.wilcoxon_test``), the family of k(k − 1)/2
  p-values is Holm-adjusted (``afr_cli.analysis.stats.holm_adjust``), and a pair differs when its adjusted
  p is below alpha. Unlike Nemenyi's, the verdict on a pair does not depend on which other models
  are in the table.

A clique is a maximal run of models, consecutive in mean-rank order, no two of which differ: the
bars drawn under a CD diagram's axis. Runs contained in a longer one and single models are not
cliques. The differences are taken between the decimal spellings of the scores, so that two pairs
of printed values with the same gap (0.853 − 0.851 and 0.855 − 0.853) tie exactly in the
signed-rank test rather than by floating-point luck.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations

import numpy as np
import pandas as pd

from afr_cli.analysis.stats import holm_adjust, wilcoxon_test

POSTHOC_TESTS = ("nemenyi", "wilcoxon-holm")


@dataclass(frozen=True)
class PairwiseTests:
    """Wilcoxon signed-rank p-values of every pair of models over the same datasets, raw and
    Holm-adjusted over the family, at ``alpha``; ``models`` in mean-rank order (best first)."""

    models: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    p: tuple[float, ...]
    p_holm: tuple[float, ...]
    alpha: float

    def differ(self, a: str, b: str) -> bool:
        """Whether models ``a`` and ``b`` differ significantly (Holm-adjusted p < alpha)."""
        key = (a, b) if (a, b) in self.pairs else (b, a)
        return self.p_holm[self.pairs.index(key)] < self.alpha

    def cliques(self) -> list[tuple[str, ...]]:
        """Maximal runs of models consecutive in mean rank, no two of which differ (module docstring)."""
        return rank_cliques(self.models, self.differ)


def rank_cliques(ordered: tuple[str, ...], differ) -> list[tuple[str, ...]]:
    """Maximal runs of ``ordered`` (best first) of two or more models within which ``differ(a, b)``
    is false for every pair; a run inside a longer one is left out."""
    runs: list[tuple[int, int]] = []
    for start in range(len(ordered)):
        end = start
        while end + 1 < len(ordered) and not any(differ(ordered[i], ordered[end + 1]) for i in range(start, end + 1)):
            end += 1
        if end > start and not any(s <= start and end <= e for s, e in runs):
            runs.append((start, end))
    return [tuple(ordered[start : end + 1]) for start, end in runs]


def _exact_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a − b computed on the shortest decimal spelling of each float, then made a float once."""
    return np.array([float(Decimal(repr(float(x))) - Decimal(repr(float(y)))) for x, y in zip(a, b)])


def wilcoxon_holm(table: pd.DataFrame, mean_ranks, alpha: float = 0.05) -> PairwiseTests:
    """Pairwise Wilcoxon signed-rank tests over the rows (datasets) of a datasets × models table,
    Holm-adjusted; ``mean_ranks`` (one per column, 1 = best) orders the models for the cliques.
    Rows with a missing value are dropped, as the Friedman test drops them."""
    table = table.dropna()
    columns = [str(c) for c in table.columns]
    order = tuple(columns[i] for i in np.argsort(np.asarray(mean_ranks, dtype=float), kind="stable"))
    pairs = tuple(combinations(order, 2))
    values = {str(c): table[c].to_numpy(dtype=float) for c in table.columns}
    p = [wilcoxon_test(_exact_differences(values[a], values[b]), np.zeros(len(table)))[1] for a, b in pairs]
    return PairwiseTests(order, pairs, tuple(p), tuple(holm_adjust(p)), alpha)
