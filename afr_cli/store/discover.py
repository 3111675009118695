"""Finding result stores under ``results/`` when the user names models rather than stores:
``afr table --compare A B`` without --results uses the stores that hold both models. Which
models a store holds comes from ``afr_cli.store.holdings`` (derived once per export, then
cached), so choosing the stores reads no table."""

from __future__ import annotations

from pathlib import Path

from afr_cli.errors import AfrInputError
from afr_cli.store.holdings import store_holdings_of
from afr_cli.store.reader import has_results

RESULTS_ROOT = Path("results")


def stores_under(root: Path = RESULTS_ROOT) -> list[Path]:
    """The directories directly below ``root`` that hold results, in name order."""
    if not root.is_dir():
        return []
    return sorted(d for d in root.iterdir() if d.is_dir() and has_results(d))


def store_holdings(root: Path = RESULTS_ROOT) -> dict[Path, set[tuple[str, str]]]:
    """Per store below ``root``: the (model, base) pairs it holds."""
    return {store: set(store_holdings_of(store).pairs) for store in stores_under(root)}


def _holds(pairs: set[tuple[str, str]], spec: str) -> bool:
    """Whether a store's (model, base) pairs include ``spec``: MODEL, or MODEL:BASE."""
    model, _, base = spec.partition(":")
    return any(m == model and (not base or b == base) for m, b in pairs)


def stores_for_compare(a: str, b: str, root: Path = RESULTS_ROOT) -> list[Path]:
    """The stores below ``root`` to compare A and B on: those holding both models (or, for
    MODEL:BASE sides, those holding either side). A one-line error when none does (listing the
    stores that hold each) or when two of them hold the same model on the same base (which store
    is meant is then the user's choice, with --results)."""
    holdings = store_holdings(root)
    across = ":" in a or ":" in b
    chosen = [
        d
        for d, pairs in holdings.items()
        if (_holds(pairs, a) or _holds(pairs, b) if across else _holds(pairs, a) and _holds(pairs, b))
    ]
    covered = all(any(_holds(holdings[d], side) for d in chosen) for side in (a, b))
    if not chosen or not covered:

        def holding(side: str) -> str:
            return ", ".join(str(d) for d, p in holdings.items() if _holds(p, side)) or "none"

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
