"""``afr report``: the build that drives the publishing layers in their one direction, and
``afr report --check``, which regenerates into a scratch copy and names every committed file or
generated block that differs from what the stores give now.

A file whose bytes would not change is not rewritten, and the command prints one line
(``written_line``): how many files changed, by folder, or that none did. Before any of this runs,
``afr report`` asks build_keys.py whether the state (stores, pages, afr's code, every file the last
full run of the same kind read) is the one that run left; then nothing is built at all, and a
check's answer is the one recorded (afr_cli/commands/report.py).

Order: each store's summary and each report's files (afr_cli/publish/report_files.py), then, on
every repetition and all reports, the claims ledgers (claims/ledger.py) and the pages' generated
blocks (pages.py: claims, ledgers, agreement counts, studies, measurement records), then with ``html`` the site
(site.py).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.publish.build_keys import CHECK_SCRATCH, NOTHING_CHANGED
from afr_cli.publish.cell_classes import classify_paper
from afr_cli.publish.cells_file import cells_by_paper, write_cells
from afr_cli.publish.claims.ledger import (
    LEDGER,
    agreement_block,
    effect_block,
    judge_paper,
    ledger_table,
    paper_reps_label,
    render_ledger,
    summary_block,
)
from afr_cli.publish.code_blocks import code_blocks
from afr_cli.publish.context import ReportContext
from afr_cli.publish.fidelity_blocks import fidelity_blocks
from afr_cli.publish.format_blocks import format_blocks
from afr_cli.publish.frames import chosen_reports, report_by_name
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.publish.page_words import shown_root
from afr_cli.publish.pages import (
    DOCS_DIR,
    blocks_in,
    committed_page,
    is_project_results,
    page_files,
    paper_page,
    unbuilt_blocks,
    write_pages,
)
from afr_cli.publish.project_blocks import project_blocks
from afr_cli.publish.report_files import write_report, write_summary
from afr_cli.publish.site import SITE, write_site
from afr_cli.publish.studies import own_papers, study_blocks


def write_ledgers(ctx: ReportContext, refresh_studies: bool = False) -> list[Path]:
    """Every paper's claims.md under the context's root and the generated blocks of the pages
    beside it (the papers' blocks, the project-level ones of project_blocks.py, the measurements',
    the code's constants'). Under a scratch root only the papers it holds a store of get a
    claims.md and a page copy, and a copy's result block the root cannot build says so in one
    line (``pages.unbuilt_blocks``) instead of keeping the committed page's result."""
    root = ctx.root
    scratch = not is_project_results(root)
    shown = tuple(own_papers(ctx.papers, root)) if scratch else ctx.papers
    written, blocks, judged = [], {}, []
    for paper in shown:
        verdicts = judge_paper(paper, ctx)
        if verdicts:
            judged.append((paper, verdicts))
            ledger = root / paper.id / LEDGER  # write_ledger's file, written only when it changes
            if write_if_changed(ledger, render_ledger(paper, verdicts)):
                written.append(ledger)
            blocks[f"claims:{paper.id}"] = summary_block(paper, verdicts, ctx.shown)
            blocks[f"ledger:{paper.id}"] = ledger_table(verdicts, paper_reps_label(paper))
        written += write_cells(paper, ctx)
        agreement, effect = agreement_block(paper, ctx), effect_block(paper, ctx)
        if agreement or effect:
            blocks[f"agreement:{paper.id}"] = "\n\n".join(b for b in (agreement, effect) if b)
    if judged:
        blocks["claims:papers"] = verdicts_by_paper(judged)
    classed = [(paper, classify_paper(paper, ctx)) for paper in shown]
    if any(len(frame) for _, frame in classed):
        blocks["cells:papers"] = cells_by_paper([(paper, frame) for paper, frame in classed if len(frame)])
    studies, caches = study_blocks(ctx.papers, ctx, refresh_studies)
    blocks.update(studies)
    blocks.update(project_blocks(ctx))
    blocks.update(bench_blocks(root))
    blocks.update(code_blocks(root))
    blocks.update(format_blocks(root))
    blocks.update(fidelity_blocks(ctx))
    if scratch:
        for paper in (p for p in shown if p.page is not None):
            blocks.update(unbuilt_blocks(paper_page(paper.page, paper.id, root), paper.id, blocks, ctx.shown))
    return written + caches + write_pages(root, blocks, shown)


def verdicts_by_paper(judged) -> str:
    """The results page's opening table: per paper (with its judged verdicts), how many claims got
    each verdict, and the total."""
    from collections import Counter

    from afr_cli.publish.claims.judge import VERDICTS
    from afr_cli.publish.markdown import table

    counts = [(paper, Counter(v.verdict for v in verdicts)) for paper, verdicts in judged]
    used = [v for v in VERDICTS if any(c[v] for _, c in counts)]
    rows = [[paper.title, str(sum(c.values())), *(str(c[v]) for v in used)] for paper, c in counts]
    total = [
        "**all**",
        str(sum(sum(c.values()) for _, c in counts)),
        *(str(sum(c[v] for _, c in counts)) for v in used),
    ]
    return table(["paper", "claims", *used], rows + [total], ["---"] + ["---:"] * (len(used) + 1))


