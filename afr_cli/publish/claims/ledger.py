"""The claims ledger and the agreement counts: every claim of a paper judged on the stores, one
``claims.md`` per paper under ``results/<paper>/``, and the bodies of the pages' generated blocks
that quote them (the verdict list, the ledger table, the agreement counts; afr_cli/publish/pages.py
puts them into the pages)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

import afr_cli.publish.claims.judge as judge_rules
from afr_cli.analysis.rope import DEFAULT_ROPE
from afr_cli.catalogue.knowledge import Paper
from afr_cli.publish.claims.judge import (
    ALPHA,
    LOOSE,
    NOT_CHECKED,
    ROPE_LEVEL,
    VERDICTS,
    Verdict,
    describe_test,
    judge,
    printed_test,
    reason,
)
from afr_cli.publish.claims.settle import DOES_NOT_SETTLE, settle, settle_sentence
from afr_cli.publish.context import ReportContext
from afr_cli.tables.agreement import RULE, as_printed
from afr_cli.tables.format import METRIC_NAMES, grid
from afr_cli.tables.paper_compare import paper_comparison, printed_cells

LEDGER = "claims.md"


def judge_paper(paper: Paper, ctx: ReportContext) -> list[Verdict]:
    """Every claim of a paper, judged on the stores of the report context (once per context: the
    ledger, the page's blocks and the site share the verdicts)."""
    return list(ctx.once(("verdicts", paper.id), lambda: _judged(paper, ctx)))


def _judged(paper: Paper, ctx: ReportContext) -> list[Verdict]:
    reports = ctx.reports_by_name()
    out = []
    for claim in paper.claims:
        if claim.get("test") == "surface_peak":
            store = ctx.store(claim["store"])
            out.append(judge(paper.id, claim, None, paper.reps, store.grid if store else None))
        elif claim.get("test") == "figure_wins":
            store = ctx.store(claim["store"])
            results = store.results if store else None
            out.append(settle(judge(paper.id, claim, results, paper.reps), results))
        else:
            report = reports.get(claim.get("report"))
            results = ctx.report_frames(report) if report is not None else None
            out.append(settle(judge(paper.id, claim, results, paper.reps), results))
    return out


def verdict_counts(verdicts: list[Verdict]) -> str:
    """'5 reproduces, 8 partly, ...': how many claims got each verdict, in the verdicts' order."""
    counts = Counter(v.verdict for v in verdicts)
    return ", ".join(f"{counts[k]} {k}" for k in VERDICTS if counts[k])


def _where(v: Verdict) -> str:
    claim = v.claim
    if "where" in claim:
        return str(claim["where"])
    if "figure" in claim:
        return f"Fig. {claim['figure']}"
    return (
        f"Table {claim['table']}"
        if "table" in claim
        else "Tables " + ", ".join(str(claim[s]["table"]) for s in ("a", "b") if isinstance(claim.get(s), dict))
    )


def ledger_table(verdicts: list[Verdict], reps_label: str) -> str:
    """One row per claim: where, the test, the paper's number, ours (all repetitions, and the
    paper's own), the verdict, and whether it changes (``changes``)."""
    rows = [
        [
            v.id,
            _where(v),
            describe_test(v.claim),
            v.paper.text if v.paper else "",
            (f"{v.ours.text} [{v.reps} reps]" if v.reps else v.ours.text) if v.ours else "",
            v.ours_paper_reps.text if v.ours_paper_reps else "",
            f"**{v.verdict}**",
            settles_text(v),
            changes(v, reps_label),
        ]
        for v in verdicts
    ]
    headers = [
        "claim",
        "where",
        "test",
        "paper",
        "ours (every repetition)",
        f"ours ({reps_label})",
        "verdict",
        "settles at",
        "verdict read otherwise",
    ]
    return grid(headers, rows, "md")


def settles_text(v: Verdict) -> str:
    """The "settles at" cell: 'settles at 10', 'does not settle', or '' for a claim not judged so."""
    if not v.settles:
        return ""
    return v.settles if v.settles == DOES_NOT_SETTLE else f"settles at {v.settles}"


def changes(v: Verdict, reps_label: str) -> str:
    """Whether a verdict changes on the paper's own repetitions and under the claim's other reading
    (a t-test's with the ROPE, a negligible difference's by the p-value): 'same' or the other verdict."""
    if not v.ours:
        return ""
    short = reps_label.split(" (")[0]
    parts = []
    if v.ours_paper_reps is not None:
        same = v.verdict_paper_reps == v.verdict
        parts.append(f"{short}: {'same' if same else v.verdict_paper_reps}")
    if v.other_reading:
        parts.append(f"{v.other_reading}: {'same' if v.verdict_other == v.verdict else v.verdict_other}")
    return "; ".join(parts)


def reading_rules(verdicts: list[Verdict]) -> str:
    """How this ledger reads the paper's words, one bullet per kind of claim it holds (from the
    claims' tests, so the rules stated are the rules applied)."""
    claims = [v.claim for v in verdicts]
    tests = {c.get("test") for c in claims}
    most = {c.get("at_least", "most") for c in claims if c.get("test") in ("wins", "best", "figure_wins")}
    rules = []
    if most:
        rules.append(
            '"most" is more than half of the datasets (or cells) compared, "all" every one of them, a '
            'number at least that many; "better" is better at the printed precision'
        )
    if any(c.get("test") == "ttest" and c.get("significant") not in (LOOSE,) for c in claims):
        rules.append(
            f'"significantly" (and a printed p-value) is Demšar\'s paired t-test over the per-dataset '
            f'means at p < {ALPHA:g}, "not significant" p ≥ {ALPHA:g}, on the paper\'s table and on ours alike'
        )
    if any(c.get("significant") == LOOSE for c in claims):
        rules.append(
            f'where the paper says "significantly" but runs no test, its own table is read for the '
            f"direction only; ours must also pass the t-test at {ALPHA:g}"
        )
    if "negligible" in tests:
        rules.append(
            f'a negligible difference ("insignificantly increases") is practical equivalence: the '
            f"Bayesian signed-rank test over the datasets puts P(inside ±{DEFAULT_ROPE:g} R²) ≥ {ROPE_LEVEL:g}, "
            f"with the claimed sign of the mean"
        )
    if any(v.other_reading for v in verdicts):
        rules.append(
            f"beside each such verdict stands the other reading: a t-test claim with the ROPE (an "
            f'improvement when P(B better by more than ±{DEFAULT_ROPE:g} R²) ≥ {ROPE_LEVEL:g}; "not '
            f'significant" as practical equivalence), a negligible difference by the p-value; the '
            f"verdict on the paper's own repetitions stands beside every verdict"
        )
    return "How this ledger reads the paper's words:\n\n" + "\n".join(f"- {r}." for r in rules) if rules else ""


def paper_reps_label(paper: Paper) -> str:
    """'repetitions 0-9', labelled as the inferred protocol when the paper states another count."""
    label = f"repetitions 0-{paper.reps - 1}"
    if paper.stated_reps and paper.stated_reps != paper.reps:
        label += f" (the inferred protocol; the paper states {paper.stated_reps})"
    return label


def render_ledger(paper: Paper, verdicts: list[Verdict]) -> str:
    """results/<paper>/claims.md: the verdict count, the table, then each claim quoted."""
    reps_label = paper_reps_label(paper)
    head = [
        f"# Claims ledger: {paper.title}",
        f"Every claim of the paper, as its data file `{paper.data_file}` records it, judged by "
        f"`afr report` on our stores: {verdict_counts(verdicts)}.",
        judge_rules.__doc__.split("\n\n", 1)[1].strip(),
        f"The paper's number is its claim's test applied to the paper's own table (a printed t-test "
        f"is quoted below the table); ours is on every stored repetition, with the paper's own "
        f"{reps_label} beside it (not used for the verdict).",
        *([reading_rules(verdicts)] if reading_rules(verdicts) else []),
        *([settle_sentence(verdicts, paper.reps)] if settle_sentence(verdicts, paper.reps) else []),
        ledger_table(verdicts, reps_label),
        "## The claims, quoted",
    ]
    blocks = []
    for v in verdicts:
        lines = [
            f"### {v.id}: {v.verdict}",
            f"> {v.claim['quote']}",
            f"- test: {describe_test(v.claim)}",
            f"- paper: {v.paper.text if v.paper else ''}",
        ]
        printed = printed_test(paper.id, v.claim)
        if printed:
            lines.append(f"- printed in the paper's text: {printed}")
        if v.ours:
            lines.append(f"- ours, every repetition{f' ({v.reps})' if v.reps else ''}: {v.ours.text}")
        if v.ours_paper_reps:
            lines.append(f"- ours, {reps_label}: {v.ours_paper_reps.text} (verdict there: {v.verdict_paper_reps})")
        if v.ours_other:
            lines.append(
                f"- ours {v.other_reading}, every repetition: {v.ours_other.text} (verdict: {v.verdict_other})"
            )
        if v.settles:
            lines.append(f"- repetitions it needs: {settles_text(v)} (of {v.reps or 'the stored'} stored)")
        lines.append(f"- verdict: **{v.verdict}**: {reason(v)}")
        if v.claim.get("reading"):
            lines.append(f"- why this reading: {str(v.claim['reading']).strip()}")
        blocks.append("\n".join(lines))
    return "\n\n".join(head + blocks) + "\n"


def summary_block(paper: Paper, verdicts: list[Verdict], shown: str = "results") -> str:
    """The summary of a paper's claims on its page: the verdict count and one line per claim. The
    ledger is named by its path under the root the page is built for (``results/`` for the
    committed page, the scratch root of ``afr reproduce --root DIR`` for its copy: ``shown``), not linked: the
    block is the same text in whichever page holds it, and a relative link would resolve from one
    page only."""
    lines = [
        f"{len(verdicts)} claims, judged by `afr report` from the stores ({verdict_counts(verdicts)}; ledger: "
        f"`{shown}/{paper.id}/{LEDGER}`):",
        "",
    ]
    for v in verdicts:
        if v.verdict == NOT_CHECKED:
            lines.append(f"- **{v.verdict}** ({_where(v)}): {reason(v)}.")
            continue
        ours = f"; ours {v.ours.text}" if v.ours else ""
        why = (
            f" The sentence: “{str(v.claim['quote']).strip()}” Why this reading: {str(v.claim['reading']).strip()}"
            if v.claim.get("reading")
            else ""
        )
        shift = changes(v, paper_reps_label(paper)) if why else ""
        shift = f" Read otherwise: {shift}." if shift else ""
        lines.append(
            f"- **{v.verdict}** ({_where(v)}): {describe_test(v.claim)}. Paper "
            f"{v.paper.text if v.paper else 'as stated'}"
            f"{ours}.{shift}{why}"
        )
    needed = settle_sentence(verdicts, paper.reps)
    if needed:
        lines += ["", needed]
    return "\n".join(lines)


def agreement_rows(paper: Paper, ctx: ReportContext, reps: int | None = None) -> list[list[str]]:
    """Per agreement group of the paper's data file, per metric and selection: cells, as printed,
    within tolerance and mean Δ on repetitions 0..reps-1 (default the paper's own; the agreement rule)."""
    reps = paper.reps if reps is None else reps
    reports = ctx.reports_by_name()
    rows = []
    for group in paper.agreement:
        report = reports[group["report"]]
        stored_rows = []
        for selection in ("stored", "best-test"):
            results = ctx.report_frames(report, reps, selection)
            if results is None:
                continue
            specs = dict.fromkeys(spec for spec, _ in group["columns"])  # each table compared once, not per metric
            compared = {spec: (paper_comparison(results, spec), printed_cells(spec)) for spec in specs}
            for metric in group["metrics"]:
                cells = []
                for spec, model in group["columns"]:
                    comparison, printed = compared[spec]
                    part = comparison[
                        (comparison["model"] == model) & (comparison["metric"] == metric) & comparison["ours"].notna()
                    ]
                    cells += [
                        (r["ours"], printed[(r["dataset"], model, metric)], r["within_tol"], r["diff"])
                        for r in part.to_dict("records")
                    ]
                if not cells:
                    continue
                frame = pd.DataFrame(cells, columns=["ours", "printed", "within", "diff"])
                same = sum(as_printed(o, p) for o, p in zip(frame["ours"], frame["printed"]))
                numbers = [
                    str(len(frame)),
                    str(same),
                    str(int(frame["within"].astype(bool).sum())),
                    f"{frame['diff'].mean():+.4f}",
                ]
                if selection == "stored":
                    stored_rows.append(numbers)
                elif numbers in stored_rows:
                    continue  # nothing chosen on a grid here: best-test is the same numbers
                label = "inner CV (as stored)" if selection == "stored" else "best-test"
                rows.append([group["label"], METRIC_NAMES[metric], label, *numbers])
    return rows


EFFECT_RULE = (
    "the effect of a column is its value minus the baseline column's in the same cell, ours and the "
    "paper's; it agrees when ours has the paper's sign and lies within half the paper's effect of it"
)


def effect_rows(paper: Paper, ctx: ReportContext, reps: int | None = None) -> list[list[str]]:
    """Per agreement group with ``effect_of: MODEL`` (a table whose effect is small against its
    metric, so that cells within tolerance say nothing about the effect): per metric and column,
    the cells, how many effects have the paper's sign, how many agree (EFFECT_RULE), and the mean
    effect of the paper and of ours, on repetitions 0..reps-1 (inner CV, as stored)."""
    reps = paper.reps if reps is None else reps
    reports = ctx.reports_by_name()
    rows = []
    for group in (g for g in paper.agreement if g.get("effect_of")):
        results = ctx.report_frames(reports[group["report"]], reps)
        if results is None:
            continue
        baseline = group["effect_of"]
        for metric in group["metrics"]:
            for spec, model in group["columns"]:
                if model == baseline:
                    continue
                comparison = paper_comparison(results, spec)
                part = comparison[comparison["metric"] == metric].dropna(subset=["ours"])
                wide = part.pivot_table(index="dataset", columns="model", values=["ours", "published"]).dropna()
                ours = wide[("ours", model)] - wide[("ours", baseline)]
                printed = wide[("published", model)] - wide[("published", baseline)]
                same = (ours * printed) > 0
                close = same & ((ours - printed).abs() <= printed.abs() / 2)
                rows.append(
                    [
                        f"{model} − {baseline} ({spec})",
                        METRIC_NAMES[metric],
                        str(len(wide)),
                        str(int(same.sum())),
                        str(int(close.sum())),
                        f"{printed.mean():+.4f}",
                        f"{ours.mean():+.4f}",
                    ]
                )
    return rows


def effect_block(paper: Paper, ctx: ReportContext) -> str | None:
    """The effect rows as a Markdown table, under the cell agreement; None without ``effect_of``."""
    rows = effect_rows(paper, ctx)
    if not rows:
        return None
    headers = ["effect", "metric", "cells", "paper's sign", "agrees", "mean (paper)", "mean (ours)"]
    return f"The effect, per cell, on repetitions 0-{paper.reps - 1} (inner CV, as stored; {EFFECT_RULE}):\n\n" + grid(
        headers, rows, "md"
    )


def agreement_block(paper: Paper, ctx: ReportContext) -> str | None:
    """The paper's agreement counts as a Markdown table for its page's section; None when there are
    no rows to show. A paper whose text states another count of repetitions than the protocol we
    identified (``stated_reps``) is headlined on the stated count, the identified one beside it."""
    headers = ["columns", "metric", "selection", "cells", "as printed", "within tol", "mean Δ"]
    if paper.stated_reps and paper.stated_reps != paper.reps:
        stated = agreement_rows(paper, ctx, paper.stated_reps)
        inferred = agreement_rows(paper, ctx, paper.reps)
        if not stated and not inferred:
            return None
        rows = [[f"0-{paper.stated_reps - 1} (stated)", *r] for r in stated] + [
            [f"0-{paper.reps - 1} (inferred protocol)", *r] for r in inferred
        ]
        return (
            f"On the paper's stated {paper.stated_reps} repetitions (0-{paper.stated_reps - 1}, the headline), "
            f"and beside them, labelled, on repetitions 0-{paper.reps - 1}, the protocol identified from the "
            f"other papers' numbers; by the one agreement rule ({RULE}):\n\n"
            + grid(["repetitions", *headers], rows, "md")
        )
    rows = agreement_rows(paper, ctx)
    if not rows:
        return None
    return f"On the paper's own repetitions 0-{paper.reps - 1}, by the one agreement rule ({RULE}):\n\n" + grid(
        headers, rows, "md"
    )


def write_ledger(paper: Paper, verdicts: list[Verdict], root: Path) -> Path:
    """results/<paper>/claims.md under ``root``."""
    out = root / paper.id / LEDGER
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_ledger(paper, verdicts))
    return out
