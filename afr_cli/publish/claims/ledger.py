"""The claims ledger and the agreement counts: every claim of a paper judged on the stores, one
``claims.md`` per paper under ``results/<paper>/``, and the bodies of the pages' generated blocks
that quote them (the verdict list, the ledger table, the agreement counts; afr_cli/publish/pages.py
puts them into the pages)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

import afr_cli.publish.claims.judge as judge_rules
from afr_cli.papers.knowledge import Paper
from afr_cli.publish.claims.judge import VERDICTS, Verdict, describe_test, judge, printed_test, reason
from afr_cli.publish.frames import load_store, report_by_name, report_frames
from afr_cli.tables.agreement import RULE, as_printed
from afr_cli.tables.format import METRIC_NAMES, grid
from afr_cli.tables.paper_compare import paper_comparison, printed_cells

LEDGER = "claims.md"


def judge_paper(paper: Paper, root: Path) -> list[Verdict]:
    """Every claim of a paper, judged on the stores under ``root``."""
    reports = report_by_name()
    out = []
    for claim in paper.claims:
        if claim.get("test") == "surface_peak":
            store = load_store(root / claim["store"])
            out.append(judge(paper.id, claim, None, paper.reps, store.grid if store else None))
        else:
            report = reports.get(claim.get("report"))
            results = report_frames(report, root) if report is not None else None
            out.append(judge(paper.id, claim, results, paper.reps))
    return out


def verdict_counts(verdicts: list[Verdict]) -> str:
    """'5 reproduces, 8 partly, ...': how many claims got each verdict, in the verdicts' order."""
    counts = Counter(v.verdict for v in verdicts)
    return ", ".join(f"{counts[k]} {k}" for k in VERDICTS if counts[k])


def _where(v: Verdict) -> str:
    claim = v.claim
    if "figure" in claim:
        return f"Fig. {claim['figure']}"
    return f"Table {claim['table']}" if "table" in claim else "Tables " + ", ".join(
        str(claim[s]["table"]) for s in ("a", "b") if isinstance(claim.get(s), dict))


def ledger_table(verdicts: list[Verdict], reps_label: str) -> str:
    """One row per claim: where, the test, the paper's number, ours (all repetitions, and the
    paper's own), the verdict."""
    rows = [[v.id, _where(v), describe_test(v.claim), v.paper.text if v.paper else "",
             (f"{v.ours.text} [{v.reps} reps]" if v.reps else v.ours.text) if v.ours else "",
             v.ours_paper_reps.text if v.ours_paper_reps else "", f"**{v.verdict}**"]
            for v in verdicts]
    headers = ["claim", "where", "test", "paper", "ours (every repetition)", f"ours ({reps_label})", "verdict"]
    return grid(headers, rows, "md")


def render_ledger(paper: Paper, verdicts: list[Verdict]) -> str:
    """results/<paper>/claims.md: the verdict count, the table, then each claim quoted."""
    reps_label = f"repetitions 0-{paper.reps - 1}"
    head = [f"# Claims ledger: {paper.title}",
            f"Every claim of the paper, as its data file `{paper.data_file}` records it, judged by "
            f"`afr report` on our stores: {verdict_counts(verdicts)}.",
            judge_rules.__doc__.split("\n\n", 1)[1].strip(),
            f"The paper's number is its claim's test applied to the paper's own table (a printed t-test "
            f"is quoted below the table); ours is on every stored repetition, with the paper's own "
            f"{reps_label} beside it (not used for the verdict).",
            ledger_table(verdicts, reps_label), "## The claims, quoted"]
    blocks = []
    for v in verdicts:
        lines = [f"### {v.id}: {v.verdict}", f"> {v.claim['quote']}",
                 f"- test: {describe_test(v.claim)}",
                 f"- paper: {v.paper.text if v.paper else ''}"]
        printed = printed_test(paper.id, v.claim)
        if printed:
            lines.append(f"- printed in the paper's text: {printed}")
        if v.ours:
            lines.append(f"- ours, every repetition{f' ({v.reps})' if v.reps else ''}: {v.ours.text}")
        if v.ours_paper_reps:
            lines.append(f"- ours, {reps_label}: {v.ours_paper_reps.text} (verdict there: {v.verdict_paper_reps})")
        lines.append(f"- verdict: **{v.verdict}**: {reason(v)}")
        blocks.append("\n".join(lines))
    return "\n\n".join(head + blocks) + "\n"


def summary_block(paper: Paper, verdicts: list[Verdict]) -> str:
    """The README summary of a paper's claims: the verdict count and one line per claim."""
    lines = [f"{len(verdicts)} claims, judged by `afr report` from the stores ({verdict_counts(verdicts)}; "
             f"ledger: [results/{paper.id}/{LEDGER}](results/{paper.id}/{LEDGER})):", ""]
    for v in verdicts:
        ours = f"; ours {v.ours.text}" if v.ours else ""
        lines.append(f"- **{v.verdict}** ({_where(v)}): {describe_test(v.claim)}. Paper {v.paper.text if v.paper else 'as stated'}{ours}.")
    return "\n".join(lines)


def agreement_rows(paper: Paper, root: Path) -> list[list[str]]:
    """Per agreement group of the paper's data file, per metric and selection: cells, as printed,
    within tolerance and mean Δ on the paper's own repetitions (the agreement rule)."""
    reports = report_by_name()
    rows = []
    for group in paper.agreement:
        report = reports[group["report"]]
        stored_rows = []
        for selection in ("stored", "best-test"):
            results = report_frames(report, root, paper.reps, selection)
            if results is None:
                continue
            for metric in group["metrics"]:
                cells = []
                for spec, model in group["columns"]:
                    comparison = paper_comparison(results, spec)
                    printed = printed_cells(spec)
                    part = comparison[(comparison["model"] == model) & (comparison["metric"] == metric)
                                      & comparison["ours"].notna()]
                    cells += [(r["ours"], printed[(r["dataset"], model, metric)], r["within_tol"], r["diff"])
                              for r in part.to_dict("records")]
                if not cells:
                    continue
                frame = pd.DataFrame(cells, columns=["ours", "printed", "within", "diff"])
                same = sum(as_printed(o, p) for o, p in zip(frame["ours"], frame["printed"]))
                numbers = [str(len(frame)), str(same), str(int(frame["within"].astype(bool).sum())),
                           f"{frame['diff'].mean():+.4f}"]
                if selection == "stored":
                    stored_rows.append(numbers)
                elif numbers in stored_rows:
                    continue  # nothing chosen on a grid here: best-test is the same numbers
                label = "inner CV (as stored)" if selection == "stored" else "best-test"
                rows.append([group["label"], METRIC_NAMES[metric], label, *numbers])
    return rows


def agreement_block(paper: Paper, root: Path) -> str | None:
    """The paper's agreement counts as a Markdown table for its README section; None when there are
    no rows to show."""
    rows = agreement_rows(paper, root)
    if not rows:
        return None
    headers = ["columns", "metric", "selection", "cells", "as printed", "within tol", "mean Δ"]
    return (f"On the paper's own repetitions 0-{paper.reps - 1}, by the one agreement rule ({RULE}):\n\n"
            + grid(headers, rows, "md"))


def write_ledger(paper: Paper, verdicts: list[Verdict], root: Path) -> Path:
    """results/<paper>/claims.md under ``root``."""
    out = root / paper.id / LEDGER
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_ledger(paper, verdicts))
    return out
