"""What a paper's stores hold, as a page says it: one row per store (its path under the root the
page is built for, its repetitions, datasets, bases, units) read through ``afr status``, and the
sentence made from those rows. A page's "the stores hold 100 repetitions of all 11 datasets" is
then true of the stores it is built from: on a scratch root (``afr reproduce --root DIR
--reps 2 --datasets ...``) it names ``DIR/<store>`` and says 2 repetitions of 2 datasets.

A paper's ``studies.py`` declares a study that returns ``holdings(ctx, STORES)`` and shows it
with ``holdings_text``; a store the root lacks is left out, and with none the study is skipped
(``StoreMissing``), as every study on a root without its stores.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import StoreMissing
from afr_cli.publish.page_words import listing

AXIS_WORDS = {"train_fraction": "training fraction", "noise_eta": "noise level"}


def holdings(ctx: ReportContext, stores: Sequence[str]) -> pd.DataFrame:
    """One row per store of ``stores`` that the context's root holds: its shown path, the fewest
    and most repetitions of a (dataset, base[, axis point]), its datasets, bases and units."""
    rows = []
    for store in stores:
        try:
            status = ctx.status(store)
        except StoreMissing:
            continue
        held = status.reps.to_numpy()
        held = held[held > 0]
        rows.append(
            {
                "store": ctx.shown_store(store),
                "fewest_reps": int(held.min()) if held.size else 0,
                "most_reps": int(held.max()) if held.size else 0,
                "datasets": len(status.reps.index),
                "bases": ", ".join(str(b) for b in status.reps.columns),
                "units": status.units,
                "axes": ", ".join(AXIS_WORDS.get(a, a) for a in status.axes),
                "solves": status.solved,
                "fallbacks": int(status.solves.get("fallbacks", 0)),
                "failed": int(status.solves.get("failed", 0)),
            }
        )
    if not rows:
        raise StoreMissing(", ".join(str(ctx.directory(s)) for s in stores))
    return pd.DataFrame(rows)


def _what(row: pd.Series) -> str:
    reps = (
        f"{row['most_reps']} repetitions"
        if row["fewest_reps"] == row["most_reps"]
        else f"{row['fewest_reps']} to {row['most_reps']} repetitions"
    )
    per = f" per ({row['axes']})" if row["axes"] else ""
    datasets = f"{row['datasets']} dataset" + ("" if row["datasets"] == 1 else "s")
    return f"{reps}{per} of {datasets} on {listing(row['bases'].split(', '))}"


def holdings_text(frame: pd.DataFrame) -> str:
    """The stores' holdings in one sentence: stores that hold alike are named together."""
    groups: dict[str, list[str]] = {}
    for _, row in frame.iterrows():
        groups.setdefault(_what(row), []).append(f"`{row['store']}`")
    parts = [f"{listing(names)} {'holds' if len(names) == 1 else 'each hold'} {what}" for what, names in groups.items()]
    return "Held now (`afr status`): " + "; ".join(parts) + f". {_solves_text(frame)}"


def _solves_text(frame: pd.DataFrame) -> str:
    """How their QPs went: how many fell back from the first solver's answer, how many failed."""
    solves, fallbacks, failed = int(frame.solves.sum()), int(frame.fallbacks.sum()), int(frame.failed.sum())
    if not solves:
        return "They hold no QP solves."
    fell = (
        f"{fallbacks:,} failed the first solver's answer check and fell back to another "
        f"({listing([f'`{r.store}` {r.fallbacks:,}' for r in frame.itertuples() if r.fallbacks])})"
        if fallbacks
        else "none failed the first solver's answer check"
    )
    return f"Of their {solves:,} QP solves, {fell}; {f'{failed:,} failed' if failed else 'none failed'}."
