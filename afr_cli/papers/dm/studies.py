"""Studies of the Decision Machines folder (its page.md, "dm-soft"): dm-soft's paired comparisons
with the plain forest and eps-ABRF, what they say in words, and what its store holds and how its
solves went.

All cheap, read from the store under the root the page is built for (``results/dm_soft/`` for the
committed page, ``DIR/dm_soft`` after ``afr reproduce dm --root DIR``) on every ``afr report``:
the comparisons are the ones ``afr table --results <store> --compare A dm-soft`` prints (Demšar's
paired t-test over the datasets' means, wins at the printed precision), on every stored
repetition and, when the store holds more, on the papers' repetitions 0-9. Every sentence that
states a result (a direction, "significant", a count, the store's size and path) is written here
from those numbers (afr_cli/publish/page_words.py), so it is true of whatever the store holds.
"""

from __future__ import annotations

import pandas as pd

from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import compute_words
from afr_cli.publish.page_words import (
    ALPHA,
    how_many,
    in_brackets,
    listing,
    repetitions_label,
    significance_words,
)
from afr_cli.tables.compare import compare_models

STORE = "dm_soft"
MODEL = "dm-soft"
AGAINST = (("forest", "the forest"), ("eps-abrf", "eps-ABRF"))
PAPER_REPS = 10  # the papers' own repetitions 0-9
P_SPEC = ".2g"  # how the table and the sentences print a p-value
HELPERS = ["wins", "ties", "losses", "datasets", "store"]  # the sentences' columns, not the table's


def _comparison_rows(results: pd.DataFrame, reps_label: str, store: str) -> list[dict]:
    rows = []
    for model, label in AGAINST:
        for c in compare_models(results, model, MODEL).bases:
            record = c.record
            worse = f" (worse on {', '.join(record.losses)})" if record.losses else ""
            rows.append(
                {
                    "dm-soft against": label,
                    "base": c.base,
                    "repetitions": reps_label,
                    "mean ΔR² over the datasets": c.ttest.mean_diff,
                    "p (Demšar's t-test)": c.ttest.p,
                    "95 % CI": f"[{c.ttest.ci_low:+.3f}, {c.ttest.ci_high:+.3f}]",
                    "better / tied / worse": f"{len(record.wins)} / {len(record.ties)} / {len(record.losses)}{worse}",
                    "wins": len(record.wins),
                    "ties": len(record.ties),
                    "losses": len(record.losses),
                    "datasets": len(record.wins) + len(record.ties) + len(record.losses),
                    "store": store,
                }
            )
    return rows


def soft_comparisons(ctx: ReportContext) -> pd.DataFrame:
    """dm-soft − the forest and − eps-ABRF per base, on every stored repetition and, when the store
    holds more than the papers' 10, on their repetitions 0-9 too (fewer would repeat the same rows)."""
    results = ctx.stored(STORE).results
    store = ctx.shown_store(STORE)
    rows = _comparison_rows(results, f"all {results.rep.nunique()}", store)
    if results.rep.nunique() > PAPER_REPS:
        papers = results[results.rep < PAPER_REPS]
        rows += _comparison_rows(papers, repetitions_label(papers.rep.unique()), store)
    return pd.DataFrame(rows)


def comparisons_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The page's table: the comparisons without the columns only the sentences read."""
    return frame.drop(columns=HELPERS)


def _direction(mean: float) -> str:
    return "above" if mean > 0 else "below" if mean < 0 else "level with"


def _row_words(row: pd.Series) -> str:
    """One comparison in words: its direction, its significance at ALPHA and its datasets."""
    p = row["p (Demšar's t-test)"]
    return (
        f"{_direction(row['mean ΔR² over the datasets'])} {row['dm-soft against']} with the {row['base']} "
        f"({significance_words(p)}, p = {p:{P_SPEC}}; better on {how_many(int(row['wins']), int(row['datasets']))} "
        f"datasets)"
    )


def _verdict(row: pd.Series) -> tuple[str, bool]:
    return _direction(row["mean ΔR² over the datasets"]), bool(row["p (Demšar's t-test)"] < ALPHA)


