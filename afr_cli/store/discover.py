"""Finding result stores when the user names models or a root rather than stores, and what their
exports hold on disk, without pandas.

``afr table --compare A B`` without --results uses the stores under ``results/`` that hold both
models; which models a store holds comes from ``afr_cli.store.holdings`` (derived once per export,
then cached), so choosing the stores reads no table. ``afr status`` without store arguments reads
every store below its root.

The finding functions and :func:`export_fingerprint` import nothing numerical: a memoized command
(afr_cli/commands/answer_memo.py) calls them to key its answer, and a command answered from
the memo must not pay for loading pandas. So the store's file names are restated here
from ``schema`` and ``export`` (which import pandas); tests/test_interactive_memo.py checks they
agree, and that :func:`stores_below` finds what ``reader.find_stores`` finds.
"""

from __future__ import annotations

import os
from pathlib import Path

from afr_cli.core.names import closest
from afr_cli.errors import AfrInputError
from afr_cli.store.cache import content_key

RESULTS_ROOT = Path("results")
STORE_FILE = "store.sqlite"  # = afr_cli.store.schema.STORE_FILE
EXPORT_DIR = "export"  # = afr_cli.store.export.EXPORT_DIR
EXPORT_MANIFEST = "manifest.json"  # = afr_cli.store.export.EXPORT_MANIFEST


def holds_results(directory: str | Path) -> bool:
    """Whether ``directory`` holds a results store or its export: ``reader.has_results``, without
    importing the reader (a ``store.sqlite`` that is not a file counts, as there)."""
    directory = Path(directory)
    return os.path.lexists(directory / STORE_FILE) or (directory / EXPORT_DIR / EXPORT_MANIFEST).is_file()


def stores_under(root: Path = RESULTS_ROOT) -> list[Path]:
    """The directories directly below ``root`` that hold results, in name order."""
    if not root.is_dir():
        return []
    return sorted(d for d in root.iterdir() if d.is_dir() and holds_results(d))


def stores_below(root: str | Path) -> list[Path]:
    """Every directory at any depth below ``root`` holding a store or an export, in path order:
    ``reader.find_stores``, without importing the reader."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = {p.parent for p in root.rglob(STORE_FILE)}
    found |= {p.parent.parent for p in root.rglob(f"{EXPORT_DIR}/{EXPORT_MANIFEST}")}
    return sorted(found)


def export_fingerprint(directory: str | Path) -> str | None:
    """The SHA-256 of everything the export in ``directory`` holds (each file's name and bytes, in
    name order), or None when what the directory holds is not a fixed export: a working store
    (``store.sqlite``, which a running ``afr run`` may be writing), no export, or an export with a
    folder or an unreadable file in it. Two exports with the same fingerprint read the same."""
    directory = Path(directory)
    if os.path.lexists(directory / STORE_FILE) or not (directory / EXPORT_DIR / EXPORT_MANIFEST).is_file():
        return None
    parts: list[bytes | str] = ["export"]
    try:
        entries = sorted(os.scandir(directory / EXPORT_DIR), key=lambda e: e.name)
        for entry in entries:
            if not entry.is_file(follow_symlinks=True):
                return None
            parts += [entry.name, Path(entry.path).read_bytes()]
    except OSError:
        return None
    return content_key(*parts)


def store_holdings(root: Path = RESULTS_ROOT) -> dict[Path, set[tuple[str, str]]]:
    """Per store below ``root``: the (model, base) pairs it holds."""
    from afr_cli.store.holdings import store_holdings_of

    return {store: set(store_holdings_of(store).pairs) for store in stores_under(root)}


def _holds(pairs: set[tuple[str, str]], spec: str) -> bool:
    """Whether a store's (model, base) pairs include ``spec``: MODEL, or MODEL:BASE."""
    model, _, base = spec.partition(":")
    return any(m == model and (not base or b == base) for m, b in pairs)


def is_variant(directory: Path) -> bool:
    """Whether the store's config declares itself a variant of another experiment (``variant_of``:
    one choice changed, e.g. a model's reading or the inner-fold assignment)."""
    from afr_cli.store.reader import open_existing

    config = open_existing(directory).manifest().get("config")
    return isinstance(config, dict) and bool(config.get("variant_of"))


def stores_for_compare(a: str, b: str, root: Path = RESULTS_ROOT) -> list[Path]:
    """The stores below ``root`` to compare A and B on: those holding both models (or, for
    MODEL:BASE sides, those holding either side). Stores declared a variant of another experiment
    (``variant_of``) are left out when the others cover both sides. A one-line error when none
    does (listing the stores that hold each) or when two of them hold the same model on the same
    base (which store is meant is then the user's choice, with --results)."""
    holdings = store_holdings(root)
    principal = {d: pairs for d, pairs in holdings.items() if not is_variant(d)}
    if all(any(_holds(pairs, side) for pairs in principal.values()) for side in (a, b)):
        holdings = principal
    across = ":" in a or ":" in b
    chosen = [
        d
        for d, pairs in holdings.items()
        if (_holds(pairs, a) or _holds(pairs, b) if across else _holds(pairs, a) and _holds(pairs, b))
    ]
    covered = all(any(_holds(holdings[d], side) for d in chosen) for side in (a, b))
    if not chosen or not covered:
        every_model = sorted({m for pairs in holdings.values() for m, _ in pairs})

        def holding(side: str) -> str:
            held = ", ".join(str(d) for d, p in holdings.items() if _holds(p, side))
            near = None if held else closest(side.partition(":")[0], every_model)
            return held or (f"none (did you mean {near!r}?)" if near else "none")

        both = "holds both" if not across else "holds each side"
        raise AfrInputError(
            f"--compare {a} {b}: no store under {root}/ {both}; stores holding {a}: "
            f"{holding(a)}; holding {b}: {holding(b)}; name stores with --results DIR"
        )
    models = {side.partition(":")[0] for side in (a, b)}
    owner: dict[tuple[str, str], Path] = {}
    for d in chosen:
        for model, base in sorted(holdings[d]):
            if model in models:
                if (model, base) in owner:
                    raise AfrInputError(
                        f"--compare {a} {b}: {model} on {base} is in several stores under {root}/ "
                        f"({owner[(model, base)]}, {d}); name the ones to use with --results DIR"
                    )
                owner[(model, base)] = d
    return chosen
