"""The decision rule on stores' rows: the entry point other code calls, and the answer's stability
over the repetitions.

:func:`decide_models` gives the decision (afr_cli/analysis/decision.py) for B against A on each
base, from the rows `afr table` loads, optionally on the first repetitions only. :func:`stability`
recomputes it on the first 5, 10, 20, 30, 50 and all repetitions (the counts no larger than what is
stored; the repetitions are the stored indices 0..n−1, paired across the models) and finds the
smallest count from which the verdict no longer changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from afr_cli.analysis.bayesian import DEFAULT_ROPE
from afr_cli.analysis.decision import Decision
from afr_cli.tables.compare import compare_models
from afr_cli.tables.decision import decide_base

STABILITY_COUNTS = (5, 10, 20, 30, 50)  # then every stored repetition


def first_reps(results: pd.DataFrame, reps: int) -> pd.DataFrame:
    """The rows of repetitions 0..reps−1 (the stored repetition indices, in order)."""
    return results[results["rep"].astype(int) < int(reps)]


def decide_models(
    results: pd.DataFrame,
    a: str,
    b: str,
    metric: str = "r2",
    rope: float = DEFAULT_ROPE,
    reps: int | None = None,
) -> dict[str, Decision]:
    """The decision for B against A on each base both hold (base -> Decision), from ``results``
    (the rows `afr table` loads from one or more stores), on repetitions 0..reps−1 when ``reps``
    is given. Bad input (unknown model, nothing shared) raises AfrInputError as `afr table
    --compare` does."""
    rows = results if reps is None else first_reps(results, reps)
    comparison = compare_models(rows, a, b, metric, rope)
    return {c.base: decide_base(comparison, c) for c in comparison.bases}


def settles_at(verdicts: list[tuple[int, str]]) -> int | None:
    """The smallest count of (count, verdict) pairs, in increasing count, from which every verdict
    equals the last one (the verdict on all repetitions); None for an empty list."""
    if not verdicts:
        return None
    final = verdicts[-1][1]
    settle = verdicts[-1][0]
    for count, verdict in reversed(verdicts):
        if verdict != final:
            break
        settle = count
    return settle


def stability_counts(stored: int) -> list[int]:
    """The repetition counts the stability is computed at: 5, 10, 20, 30, 50 below ``stored``, and ``stored``."""
    return [n for n in STABILITY_COUNTS if n < stored] + [stored]


@dataclass(frozen=True)
class Stability:
    """One base's verdicts at each count of repetitions and where they settle."""

    base: str
    steps: tuple[tuple[int, Decision], ...]
    settles: int | None  # None: the verdict on all repetitions is reached only at all of them

    def as_dict(self) -> dict:
        return {
            "base": self.base,
            "steps": [
                {
                    "reps": n,
                    "verdict": d.verdict,
                    "probability": None if math.isnan(d.probability) else d.probability,
                    "test": d.test,
                    "event_probabilities": None
                    if d.probabilities is None
                    else {
                        "p_a_better": d.probabilities.left,
                        "p_equivalent": d.probabilities.rope,
                        "p_b_better": d.probabilities.right,
                    },
                }
                for n, d in self.steps
            ],
            "settles_at": self.settles,
            "final_verdict": self.steps[-1][1].verdict,
        }


def stored_reps(results: pd.DataFrame, a: str, b: str) -> int:
    """How many repetitions the two models hold (the most over their datasets)."""
    rows = results[results["model"].isin([a.partition(":")[0], b.partition(":")[0]])]
    return int(rows["rep"].astype(int).max()) + 1 if len(rows) else 0


def stability(results: pd.DataFrame, a: str, b: str, metric: str = "r2", rope: float = DEFAULT_ROPE) -> list[Stability]:
    """Per base, the decision on the first 5, 10, 20, 30, 50 and all repetitions, and the smallest
    count from which the verdict stays the one on all repetitions (a verdict that changes at the
    last count settles only there: "does not settle" before it)."""
    stored = stored_reps(results, a, b)
    per_base: dict[str, list[tuple[int, Decision]]] = {}
    for n in stability_counts(stored):
        for base, decision in decide_models(results, a, b, metric, rope, n).items():
            per_base.setdefault(base, []).append((n, decision))
    out = []
    for base, steps in per_base.items():
        at = settles_at([(n, d.verdict) for n, d in steps])
        changed_last = len(steps) > 1 and steps[-2][1].verdict != steps[-1][1].verdict
        out.append(Stability(base, tuple(steps), None if changed_last else at))
    return out


def verdict_words(d: Decision, a: str, b: str) -> str:
    """The verdict in a few words with the probability of its event: 'rf better (P = 0.990)',
    'undecided (likeliest equivalent, P = 0.612)', 'no test'."""
    words = {
        "b_better": f"{b} better",
        "a_better": f"{a} better",
        "equivalent": "equivalent",
        "undecided": "undecided",
        "no_test": "no test",
    }[d.verdict]
    if math.isnan(d.probability):
        return words
    if d.verdict == "undecided":
        p = d.probabilities
        likeliest = max((p.right, f"{b} better"), (p.rope, "equivalent"), (p.left, f"{a} better"))[1]
        return f"undecided (likeliest {likeliest}, P = {d.probability:.3f})"
    return f"{words} (P = {d.probability:.3f})"


def render_stability(rows: list[Stability], a: str, b: str) -> str:
    """Markdown: per base the verdict and its probability at each count, and where it settles."""
    from afr_cli.tables.format import grid

    counts = sorted({n for s in rows for n, _ in s.steps})
    body = []
    for s in rows:
        cells = {n: verdict_words(d, a, b) for n, d in s.steps}
        settle = "does not settle" if s.settles is None else f"settles at {s.settles}"
        body.append([s.base, *[cells.get(n, "") for n in counts], settle])
    headers = ["base", *[f"{n} reps" for n in counts], "settles"]
    return (
        f"Stability of the answer, {b} against {a}: the decision rule on the first N repetitions (the stored "
        f"indices 0..N−1, paired); P is the probability of the verdict's event (for undecided, of the most "
        f'probable event). "settles at N": from N repetitions on, the verdict is the one on all of them; '
        f'"does not settle": it changes at the last count.\n\n' + grid(headers, body, "md") + "\n"
    )
