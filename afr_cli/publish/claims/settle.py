"""How many repetitions each claim's verdict needs: the "settles at" column of the claims ledger.

A claim judged on our stores (afr_cli/publish/claims/judge.py) is judged again on the first 5, 10,
20, 30 and 50 repetitions (the stored indices 0..N−1, those below the count stored) with the very
same test; the verdict settles at the smallest of these counts from which it equals the verdict
on every stored repetition and stays it. When the verdict on the largest count below "all"
differs from the one on all, it "does not settle" within what is stored. A claim not judged on
stores (not run, not checked, a surface peak read from the grid) has no entry.

The paper pages then say which claims rest on fewer repetitions than the paper used (settled at
or below the paper's count) and which need more (settled above it, or not settled).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from afr_cli.publish.claims.judge import NOT_CHECKED, NOT_RUN, Verdict, verdict_on_first
from afr_cli.tables.compare_decision import settles_at, stability_counts

DOES_NOT_SETTLE = "does not settle"


def stored_count(results: pd.DataFrame) -> int:
    """The most repetitions stored (highest index + 1)."""
    return int(results["rep"].astype(int).max()) + 1 if len(results) else 0


def settle(verdict: Verdict, results: pd.DataFrame | None) -> Verdict:
    """``verdict`` with its "settles at" entry, judged again on the first repetitions of ``results``."""
    if results is None or verdict.verdict in (NOT_RUN, NOT_CHECKED) or verdict.test == "surface_peak":
        return verdict
    stored = stored_count(results)
    counts = stability_counts(stored)
    steps = [(n, verdict_on_first(verdict.paper_id, verdict.claim, results, n)) for n in counts[:-1]]
    steps.append((stored, verdict.verdict))
    if len(steps) > 1 and steps[-2][1] != steps[-1][1]:
        return replace(verdict, settles=DOES_NOT_SETTLE)
    return replace(verdict, settles=str(settles_at(steps)))


def needs_more(verdict: Verdict, paper_reps: int) -> bool:
    """True when the verdict settles above the paper's repetitions, or does not settle."""
    if not verdict.settles:
        return False
    return verdict.settles == DOES_NOT_SETTLE or int(verdict.settles) > paper_reps


def settle_sentence(verdicts: list[Verdict], paper_reps: int) -> str:
    """Which claims rest on no more repetitions than the paper used, and which need more ('' when none is judged)."""
    judged = [v for v in verdicts if v.settles]
    if not judged:
        return ""
    fewer = [v.id for v in judged if not needs_more(v, paper_reps)]
    more = [v for v in judged if needs_more(v, paper_reps)]
    parts = [
        "Repetitions each verdict needs (the claim judged again on our first 5, 10, 20, 30 and 50 repetitions, "
        'those below the count stored; "settles at N": from N on, the verdict is the one on every stored '
        "repetition): "
    ]
    if fewer:
        parts.append(
            f"{len(fewer)} of {len(judged)} verdicts settle at or below the paper's {paper_reps} repetitions "
            f"({', '.join(fewer)})"
        )
    if more:
        listed = ", ".join(f"{v.id} ({v.settles if v.settles == DOES_NOT_SETTLE else 'at ' + v.settles})" for v in more)
        parts.append(f"{'; ' if fewer else ''}{len(more)} need more than the paper's {paper_reps}: {listed}")
    return "".join(parts) + "."
