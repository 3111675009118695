"""What a results store holds (models, bases, datasets, repetitions), without loading its tables:
what ``afr table --compare A B`` reads to choose the stores to compare on.

A committed export's holdings are derived from its results table once per content, and kept in
the export cache (``afr_cli.store.cache``) under the SHA-256 of its manifest and results file:
the exports stay byte for byte as committed, an export of any age (no index beside it) works,
and a changed export is derived again. A working SQLite store is asked directly (its rows can
change under a running ``afr run``, so nothing of it is cached).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from afr_cli.store.cache import cached, content_key, source_of
from afr_cli.store.export import ExportedStore, decoder_fingerprint
from afr_cli.store.reader import open_existing


@dataclass(frozen=True)
class Holdings:
    """The (model, base) pairs, datasets and repetitions of one store's results table."""

    pairs: frozenset[tuple[str, str]]
    datasets: tuple[str, ...]
    reps: tuple[int, ...]

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(sorted({m for m, _ in self.pairs}))

    @property
    def bases(self) -> tuple[str, ...]:
        return tuple(sorted({b for _, b in self.pairs}))


def _from_results(results) -> Holdings:
    """The holdings of a results frame (``load_results``)."""
    return Holdings(
        frozenset(zip(results["model"], results["base"])),
        tuple(sorted({str(d) for d in results["dataset"]})),
        tuple(sorted({int(r) for r in results["rep"]})),
    )


@lru_cache(maxsize=1)
def _code() -> bytes:
    """The code holdings depend on (this module and the export's decoder): part of their key."""
    return source_of("afr_cli.store.holdings") + decoder_fingerprint()


def store_holdings_of(directory: str | Path) -> Holdings:
    """What the store in ``directory`` holds: from its SQLite store when there is one (read
    live), else from its export (derived once per content, then cached)."""
    reader = open_existing(directory)
    if not isinstance(reader, ExportedStore):
        return _from_results(reader.frame("results"))
    reader.meta()  # a damaged manifest is the error it always was, before the table is read
    key = content_key("holdings", reader.meta_bytes(), reader.table_bytes("results"), _code())
    return cached("holdings", key, lambda: _from_results(reader.frame("results")))


def incomplete_repetitions(manifest: dict, units) -> dict[int, tuple[int, int]]:
    """The repetitions a run stopped half-way through: rep -> (units held, units it should hold),
    for every repetition of the latest run's target (its datasets x bases x axis points,
    recorded at its start) that holds some but not all of the units of the (dataset, base)
    cells the store holds any unit of (a cell the run never reached is missing, not uneven). Such a
    repetition (an interrupted run's last) is left out of the tables until a run completes it:
    kept, its datasets would average over different repetitions than the others'. Empty for a
    store whose latest run recorded no target (made before targets) or that holds it whole."""
    runs = manifest.get("runs") or []
    target = runs[-1].get("target") if runs else None
    if not target or not len(units) or not target.get("reps"):
        return {}
    mine = units[
        units["dataset"].isin(target["datasets"])
        & units["base"].isin(target["bases"])
        & (units["rep"] < target["reps"])
    ]
    if not len(mine):
        return {}
    # a (dataset, base) the run has not reached yet holds nothing: it is missing, not uneven
    per_cell = int(target["units"]) // (int(target["reps"]) * len(target["datasets"]) * len(target["bases"]))
    per_rep = per_cell * mine.groupby(["dataset", "base"]).ngroups
    held = mine.groupby("rep").size()
    return {int(rep): (int(n), per_rep) for rep, n in held.items() if n < per_rep}


def without_incomplete_repetitions(results, manifest: dict, units):
    """``results`` without the rows of the repetitions a run stopped half-way through
    (:func:`incomplete_repetitions`), and those repetitions."""
    partial = incomplete_repetitions(manifest, units)
    if not partial:
        return results, partial
    return results[~results["rep"].isin(list(partial))], partial