def write_all(
    root: Path,
    names: list[str] | None = None,
    reps: int | None = None,
    html: bool = False,
    studies: bool = False,
    ctx: ReportContext | None = None,
) -> list[Path]:
    """Every store's summary and every report under ``root``, then (on every repetition, all
    reports) the claims ledgers and the pages' generated blocks (``studies``: rerun the expensive
    studies and rewrite their csv), and with ``html`` the site under ``results/site/``; returns the
    files written. The report context (each store read once) is made here from ``root`` and handed
    down to every step; a caller that writes several views of one root passes its own ``ctx``."""
    ctx = ReportContext(root) if ctx is None else ctx
    written = []
    for report in chosen_reports(names, known=ctx.reports_by_name()):
        for store in report.stores:  # each store there has its summary, even when its report is skipped
            written += write_summary(ctx, store, reps)
    for report in chosen_reports(names, root, known=ctx.reports_by_name()):  # a report missing a store: skipped, said
        written += write_report(report, ctx, reps)
    if reps is None and not names:
        written += write_ledgers(ctx, studies)
    if html:
        written += write_site(root, ctx)
    return written


def written_line(written: list[Path], root: Path) -> str:
    """The one line ``afr report`` prints: how many files changed and in which folders under
    ``root`` (an unchanged file is never rewritten), or that nothing changed."""
    if not written:
        return NOTHING_CHANGED.format(root=root)
    folders: dict[str, int] = {}
    for path in map(Path, written):
        inside = path.relative_to(root).parts if path.is_relative_to(root) else ()
        folder = (root / inside[0]).as_posix() if len(inside) > 1 else path.parent.as_posix()
        folders[folder] = folders.get(folder, 0) + 1
    where = ", ".join(f"{n} in {name}" for name, n in sorted(folders.items()))
    return f"wrote {len(written)} changed file{'s' if len(written) != 1 else ''} ({where})"


def committed_reps(root: Path) -> dict[int, list[str]]:
    """The restricted views that are committed: repetition count -> the reports that hold a
    ``results/<report>/reps<N>/`` folder (``afr report NAMES --reps N`` wrote them)."""
    views: dict[int, list[str]] = {}
    for report in report_by_name().values():
        for folder in sorted((root / report.name).glob("reps*")):
            match = re.fullmatch(r"reps(\d+)", folder.name)
            if folder.is_dir() and match:
                views.setdefault(int(match.group(1)), []).append(report.name)
    return dict(sorted(views.items()))


def _files(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def stale_outputs(root: Path, build=None) -> list[str]:
    """Regenerate everything ``afr report`` writes (every repetition with the site, and each
    committed ``reps<N>`` view) in a scratch copy of ``root`` and the pages beside it; one line per
    generated file that differs or is missing, per stale generated block of a page, and per site
    file that the build would no longer write. Nothing under ``root`` is touched. ``build``: the
    build that writes it all (``write_all``'s signature; afr_cli/reporting/build.py passes its own,
    which adds the root's experiments), default ``write_all``."""
    build = write_all if build is None else build
    root = Path(root)
    with tempfile.TemporaryDirectory(prefix=CHECK_SCRATCH) as scratch:
        copy = Path(scratch) / root.resolve().name
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(SITE, "*.sqlite-journal", "*.sqlite-wal"))
        for page in page_files(root):
            if page.parent in (root.parent, root.parent / DOCS_DIR):
                target = Path(scratch) / page.relative_to(root.parent)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(page, target)
        # one context for every view: the copy's stores are read once, and its pages name the
        # stores of the root it stands for
        ctx = ReportContext(copy, shown=shown_root(root), project=is_project_results(root))
        written = set()
        for reps, names in committed_reps(root).items():
            written |= set(build(copy, names, reps=reps, ctx=ctx))
        written |= set(build(copy, html=True, ctx=ctx))
        lines = []
        pages = {p.resolve() for p in page_files(copy)}
        for new in sorted(written):
            rel = new.relative_to(copy) if new.is_relative_to(copy) else new.relative_to(Path(scratch))
            old = (root / rel) if new.is_relative_to(copy) else (root.parent / rel)
            old = committed_page(new, copy) or old
            shown = old.as_posix()
            if new.resolve() in pages and old.is_file():
                before, after = blocks_in(old.read_text(encoding="utf-8")), blocks_in(new.read_text(encoding="utf-8"))
                lines += [
                    f"{shown}: generated block {name} is stale" for name in after if before.get(name) != after[name]
                ]
                continue
            if not old.is_file():
                lines.append(f"{shown}: missing (afr report writes it)")
            elif old.read_bytes() != new.read_bytes():
                lines.append(f"{shown}: stale")
        site_now = _files(copy / SITE)
        if (root / SITE).is_dir():
            lines += [
                f"{(root / SITE / rel).as_posix()}: not written by afr report any more"
                for rel in _files(root / SITE)
                if rel not in site_now
            ]
    return lines