def comparisons_text(frame: pd.DataFrame) -> str:
    """What the comparisons table says, in words computed from it: per row the direction of the
    mean difference and its significance at ALPHA (``significant`` only when the printed p is below
    it), then whether the rows on the papers' repetitions say the same; and the commands and files
    that hold the comparisons, in the store the page is built from."""
    store = frame["store"].iloc[0]
    groups = list(dict.fromkeys(frame["repetitions"]))
    every = frame[frame["repetitions"] == groups[0]]
    reps = groups[0].removeprefix("all ")
    lines = [
        f"So on the {reps} stored repetitions dm-soft is "
        + listing([_row_words(r) for _, r in every.iterrows()])
        + f", at the {ALPHA:g} level."
    ]
    for group in groups[1:]:
        rows = frame[frame["repetitions"] == group]
        changed = [r for (_, r), (_, e) in zip(rows.iterrows(), every.iterrows()) if _verdict(r) != _verdict(e)]
        if not changed:
            lines.append(
                f"On the papers' repetitions {group} alone every row gives the same direction and "
                f"significance, on fewer splits."
            )
        else:
            rest = "; the other rows give the same direction and significance" if len(changed) < len(rows) else ""
            lines.append(
                f"On the papers' repetitions {group} alone dm-soft is "
                + listing([_row_words(r) for r in changed])
                + rest
                + "."
            )
    lines.append(
        f"The commands: `afr table --results {store} --compare forest dm-soft`, and `--compare eps-abrf "
        f"dm-soft`; `afr reproduce dm` writes both into `{store}/compare.md` and the per-dataset means "
        f"± std with the selected eps and tau into `{store}/summary.md`."
    )
    return "\n".join(lines)


def store_solves(ctx: ReportContext) -> pd.DataFrame:
    """What the store holds (units, datasets, repetitions, compute) and where its QPs were solved."""
    status = ctx.status(STORE)
    solves = {key: n for key, n in status.solves.items() if ":" in key}
    held = status.reps.to_numpy()
    return pd.DataFrame(
        [
            {
                "store": ctx.shown_store(STORE),
                "units": status.units,
                "datasets": len(status.reps.index),
                "fewest_reps": int(held[held > 0].min()),
                "repetitions": int(held.max()),
                **dict(zip(("compute_minutes", "measured"), status.recorded_compute())),
                "qps": status.solved,
                "daqp": sum(n for k, n in solves.items() if k.startswith("DAQP:")),
                "fallbacks": status.solves.get("fallbacks", 0),
                "failed": status.solves.get("failed", 0),
                "fallback_to": ", ".join(
                    f"{n} to {k.split(':')[0]}" for k, n in sorted(solves.items()) if not k.startswith("DAQP:")
                ),
            }
        ]
    )


def store_solves_text(frame: pd.DataFrame) -> str:
    """The page's sentence on the store: its path, size and compute, and how its QPs were solved."""
    r = frame.iloc[0]
    reps = (
        f"{r['repetitions']} repetitions"
        if r["fewest_reps"] == r["repetitions"]
        else f"{r['fewest_reps']} to {r['repetitions']} repetitions"
    )
    fell_back = (
        f"{r['fallbacks']} failed DAQP's answer check and fell back"
        f"{in_brackets(r['fallback_to'].split(', ') if r['fallback_to'] else [])}"
        if r["fallbacks"]
        else "none failed DAQP's answer check"
    )
    failed = f"{r['failed']} failed outright" if r["failed"] else "no solve failed"
    return (
        f"`{r['store']}` holds {reps} of {r['datasets']} datasets: {r['units']:,} units, "
        f"{compute_words(r['compute_minutes'], r['measured'])} (`afr status {r['store']}`). "
        f"{r['daqp']:,} of its {r['qps']:,} QPs were solved by DAQP; {fell_back}, {failed}."
    )


def tau_choices(ctx: ReportContext) -> pd.DataFrame:
    """How often the inner CV chose each tau of the grid for dm-soft, over every stored unit
    (dataset, forest, repetition) of the store: the row per tau, most chosen first."""
    results = ctx.stored(STORE).results
    taus = results[results.model == MODEL].params.map(lambda p: float(p["tau"]))
    counts = taus.value_counts()
    return pd.DataFrame(
        [
            {"store": ctx.shown_store(STORE), "tau": float(t), "units": int(n), "of": int(taus.size)}
            for t, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
    )


def tau_choices_text(frame: pd.DataFrame) -> str:
    """The page's sentence on the tau grid: how many units chose each tau (counted, not typed)."""
    n, store = int(frame["of"].iloc[0]), frame["store"].iloc[0]
    parts = [f"tau = {r.tau:g} on {r.units:,}" for r in frame.itertuples()]
    return (
        f"Of the {n:,} dm-soft units (dataset, forest, repetition) in `{store}`, the inner CV chose {listing(parts)}."
    )
