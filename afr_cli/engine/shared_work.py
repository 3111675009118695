"""What the units of one task share: identical problems solved once, a forest fitted once and
read by every unit that needs it (whole, or as a prefix of fewer trees), and its training-row
tensors built once.

``Speedups`` names the three ways work is shared, each of which gives the same bytes as the
path without it (tests/test_shared_work.py): ``memo`` (identical problems solved once,
``afr_cli.solvers.memo``), ``prefix`` (forests of one seeding differing only in tree count fitted
once at the largest count, the others read as its first trees: ``forest_prefix``) and
``shared_noise`` (units differing only in noise on the query rows share forest, tensors and
solves); ``fuse``: units of several experiments that fit the same forests (same kind,
parameters, seed and training rows: ``forest_key``) computed together by ``afr reproduce``
(``unit_groups.fuse_tasks``); and ``fast_trees``, scikit-learn's trees fitted and applied without
its per-tree overhead (``afr_cli.ensembles.tree_path``, tests/test_fast_trees.py). ``TODAY`` turns them all
off (``afr bench floor`` times it against the new path).
``unit_groups`` decides which units one task computes together; the protocol asks a
``SharedWork`` for each stage's fitted forest and training rows.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from afr_cli.config.experiment import Base
from afr_cli.engine import forest_fit
from afr_cli.engine.forest_cache import ForestCache
from afr_cli.ensembles.leaf_statistics import LeafStatistics, RowTensors
from afr_cli.ensembles.random_forests import forest_prefix
from afr_cli.ensembles.tree_path import FAST, SKLEARN, check_tree_path, use_tree_path
from afr_cli.solvers.memo import SolveMemo

PREFIX_KINDS = ("rf", "ert")  # the kinds whose prefix property tests/test_shared_work.py proves


@dataclass(frozen=True)
class Speedups:
    """Which shared-work paths a run takes (all on by default; every one is bit-identical)."""

    memo: bool = True
    prefix: bool = True
    shared_noise: bool = True
    fuse: bool = True
    fast_trees: bool = True

    @property
    def tree_path(self) -> str:
        """The tree path forests are fitted on (``fast`` or ``sklearn``)."""
        return FAST if self.fast_trees else SKLEARN


TODAY = Speedups(memo=False, prefix=False, shared_noise=False, fuse=False, fast_trees=False)


def speedups_for(trees: str) -> Speedups:
    """Every speedup on, the trees on the path named by ``--trees`` (``fast`` or ``sklearn``);
    another name is an AfrInputError listing them."""
    return Speedups(fast_trees=check_tree_path(trees) == FAST)


def prefix_family(base: Base) -> tuple | None:
    """What a base's forest is, apart from its tree count, when forests of its kind are prefixes of
    larger ones under one seed (rf, ert); None for every other kind."""
    if base.kind not in PREFIX_KINDS:
        return None
    return (base.kind, tuple(sorted((k, repr(v)) for k, v in base.params.items() if k != "n_estimators")))


def tree_count(base: Base) -> int:
    """The base's number of trees (its kind's default when the config does not set it)."""
    return int(base.ensemble.with_defaults(base.params)["n_estimators"])


def forest_spec(base: Base, family: tuple | None = None) -> tuple:
    """A forest's kind and parameters: its prefix ``family`` (without the tree count) when it is
    read as a prefix, else the base's kind and every parameter."""
    return family or (base.kind, repr(sorted(base.params.items())))


def forest_key(base: Base, family: tuple | None, seed: int, X: np.ndarray, y: np.ndarray) -> tuple:
    """Exactly what determines a fitted forest: its ``forest_spec``, its seed, and a digest of the
    training rows and targets (dtype, shape and bytes). Equal keys fit equal forests, whichever
    experiment asks."""
    return (forest_spec(base, family), seed, _digest(X, y))


def _digest(*arrays: np.ndarray) -> bytes:
    h = hashlib.sha256()
    for a in arrays:
        a = np.asarray(a)
        h.update(f"|{a.dtype.str}{a.shape}|".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.digest()


@dataclass
class SharedWork:
    """The work the units of one task share (one unit alone: only the solve memo).

    ``largest``: per prefix family (``prefix_family``), the most trees any unit of the task fits;
    a forest of that family is fitted once at that count and each unit reads its prefix.
    ``share_rows``: keep each stage's training-row tensors (``LeafStatistics`` and ``RowTensors``,
    with the features families cache on them) for the other units of the task (units that differ
    only in query-side noise, or units of several experiments fused into one task, fit the same
    forest on the same rows). ``cache``: a worker's ``ForestCache``, read before fitting and
    filled after (the measured alternative to fusing tasks). ``fits`` and ``reuses`` count the
    forests fitted here and those read from the task or the cache instead.
    """

    speedups: Speedups = field(default_factory=Speedups)
    largest: dict[tuple, int] = field(default_factory=dict)
    share_rows: bool = False
    cache: ForestCache | None = None

    def __post_init__(self):
        self.memo = SolveMemo(self.speedups.memo)
        self._forests: dict[tuple, object] = {}
        self._rows: dict[tuple, tuple[LeafStatistics, RowTensors]] = {}
        self.fits = 0
        self.reuses = 0

    def training(self, base: Base, seed: int, X: np.ndarray, y: np.ndarray) -> tuple[LeafStatistics, RowTensors]:
        """The stage's fitted forest as leaf statistics over its training rows, and those rows'
        tensors: fitted here, or read from what another unit of the task (or the cache) fitted."""
        with use_tree_path(self.speedups.tree_path):
            return self._training(base, seed, X, y)

    def _training(self, base: Base, seed: int, X: np.ndarray, y: np.ndarray) -> tuple[LeafStatistics, RowTensors]:
        if not (self.largest or self.share_rows or self.cache is not None):
            self.fits += 1
            stats = LeafStatistics(forest_fit.fit_forest(base, X, y, seed), X, y)
            return stats, stats.rows()
        family = prefix_family(base) if self.largest else None
        wanted = tree_count(base) if family in self.largest else None
        key = forest_key(base, family, seed, X, y)
        if (key, wanted) in self._rows:
            self.reuses += 1
            return self._rows[(key, wanted)]
        ensemble = self._forest(base, family, key, seed, X, y)
        if wanted is not None and wanted < ensemble.n_trees:
            ensemble = forest_prefix(ensemble, wanted)
        stats = LeafStatistics(ensemble, X, y)
        rows = stats, stats.rows()
        if self.share_rows:
            self._rows[(key, wanted)] = rows
        return rows

    def _forest(self, base: Base, family: tuple | None, key: tuple, seed: int, X: np.ndarray, y: np.ndarray):
        if key in self._forests:
            self.reuses += 1
            return self._forests[key]
        forest = self.cache.get(key) if self.cache is not None else None
        if forest is not None:
            self.reuses += 1
        else:
            fit_as = base
            if family in self.largest:
                fit_as = Base(base.id, base.kind, {**base.params, "n_estimators": self.largest[family]})
            forest = forest_fit.fit_forest(fit_as, X, y, seed)
            self.fits += 1
            if self.cache is not None:
                self.cache.put(key, forest)
        self._forests[key] = forest
        return forest
