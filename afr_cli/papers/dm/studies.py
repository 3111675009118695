"""Studies of the Decision Machines folder (its page.md, "dm-soft"): dm-soft's paired comparisons
with the plain forest and eps-ABRF, and what its committed store holds and how its solves went.

All cheap, read from the committed store (``results/dm_soft/``) on every ``afr report``: the
comparisons are the ones ``afr table --results results/dm_soft --compare A dm-soft`` prints (Demšar's
paired t-test over the datasets' means, wins at the printed precision), on every stored repetition
and on the papers' repetitions 0-9.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from afr_cli.publish.frames import compute_words, stored, stored_status
from afr_cli.tables.compare import compare_models

STORE = "dm_soft"
MODEL = "dm-soft"
AGAINST = (("forest", "the forest"), ("eps-abrf", "eps-ABRF"))
PAPER_REPS = 10  # the papers' own repetitions 0-9


def _comparison_rows(results: pd.DataFrame, reps_label: str) -> list[dict]:
    rows = []
    for model, label in AGAINST:
        for c in compare_models(results, model, MODEL).bases:
            record = c.record
            worse = f" (worse on {', '.join(record.losses)})" if record.losses else ""
            rows.append({"dm-soft against": label, "base": c.base, "repetitions": reps_label,
                         "mean ΔR² over the datasets": c.ttest.mean_diff, "p (Demšar's t-test)": c.ttest.p,
                         "95 % CI": f"[{c.ttest.ci_low:+.3f}, {c.ttest.ci_high:+.3f}]",
                         "better / tied / worse": f"{len(record.wins)} / {len(record.ties)} / {len(record.losses)}{worse}"})
    return rows


def soft_comparisons(root: Path) -> pd.DataFrame:
    """dm-soft − the forest and − eps-ABRF per base, on every stored repetition and on 0-9."""
    results = stored(root / STORE).results
    every = f"all {results.rep.nunique()}"
    return pd.DataFrame(_comparison_rows(results, every)
                        + _comparison_rows(results[results.rep < PAPER_REPS], "0-9"))


def store_solves(root: Path) -> pd.DataFrame:
    """What the committed store holds (units, repetitions, compute) and where its QPs were solved."""
    status = stored_status(root / STORE)
    solves = {key: n for key, n in status.solves.items() if ":" in key}
    return pd.DataFrame([{"units": status.units, "repetitions": int(status.reps.to_numpy().max()),
                          **dict(zip(("compute_minutes", "measured"), status.recorded_compute())), "qps": status.solved,
                          "daqp": sum(n for k, n in solves.items() if k.startswith("DAQP:")),
                          "fallbacks": status.solves.get("fallbacks", 0), "failed": status.solves.get("failed", 0),
                          "fallback_to": ", ".join(f"{n} to {k.split(':')[0]}" for k, n in sorted(solves.items())
                                                   if not k.startswith("DAQP:"))}])


def store_solves_text(frame: pd.DataFrame) -> str:
    """The page's sentence on the store: its size and compute, and how its QPs were solved."""
    r = frame.iloc[0]
    return (f"The committed store holds {r['repetitions']} repetitions: {r['units']:,} units, "
            f"{compute_words(r['compute_minutes'], r['measured'])} (`afr status results/dm_soft`). "
            f"{r['daqp']:,} of its {r['qps']:,} QPs were solved by DAQP; {r['fallbacks']} failed DAQP's "
            f"answer check and fell back ({r['fallback_to']}), {r['failed']} failed.")
