"""The committed reference reports: which stores, which published tables, which paired tests.

``afr report`` writes, for every report whose stores exist under ``results/``, the summary of
each store (``summary.md``, ``summary.csv``) and, in ``results/<report>/``, ours beside every
published table of the report (``paper-<paper>-<table>.md`` / ``.csv``, and ``-best-test.md``: the same with every grid point
chosen on the test set, the optimistic reading of the papers' "optimal" columns) and the paired tests
(``compare.md``). Everything there is regenerated from the stores by this one command.

With ``reps = N`` only repetitions 0..N-1 are used and the files go beside the all-repetition
ones, never over them: ``summary-reps<N>.*`` in the store and ``results/<report>/reps<N>/``. The
papers' baseline columns are 10-repetition means, so ``--reps 10`` gives the comparison on the
papers' own splits while the main files use every stored repetition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from afr_cli.store import STORE_FILE, load_results


@dataclass(frozen=True)
class Report:
    name: str
    stores: tuple[str, ...]
    papers: tuple[str, ...]
    compare: tuple[tuple[str, str], ...] = field(default_factory=tuple)


# Paired comparisons behind each report's claims (results/<report>/README.md): B against A.
_SATRF_VARIANTS = ("sat-rf-y", "sat-rf-x", "sat-rf-yx")
_LARF_VARIANTS = ("em-w-larf", "em-larf", "em-w-arf", "em-arf")
SATRF_COMPARE = (
    *((forest, v) for forest in ("rf", "ert") for v in (*_SATRF_VARIANTS, "sat-rf")),
    ("softmax-y", "sat-rf-y"), ("eps-abrf", "sat-rf"), ("sat-rf", "sat-rf-y2"),
    ("sat-rf-y", "sat-rf-yx"), ("sat-rf-x", "sat-rf-yx"), ("sat-rf-yx:RF", "sat-rf-yx:ERT"),
)
LARF_COMPARE = (
    *((forest, v) for forest in ("rf", "ert") for v in (*_LARF_VARIANTS, "larf")),
    ("em-w-arf", "em-w-larf"), ("em-arf", "em-larf"), ("em-w-larf", "em-larf"),
    ("eps-abrf", "larf"), ("larf:RF", "larf:ERT"),
)
TREES_COMPARE = (("forest:RF@100", "forest:RF@1000"), ("forest:ERT@100", "forest:ERT@1000"),
                 ("forest:RF@1000", "larf:RF"), ("forest:ERT@1000", "larf:ERT"))

REPORTS = (
    Report("abrf", ("abrf_rf", "abrf_ert"), ("satrf:9", "larf:10", "larf:3", "larf:5"),
           (("softmax", "eps-abrf"),)),
    Report("abrf_derived", ("abrf_rf_derived", "abrf_ert_derived"), ("satrf:9", "larf:10", "larf:3", "larf:5"),
           (("softmax", "eps-abrf"),)),
    Report("satrf", ("satrf_rf", "satrf_ert"),
           ("satrf:2", "satrf:3", "satrf:4", "satrf:5", "satrf:6", "satrf:7", "satrf:8", "satrf:9"),
           SATRF_COMPARE),
    Report("larf", ("larf_rf", "larf_ert"), ("larf:3", "larf:4", "larf:5", "larf:6", "larf:7", "larf:10"),
           LARF_COMPARE),
    # The LARF stores too, for the paper's claim that LARF beats the 1000-tree forests.
    Report("larf_trees", ("larf_trees", "larf_rf", "larf_ert"), ("larf:8", "larf:9"), TREES_COMPARE),
    # The SAT-RF Softmax columns under each feature scaling (configs/satrf_softmax_scaling.yaml);
    # minmax_tau2: min-max with tau = kappa = 2 (the authors' code's 0.5 factor)
    *(Report(f"satrf_softmax/{scale}", (f"satrf_softmax/{scale}",),
             ("satrf:2", "satrf:3", "satrf:4", "satrf:5", "satrf:6", "satrf:7"))
      for scale in ("standard", "minmax", "none", "minmax_tau2")),
)


def first_reps(frame, reps: int | None):
    """Only repetitions 0..reps-1 (None: all), so stores being extended report a fixed count."""
    return frame if reps is None else frame[frame["rep"] < reps]


def reps_suffix(reps: int | None) -> str:
    """'' for every repetition, 'reps<N>' for the first N: how files of a restricted count are named."""
    return "" if reps is None else f"reps{reps}"


def write_summary(store_dir: Path, reps: int | None = None) -> list[Path]:
    """summary.csv (long form) and summary.md (R² and MAE, mean ± std) of one store
    (summary-reps<N>.* when restricted to the first N repetitions)."""
    from afr_cli.tables import render_summary

    results = first_reps(load_results(store_dir), reps)
    stem = "-".join(filter(None, ("summary", reps_suffix(reps))))
    csv_path, md_path = store_dir / f"{stem}.csv", store_dir / f"{stem}.md"
    csv_path.write_text(render_summary(results, None, "csv"))
    md_path.write_text("\n\n".join(render_summary(results, m, "md", with_std=True) for m in ("r2", "mae")) + "\n")
    return [csv_path, md_path]


def write_report(report: Report, root: Path, reps: int | None = None) -> list[Path]:
    """The report's paper comparisons and paired tests, from the stores that exist
    (repetitions 0..reps-1 only, into the report's ``reps<N>/`` folder, when ``reps`` is given)."""
    import pandas as pd

    from afr_cli.store import load_grid
    from afr_cli.tables import (METRIC_NAMES, best_test_results, compare_models, paper_comparison,
                                render_comparison_overview, render_model_comparison, render_paper_comparison,
                                repetitions_note, selection_note)

    dirs = [root / s for s in report.stores if (root / s / STORE_FILE).is_file()]
    if not dirs:
        return []
    results = first_reps(pd.concat([load_results(d) for d in dirs], ignore_index=True), reps)
    optimistic = pd.concat([best_test_results(first_reps(load_grid(d), reps)) for d in dirs], ignore_index=True)
    out = root / report.name / reps_suffix(reps)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    counted = repetitions_note(results, reps)
    note = " ".join(n for n in (selection_note(results), counted) if n) or None
    for spec in report.papers:
        comparison = paper_comparison(results, spec)
        stem = out / f"paper-{spec.replace(':', '-')}"
        Path(f"{stem}.md").write_text(render_paper_comparison(comparison, spec, "md", note=note) + "\n")
        Path(f"{stem}.csv").write_text(render_paper_comparison(comparison, spec, "csv"))
        best_note = " ".join(n for n in (selection_note(optimistic), counted) if n) or None
        best = render_paper_comparison(paper_comparison(optimistic, spec), spec, "md", note=best_note)
        Path(f"{stem}-best-test.md").write_text(best + "\n")
        written += [Path(f"{stem}.md"), Path(f"{stem}.csv"), Path(f"{stem}-best-test.md")]
    comparisons = [compare_models(results, a, b) for a, b in report.compare
                   if {a.partition(":")[0], b.partition(":")[0]} <= set(results.model)]
    if comparisons:
        metric = METRIC_NAMES.get(comparisons[0].metric, comparisons[0].metric)
        overview = (f"# Paired comparisons over the datasets ({metric}: mean of B − A, Demšar's t-test, "
                    f"Wilcoxon, and on how many datasets B is better at the printed precision)\n\n"
                    + render_comparison_overview(comparisons) + f"\n\n{repetitions_note(results, reps, pointer=False)}")
        blocks = [f"## {c.b} against {c.a}\n\n" + render_model_comparison(c, "md") for c in comparisons]
        (out / "compare.md").write_text("\n\n".join([overview, *blocks]) + "\n")
        written.append(out / "compare.md")
    return written


def write_all(root: Path, names: list[str] | None = None, reps: int | None = None) -> list[Path]:
    """Every store's summary and every report under ``root``; returns the files written."""
    from afr_cli.errors import AfrInputError

    known = {r.name: r for r in REPORTS}
    for name in names or []:
        if name not in known:
            raise AfrInputError(f"report {name!r} is unknown; allowed: {', '.join(known)}")
    chosen = [known[n] for n in names] if names else list(REPORTS)
    written = []
    for report in chosen:
        for store in report.stores:
            if (root / store / STORE_FILE).is_file():
                written += write_summary(root / store, reps)
        written += write_report(report, root, reps)
    return written
