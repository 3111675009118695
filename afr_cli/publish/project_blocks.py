"""Generated blocks about the project as a whole, not one paper: the papers' own t-tests recomputed
(``afr stats published``), the committed exports' sizes (``afr export --sizes``), the totals of
the preprocessing study (``afr fidelity preprocessing``'s committed report and cells) and the compute every
paper's experiments recorded (``afr status``). ``afr report`` writes them into whichever page
holds them (docs/reproduction.md, docs/experiments.md, results/README.md), so the documentation
quotes these numbers from the committed files instead of by hand.

All are cheap (about a second) and read only committed files: the papers' published tables, the
exports and the study's report under the results root; paths are shown relative to that root, so a
scratch copy (``afr report --check``) renders the same text.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from scipy.stats import binomtest
from tabulate import tabulate

from afr_cli.catalogue.printed_tests import disagreeing_quantities, recompute_published_ttests
from afr_cli.core.durations import format_duration
from afr_cli.errors import AfrInputError
from afr_cli.publish.context import ReportContext
from afr_cli.store.reader import has_results
from afr_cli.store.sizes import export_sizes
from afr_cli.studies.preprocessing import SIGN_TEST_ALPHA, decide, discriminating_cells

TTESTS_BLOCK = "stats:published"
SIZES_BLOCK = "sizes:exports"
PREPROCESSING_BLOCK = "fidelity:preprocessing"
PREPROCESSING_REPORT = Path("fidelity") / "preprocessing.md"  # under the results root
PREPROCESSING_NOTES_BLOCK = "fidelity:preprocessing_notes"
PREPROCESSING_TREES = Path("fidelity") / "preprocessing_trees.csv"  # the same study on LARF Table 8's forests
RAW, STANDARD = "none", "standard"  # the candidates the notes set against each other
COMPUTE_BLOCK = "compute:experiments"
WORKERS = 2  # the wall time shown is the compute spread over this many workers, at best
SIZES_AT = 100  # the repetition count the exports are extrapolated to: the papers' stated count


def _interval(low, high, printed: bool) -> str:
    if printed:
        return f"[{low}, {high}]" if low != "" else "—"
    return f"[{low:.4g}, {high:.4g}]"


def published_ttests_block() -> str:
    """Every t-test the papers print beside the same test recomputed from the table it is about,
    and how many reproduce to the printed precision."""
    tests = recompute_published_ttests()
    rows = [
        (
            f"{r['paper']}:{r['table']}",
            r["comparison"],
            r["base"],
            r["published_mean"] or "—",
            f"{r['recomputed_mean']:.4g}",
            r["published_p"] or "—",
            f"{r['recomputed_p']:.4g}",
            _interval(r["published_ci_low"], r["published_ci_high"], printed=True),
            _interval(r["recomputed_ci_low"], r["recomputed_ci_high"], printed=False),
            "yes" if r["agrees"] else "no: " + ", ".join(disagreeing_quantities(r)),
        )
        for _, r in tests.iterrows()
    ]
    headers = [
        "table",
        "comparison (A − B, R²)",
        "base",
        "mean",
        "mean (ours)",
        "p",
        "p (ours)",
        "95 % CI",
        "95 % CI (ours)",
        "reproduces",
    ]
    table = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
    return (
        f"{int(tests['agrees'].sum())} of {len(tests)} published t-tests reproduce to the printed "
        f"precision (`afr stats published`):\n\n{table}"
    )


def export_sizes_block(root: Path) -> str:
    """Each committed export's size now, per repetition, and at ``SIZES_AT`` repetitions, with the
    totals: the exports part of ``afr export --sizes``."""
    root = Path(root)
    sizes = export_sizes(root)
    rows = [
        (
            s.directory.relative_to(root).as_posix(),
            f"{s.reps:g}",
            f"{(s.fixed_bytes + s.table_bytes) / 1e6:.2f}",
            f"{s.table_bytes / s.reps / 1e3:.1f}" if s.reps else "—",
            f"{s.at(SIZES_AT) / 1e6:.2f}" if s.reps else "—",
        )
        for s in sizes
    ]
    now = sum(s.fixed_bytes + s.table_bytes for s in sizes)
    later = sum(s.at(SIZES_AT) if s.reps else s.fixed_bytes + s.table_bytes for s in sizes)
    rows.append(("**all exports**", "", f"**{now / 1e6:.2f}**", "", f"**{later / 1e6:.2f}**"))
    headers = ["export (under results/)", "reps", "MB now", "kB per rep", f"MB at {SIZES_AT} reps"]
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def _section(text: str, heading: str) -> str:
    """The body of one ``## heading`` section of a Markdown report (up to the next ``## ``)."""
    body = text.split(f"\n## {heading}\n", 1)[1]
    return body.split("\n## ", 1)[0].strip()


def preprocessing_block(root: Path) -> str | None:
    """The totals and the sign tests of the preprocessing study, taken from its committed report
    (``afr fidelity preprocessing`` refits forests, so ``afr report`` reads its output, never reruns
    it); None when the report is not under ``root``."""
    report = Path(root) / PREPROCESSING_REPORT
    if not report.is_file():
        return None
    text = report.read_text(encoding="utf-8")
    verdict = _section(text, "Verdict")
    tests = verdict[verdict.index("| leader") :]
    return (
        f"From `results/{PREPROCESSING_REPORT.as_posix()}` (`afr fidelity preprocessing`), the printed baseline "
        f"cells each candidate reproduces:\n\n{_section(text, 'Totals')}\n\n"
        f"Sign tests on the distinct values exactly one of two candidates matches:\n\n{tests}"
    )


