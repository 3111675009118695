"""A content-addressed cache of fitted forests in one worker, bounded in bytes (least recently used
out first).

A forest is determined by exactly its key (``shared_work.forest_key``: kind, parameters, seed and
a digest of the training rows and targets), so a forest fitted by one experiment's unit can be
read by another experiment's unit with the same key in the same worker, and the bytes come out
the same. This is the alternative to fusing the units of several experiments into one task
(``unit_groups.fuse_tasks``); ``afr bench fusion`` times both,
and ``afr reproduce`` uses fusion (results/README.md, "Shared work", says why). The cache is kept
for that measurement and for callers that cannot group their units.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict

from afr_cli.ensembles import FittedEnsemble


def forest_nbytes(ensemble: FittedEnsemble) -> int:
    """The bytes a fitted ensemble holds: its trees' node and value arrays (scikit-learn trees),
    else the length of its pickle."""
    total = 0
    for tree in ensemble.trees:
        inner = getattr(tree, "tree_", None)
        if inner is None:
            return len(pickle.dumps(ensemble, protocol=pickle.HIGHEST_PROTOCOL))
        state = inner.__getstate__()
        total += state["nodes"].nbytes + state["values"].nbytes
    return total + ensemble.tree_weights.nbytes


class ForestCache:
    """Fitted forests by key, at most ``max_bytes`` of them (an entry larger than the bound is not
    kept). ``hits``, ``misses`` and ``peak_bytes`` say what it did."""

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[tuple, tuple[FittedEnsemble, int]] = OrderedDict()
        self.bytes = 0
        self.peak_bytes = 0
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple) -> FittedEnsemble | None:
        """The forest stored under ``key`` (now the most recently used), or None (a miss)."""
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[0]

    def put(self, key: tuple, forest: FittedEnsemble) -> None:
        """Keep ``forest`` under ``key``, dropping the least recently used ones beyond the bound."""
        size = forest_nbytes(forest)
        if size > self.max_bytes or key in self._entries:
            return
        self._entries[key] = (forest, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped
        self.peak_bytes = max(self.peak_bytes, self.bytes)

    def __len__(self) -> int:
        return len(self._entries)
