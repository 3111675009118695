"""The report files of the committed reference reports, as each paper's data file lists them (``reports``).

``afr report`` writes, for every report whose stores exist under ``results/``, the summary of
each store (``summary.md``, ``summary.csv``) and, in ``results/<report>/``, ours beside every
published table of the report (``paper-<paper>-<table>.md`` / ``.csv``, and ``-best-test.md``:
the same under the one best-test definition of afr_cli/tables/selection.py), the paired tests
(``compare.md``) and the Friedman test with Nemenyi critical differences over each table's
models (``friedman.md``, ``cd-*.svg``). Everything there is regenerated from the stores.

With ``reps = N`` only repetitions 0..N-1 are used and the files go beside the all-repetition
ones, never over them: ``summary-reps<N>.*`` in the store and ``results/<report>/reps<N>/``. The
papers' baseline columns are 10-repetition means, so ``--reps 10`` gives the comparison on the
papers' own splits while the main files use every stored repetition. A file whose bytes would not
change is not rewritten (outfiles.py), and only the files that changed are returned.
"""

from __future__ import annotations

from pathlib import Path

from afr_cli.catalogue.knowledge import Report
from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import reps_suffix
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.tables import (
    METRIC_NAMES,
    compare_models,
    paper_comparison,
    render_comparison_overview,
    render_model_comparison,
    render_paper_comparison,
    render_summary,
    repetitions_note,
    results_in_view,
    selection_note,
)
from afr_cli.tables.compare_evidence import COMPARE_BURN_IN, COMPARE_SAMPLES, COMPARE_SEED, mc_text
from afr_cli.tables.friedman import write_friedman


def write_summary(ctx: ReportContext, store: str, reps: int | None = None) -> list[Path]:
    """summary.csv (long form) and summary.md (R² and MAE, mean ± std) of one store under the
    context's root (summary-reps<N>.* when restricted to the first N repetitions)."""
    frames = ctx.store(store)
    if frames is None:
        return []
    store_dir = ctx.directory(store)
    results = results_in_view(frames.results, frames.grid, "stored", reps)
    stem = "-".join(filter(None, ("summary", reps_suffix(reps))))
    csv_path, md_path = store_dir / f"{stem}.csv", store_dir / f"{stem}.md"
    md = "\n\n".join(render_summary(results, m, "md", with_std=True) for m in ("r2", "mae")) + "\n"
    return [
        path
        for path, text in ((csv_path, render_summary(results, None, "csv")), (md_path, md))
        if write_if_changed(path, text)
    ]


OVERVIEW_LEGEND = (
    "Demšar's paired t-test is the papers' own test and the headline. p (Holm): its p-value adjusted by Holm's "
    "step-down method over every row of this table (one family). d_z = mean / sd of the per-dataset "
    "differences; r = the Wilcoxon test's matched-pairs rank-biserial correlation. P(A) / P(=) / P(B): the "
    "Bayesian signed-rank test (Benavoli, Corani, Demšar and Zaffalon, JMLR 2017) with a region of practical "
    "equivalence ±{rope:g} {metric} (prior 0.5 at 0, 50000 seeded samples). Hierarchical P(A) / P(=) / P(B): the "
    "Bayesian hierarchical test over datasets × repetitions (Corani, Benavoli, Demšar, Mangili and Zaffalon, "
    "Machine Learning 2017), for the next dataset, with the ROPE {hier_rope}; a seeded Gibbs sampler, {samples} "
    "draws after {burn_in}, seed {seed} (Monte Carlo error of each probability {mc}). Each block below adds, per "
    "dataset, the Bayesian correlated t-test over the repetitions (ρ = n_test / n) and its corrected interval, and "
    "intervals of the mean difference, d_z and r."
)


def hierarchical_legend(comparisons: list, rope: float, metric: str) -> dict[str, str]:
    """The overview legend's words for the hierarchical column: its ROPE (relative on an error
    metric), the sampler's size and seed, and the largest Monte Carlo error of its probabilities."""
    errors = [
        c.hierarchical.mc_error()
        for comparison in comparisons
        for c in comparison.bases
        if c.hierarchical.result is not None
    ]
    relative = comparisons[0].metric != "r2"
    return {
        "hier_rope": (
            f"±{100 * rope:g} % of A's {metric}, on the log ratio of the errors per repetition"
            if relative
            else f"±{rope:g} {metric}"
        ),
        "samples": str(COMPARE_SAMPLES),
        "burn_in": str(COMPARE_BURN_IN),
        "seed": str(COMPARE_SEED),
        "mc": mc_text(max(errors)) if errors else "n/a (no base where it applies)",
    }


def write_report(report: Report, ctx: ReportContext, reps: int | None = None) -> list[Path]:
    """The report's paper comparisons, paired tests and Friedman tests, from the stores that exist
    under the context's root (repetitions 0..reps-1 only, into the report's ``reps<N>/`` folder,
    when ``reps`` is given)."""
    results = ctx.report_frames(report, reps)
    if results is None:
        return []
    optimistic = ctx.report_frames(report, reps, "best-test")
    out = ctx.root / report.name / reps_suffix(reps)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    paper = ctx.catalogue.paper(report.paper)
    counted = repetitions_note(results, reps, published_reps=paper.reps, stated_reps=paper.stated_reps)
    note = " ".join(n for n in (selection_note(results), counted) if n) or None
    for spec in report.papers:
        comparison = paper_comparison(results, spec)
        stem = out / f"paper-{spec.replace(':', '-')}"
        best_note = " ".join(n for n in (selection_note(optimistic), counted) if n) or None
        best = render_paper_comparison(paper_comparison(optimistic, spec), spec, "md", note=best_note)
        files = (
            (f"{stem}.md", render_paper_comparison(comparison, spec, "md", note=note) + "\n"),
            (f"{stem}.csv", render_paper_comparison(comparison, spec, "csv")),
            (f"{stem}-best-test.md", best + "\n"),
        )
        written += [Path(name) for name, text in files if write_if_changed(Path(name), text)]
    comparisons = [
        compare_models(results, a, b, report.compare_metric, report.compare_rope)
        for a, b in report.compare
        if {a.partition(":")[0], b.partition(":")[0]} <= set(results.model)
    ]
    if comparisons:
        metric = METRIC_NAMES.get(comparisons[0].metric, comparisons[0].metric)
        overview = (
            f"# Paired comparisons over the datasets ({metric}: mean of B − A, Demšar's t-test, "
            f"Wilcoxon, and on how many datasets B is better at the printed precision)\n\n"
            + render_comparison_overview(comparisons)
            + f"\n\n{repetitions_note(results, reps, pointer=False)}"
            + "\n\n"
            + OVERVIEW_LEGEND.format(
                rope=report.compare_rope, metric=metric, **hierarchical_legend(comparisons, report.compare_rope, metric)
            )
        )
        blocks = [f"## {c.b} against {c.a}\n\n" + render_model_comparison(c, "md") for c in comparisons]
        if write_if_changed(out / "compare.md", "\n\n".join([overview, *blocks]) + "\n"):
            written.append(out / "compare.md")
    written += write_friedman(results, report.friedman, out, report.friedman_alpha)
    return written