def _matched_cells(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """A preprocessing study's committed matched cells (its csv) and its candidates."""
    matched = pd.read_csv(path, dtype={"value_str": str})
    matched["value"] = matched["value_str"].astype(float)
    return matched, list(dict.fromkeys(matched["candidate"]))


_METRIC = {"r2": "R²", "mae": "MAE"}


def preprocessing_notes_block(root: Path) -> str | None:
    """What the preprocessing study's committed cells say beyond its totals: the printed values raw
    features alone match (ours under raw and standardised features), raw against standardised on
    the 100-tree tables and on LARF Table 8's larger forests, and the two pooled; None when the
    study's csv files are not under ``root``."""
    main, trees = Path(root) / PREPROCESSING_REPORT.with_suffix(".csv"), Path(root) / PREPROCESSING_TREES
    if not (main.is_file() and trees.is_file()):
        return None
    matched, order = _matched_cells(main)
    verdict = decide(matched, order)
    split = discriminating_cells(matched, order)
    bases = sorted(set(split.our_base))
    values = "; ".join(
        f"{r.dataset} {_METRIC.get(r.metric, r.metric)} {r.value_str} (raw {r[RAW].split()[0]}, "
        f"standardised {r[STANDARD].split()[0]})"
        for _, r in split.iterrows()
    )
    never_loses = bool((verdict.tests.only_other == 0).all())
    pairs = []
    tree_cells = _matched_cells(trees)
    for frame, cand in ((matched, order), tree_cells):
        tests = decide(frame, cand).tests.set_index("other")
        pairs.append(
            (
                int(tests.loc[STANDARD, "only_leader"]),
                int(tests.loc[STANDARD, "only_other"]),
                float(tests.loc[STANDARD, "p_sign_test"]),
                discriminating_cells(frame, cand),
            )
        )
    wins, losses = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    pooled = float(binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else 1.0
    leader_wins = [c[(c[RAW].str.endswith("✓")) & ~c[STANDARD].str.endswith("✓")] for *_, c in pairs]
    concrete = sum(int((c.dataset == "Concrete").sum()) for c in leader_wins)
    (a, b, p, _), (a2, b2, p2, _) = pairs
    forests = ", ".join(dict.fromkeys(tree_cells[0].sort_values("our_base", key=lambda b: b.str.len()).our_base))
    return (
        f"- **Raw features (`{RAW}`) lead"
        + (" and never lose a value another candidate matches" if never_loses else "")
        + f"**, but the lead rests on {len(split)} printed values, all {', '.join(bases)}: {values}. Scaling moves "
        f"trees only at the float level, so the ERT and every synthetic set are unaffected.\n"
        "- By the rule fixed in advance (a sign test on the values where two candidates disagree, p < "
        f"{SIGN_TEST_ALPHA:g} "
        "against every other candidate), "
        f"**{'there is no clear winner' if verdict.winner is None else 'the winner is ' + verdict.winner}**: "
        f"raw against standardised is {a}-{b}, p = {p:.2g}. LARF Table 8's larger forests ({forests}; "
        f"`results/{PREPROCESSING_TREES.with_suffix('.md').as_posix()}`) add {a2}-{b2}, p = {p2:.2g}. Pooled after "
        f"the fact that is {wins}-{losses}, p = {pooled:.2g}, but on nested forests, and {concrete} of the {wins} "
        f"wins are on Concrete."
    )


def compute_block(ctx: ReportContext) -> str:
    """Per paper and experiment (as the paper folders declare them): the compute its committed
    store recorded, scaled to the repetitions the paper folder asks for (``afr status --at``), and
    the least wall time that means on ``WORKERS`` workers. Recorded CPU (process time) where the
    store's units record it; wall seconds, which overstate CPU on a loaded machine, for a store
    made before CPU was recorded; the ``from`` column says which."""
    rows, total, measured = [], 0.0, {"CPU": 0, "wall": 0}
    for paper in ctx.papers:
        for spec in paper.experiments:
            try:
                store = spec.store()
            except AfrInputError:
                continue
            if not has_results(ctx.directory(store)):
                continue
            status = ctx.status(store)
            minutes, source = status.recorded_compute()
            measured[source] += 1
            scaled = minutes * spec.reps / status.mean_reps if status.mean_reps else 0.0
            total += scaled
            rows.append(
                (
                    paper.id,
                    spec.label or store,
                    store,
                    f"{status.mean_reps:g}",
                    str(spec.reps),
                    f"{scaled:.1f}",
                    source,
                    format_duration(60 * scaled / WORKERS, "whole"),
                )
            )
    mixed = " + ".join(f"{n} {k}" for k, n in measured.items() if n)
    rows.append(
        ("**all**", "", "", "", "", f"**{total:.1f}**", mixed, f"**{format_duration(60 * total / WORKERS, 'whole')}**")
    )
    headers = [
        "paper",
        "experiment",
        "store",
        "reps stored",
        "reps run",
        "CPU-min",
        "from",
        f"wall on {WORKERS} workers, at best",
    ]
    return tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)


def project_blocks(ctx: ReportContext) -> dict[str, str]:
    """The project-level blocks, by name (a block whose source is missing under the context's root
    is left out)."""
    root = ctx.root
    blocks = {
        TTESTS_BLOCK: published_ttests_block(),
        SIZES_BLOCK: export_sizes_block(root),
        PREPROCESSING_BLOCK: preprocessing_block(root),
        PREPROCESSING_NOTES_BLOCK: preprocessing_notes_block(root),
        COMPUTE_BLOCK: compute_block(ctx),
    }
    return {name: body for name, body in blocks.items() if body is not None}
