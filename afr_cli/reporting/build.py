"""``afr report``'s build for any results root: the papers' reports, ledgers and pages
(afr_cli/publish/build.py), then the root's own experiments (experiments.py: each store no paper
names) with their summaries and reports (experiment_report.py), then with ``html`` the site, whose
pages this layer decides: each paper's page and each experiment's page open with the same section
on what the root holds (held.py), an experiment's page holds its report, a paper's page adds its
published tables and claims; publish/site.py renders them.

``afr report --check`` regenerates all of it in a scratch copy (``stale_outputs``).
"""

from __future__ import annotations

from pathlib import Path

from afr_cli.errors import AfrInputError
from afr_cli.publish import build as papers_build
from afr_cli.publish.context import ReportContext
from afr_cli.publish.report_files import write_summary
from afr_cli.publish.site import SitePage, write_site
from afr_cli.reporting.experiment_report import REPORT, experiment_markdown, write_experiment_report
from afr_cli.reporting.experiments import Experiment, root_experiments
from afr_cli.reporting.held import held_section


def chosen(ctx: ReportContext, names: list[str] | None) -> tuple[list[str] | None, list[Experiment]]:
    """The papers' report names and the root's experiments that ``names`` name (all of both when
    None), or a one-line error naming an unknown name and listing every allowed one."""
    experiments = root_experiments(ctx.root, ctx.catalogue)
    if not names:
        return None, experiments
    reports = ctx.reports_by_name()
    own = {e.name: e for e in experiments}
    for name in names:
        if name not in reports and name.rstrip("/") not in own:
            allowed = ", ".join([*reports, *own]) or "none"
            raise AfrInputError(
                f"report {name!r} is unknown; allowed: {allowed} (the papers' reports and the experiments "
                f"under {ctx.root}: each store there that no paper names)"
            )
    return [n for n in names if n in reports], [own[n.rstrip("/")] for n in names if n.rstrip("/") in own]


def write_experiments(ctx: ReportContext, experiments: list[Experiment], reps: int | None = None) -> list[Path]:
    """Each experiment's summary (summary-reps<N>.* with ``reps``) and, on every repetition, its report."""
    written = []
    for exp in experiments:
        written += write_summary(ctx, exp.store, reps)
        if reps is None:
            written += write_experiment_report(ctx, exp)
    return written


def paper_heads(ctx: ReportContext) -> dict[str, str]:
    """The section each paper's page opens with: what the root holds of its stores."""
    heads = {}
    for paper in ctx.papers:
        stores = [s for report in paper.reports for s in report.stores]
        if stores:
            heads[paper.id] = held_section(ctx, stores, f"afr reproduce {paper.id} --root {ctx.shown}")
    return heads


def own_pages(ctx: ReportContext, experiments: list[Experiment]) -> list[SitePage]:
    """The site page of each experiment: its report (written beside its store) rendered."""
    pages = []
    for exp in experiments:
        source = ctx.directory(exp.store) / REPORT
        markdown = source.read_text(encoding="utf-8") if source.is_file() else experiment_markdown(ctx, exp)[0]
        pages.append(SitePage(exp.page, f"Experiment {exp.name}", markdown, source, exp.description))
    return pages


def write_site_of(ctx: ReportContext) -> list[Path]:
    """The site of the context's root: every paper's page and every experiment's."""
    experiments = root_experiments(ctx.root, ctx.catalogue)
    return write_site(ctx.root, ctx, own_pages(ctx, experiments), paper_heads(ctx))


def write_all(
    root: Path,
    names: list[str] | None = None,
    reps: int | None = None,
    html: bool = False,
    studies: bool = False,
    ctx: ReportContext | None = None,
) -> list[Path]:
    """Everything ``afr report`` writes under ``root`` (module docstring); the files written.
    ``names`` may name papers' reports and the root's experiments alike."""
    ctx = ReportContext(root) if ctx is None else ctx
    reports, experiments = chosen(ctx, names)
    written = []
    if reports is None or reports:
        written += papers_build.write_all(root, reports, reps, False, studies, ctx)
    written += write_experiments(ctx, experiments, reps)
    if html:
        written += write_site_of(ctx)
    return written


def stale_outputs(root: Path) -> list[str]:
    """``afr report --check``'s lines: every generated file and block this build would change."""
    return papers_build.stale_outputs(root, write_all)
