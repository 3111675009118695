"""``afr report --html``: a static site under ``results/site/`` that stands alone.

``index.html`` shows every paper's agreement (its table cells as printed / within tolerance /
miss, on the paper's own repetitions) and its claim verdicts at a glance, as stacked bars drawn
in inline SVG, with the counts in a table beside; one page per paper the loader returns holds
the claims ledger with its verdicts, every published table of the paper's reports with ours beside
each cell, coloured by the agreement rule, the figures under ``results/<report>/figures/`` and the
Friedman / Nemenyi critical-difference diagrams. The report layer (afr_cli/reporting/) hands it
the root's own experiments' pages (``SitePage``, listed on the index) and the section each paper's
page opens with; on a root other than the project's, a paper's narrative page shows only the
generated blocks built from that root's stores, each other one as the line saying it could not be
built there (``page_text_on_root``). Every image and file a page links to is copied
inside ``site/`` (``site/<report>/...``), so the folder can be copied or published on its own.
Every page links the one stylesheet ``site/site.css``. A small inline script counts images that
failed to load into ``<body data-broken-images>`` and says whether the stylesheet applied in
``<body data-styled>``, so a browser test can see a broken page.

Every Markdown text the site shows (a paper's narrative page, the tables ``afr reproduce`` drew,
the docs, ``friedman.md``) is rendered to HTML by ``markdown.to_html`` (site_docs.py maps its
links), so no page carries raw Markdown; every page has the one navigation bar; each image is
shown once per page; a file whose bytes did not change is not rewritten.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import pandas as pd

from afr_cli.catalogue.knowledge import Paper, Report, param_rows
from afr_cli.catalogue.knowledge import paper as paper_named  # a table's paper, by the id its spec names
from afr_cli.figures.captions import figure_caption, table_title
from afr_cli.publish.cell_classes import (
    CLASSES,
    UNEXPLAINED,
    class_counts,
    classify_paper,
    explanations_of,
    reading_counts,
    spread_cells,
    spread_choices,
    spread_summary,
)
from afr_cli.publish.claims.judge import VERDICTS, describe_test
from afr_cli.publish.claims.ledger import judge_paper, verdict_counts
from afr_cli.publish.context import ReportContext
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.publish.pages import blocks_in, result_block, unbuilt_note, with_blocks
from afr_cli.publish.site_docs import Documents
from afr_cli.publish.site_page import STYLESHEET, copied, esc, page_html
from afr_cli.publish.studies import own_papers
from afr_cli.tables.agreement import RULE, agreement
from afr_cli.tables.format import METRIC_NAMES, METRICS, format_as_printed, format_cell, format_param, format_value
from afr_cli.tables.paper_compare import metric_decimals, paper_comparison, printed_cells

SITE = "site"


@dataclass(frozen=True)
class SitePage:
    """What the report layer hands the renderer for one page of the root's own: where it goes
    under ``site/``, its title, its Markdown (``source``: the file its links and images are
    relative to) and the one line the index says of it."""

    where: str
    title: str
    markdown: str
    source: Path
    summary: str = ""


VERDICT_CLASS = {v: f"v{i}" for i, v in enumerate(VERDICTS)}
AGREEMENT_CLASS = {"as printed": "printed", "within tol": "tol", "miss": "miss", "n/a": "na"}
COLOUR = {
    "printed": "#5cb85c",
    "tol": "#f0c419",
    "miss": "#d9534f",
    "na": "#bbbbbb",
    "v0": "#5cb85c",
    "v1": "#f0c419",
    "v2": "#d9534f",
    "v3": "#9b7fd1",
    "v4": "#bbbbbb",
    "v5": "#7fb3d5",
}
STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 80em; color: #222; overflow-wrap: break-word; }
nav.site { border-bottom: 1px solid #ccc; padding-bottom: 0.5em; margin-bottom: 1em; font-size: 0.9em; }
nav.site a { margin-right: 0.9em; white-space: nowrap; }
div.scroll { max-width: 100%; overflow-x: auto; }
td.num, th.num { text-align: right; }
table.sortable th { cursor: pointer; } th[data-sorted="up"]::after { content: " \\25B2"; }
th[data-sorted="down"]::after { content: " \\25BC"; }
code { background: #f3f3f3; padding: 0 0.15em; }
p.source { border-top: 1px solid #ccc; padding-top: 0.5em; color: #666; font-size: 0.85em; }
table { border-collapse: collapse; margin: 0.6em 0 1.4em; font-size: 0.85em; }
p.table-title { margin: 1em 0 0.2em; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.45em; text-align: left; vertical-align: top; }
th { background: #eee; }
.printed { background: #b9e6b9; } .tol { background: #fbeeb0; } .miss { background: #f4b6b6; }
.na { background: #e4e4e4; color: #666; }
.v0 { background: #b9e6b9; } .v1 { background: #fbeeb0; } .v2 { background: #f4b6b6; }
.v3 { background: #d9c8ef; } .v4 { background: #e4e4e4; } .v5 { background: #cfe2f0; }
span.legend { padding: 0.1em 0.5em; margin-right: 0.5em; border: 1px solid #bbb; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.3em 0; }
blockquote { margin: 0.2em 0 0.2em 1em; color: #444; font-style: italic; }
pre { font-size: 0.8em; background: #f7f7f7; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto; max-width: 100%; }
pre code { background: none; padding: 0; }
div.cd-pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(22em, 1fr)); gap: 0.5em; }
div.cd-pair figure { margin: 0; } div.cd-pair img.cd { width: 100%; height: auto; }
figcaption { font-size: 0.85em; color: #444; max-width: 60em; }
nav.toc { display: inline-block; border: 1px solid #ddd; background: #fafafa; padding: 0.2em 1.2em 0.4em 0.4em;
  margin: 0 0 1em; font-size: 0.9em; } nav.toc p { margin: 0.3em 0 0.2em 0.8em; font-weight: bold; }
nav.toc ul { margin: 0.1em 0; padding-left: 1.4em; }
div.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(28em, 1fr)); gap: 0.8em; }
div.figures figure { margin: 0; } details { margin: 0.4em 0; }
details > summary { cursor: pointer; font-weight: bold; margin: 0.3em 0; }
svg.glance .bar-label { font: 12px sans-serif; } svg.glance .bar-count { font: bold 11px sans-serif; fill: #111; }
svg.glance .paper { font: bold 12px sans-serif; } svg.glance { max-width: 100%; height: auto; }
"""


def _e(text) -> str:
    return esc(text)


def _copied(source: Path, root: Path, site: Path) -> str:
    """Copy ``source`` (a file under ``root``) to the same place under ``site``; its path there."""
    return copied(source, root, site)


def _figure(src: str, caption: str, shown: set[str]) -> list[str]:
    """One figure, unless the page already shows ``src`` (then nothing: each image once a page)."""
    if src in shown:
        return []
    shown.add(src)
    return [f'<figure><img src="{_e(src)}" alt="{_e(caption)}"><figcaption>{_e(caption)}</figcaption></figure>']


def _ledger_html(verdicts) -> list[str]:
    rows = [
        '<div class="scroll"><table>',
        "<tr><th>claim</th><th>quote</th><th>test</th><th>paper</th><th>ours (every repetition)</th>"
        "<th>ours (paper's repetitions)</th><th>verdict</th></tr>",
    ]
    for v in verdicts:
        rows.append(
            f'<tr id="claim-{_e(v.id)}"><td>{_e(v.id)}</td><td><blockquote>{_e(v.claim["quote"])}</blockquote></td>'
            f"<td>{_e(describe_test(v.claim))}</td><td>{_e(v.paper.text if v.paper else '')}</td>"
            f"<td>{_e(v.ours.text if v.ours else '')}{_e(f' [{v.reps} reps]' if v.reps else '')}</td>"
            f"<td>{_e(v.ours_paper_reps.text if v.ours_paper_reps else '')}</td>"
            f'<td class="{VERDICT_CLASS[v.verdict]}">{_e(v.verdict)}</td></tr>'
        )
    return rows + ["</table></div>"]


def _table_html(results: pd.DataFrame, spec: str, kinds: Counter) -> list[str]:
    """One published table as rows of datasets and a cell 'ours / paper' per column and metric,
    coloured by the agreement rule; each cell's kind is counted into ``kinds``."""
    comparison = paper_comparison(results, spec)
    printed = printed_cells(spec)
    places = metric_decimals(printed)
    params = param_rows()
    out = []
    metrics = sorted(pd.unique(comparison["metric"]), key=lambda m: METRICS.index(m) if m in METRICS else len(METRICS))
    for metric in metrics:
        part = comparison[comparison["metric"] == metric]
        held = part.groupby("model", sort=False)["ours"].apply(lambda v: v.notna().any())
        models = [m for m in pd.unique(part["model"]) if held[m]]  # columns no store of ours holds: left out
        if not models:
            continue
        cells = {(r["dataset"], r["model"]): r for r in part.to_dict("records")}
        name = METRIC_NAMES.get(metric, metric)
        paper_id, _, number = spec.partition(":")  # the title above the table, as wide as the page
        out.append(
            f'<p class="table-title">Table {_e(number)} of <i>{_e(paper_named(paper_id).title)}</i>, '
            f"{_e(name)}: ours / paper</p>"
        )
        out.append(f'<div class="scroll"><table class="paper-table" data-spec="{_e(spec)}" data-metric="{_e(metric)}">')
        out.append("<tr><th>dataset</th>" + "".join(f"<th>{_e(m)}</th>" for m in models) + "</tr>")
        for dataset in pd.unique(part["dataset"]):
            row = [f"<td>{_e(dataset)}</td>"]
            for model in models:
                cell = cells.get((dataset, model))
                if cell is None:
                    row.append("<td></td>")
                    continue
                shown = printed.get((dataset, model, metric), "")
                is_param = metric in params
                kind = agreement(cell["ours"], shown, metric, is_param=is_param, places=places.get(metric))
                kinds[kind] += 1
                ours = (
                    "n/a"
                    if pd.isna(cell["ours"])
                    else format_as_printed(
                        cell["ours"],
                        shown,
                        format_param(cell["ours"]) if is_param else format_value(cell["ours"], metric),
                        param=is_param,
                        places=places.get(metric),
                    )
                )
                row.append(f'<td class="{AGREEMENT_CLASS[kind]}" title="{_e(kind)}">{_e(ours)} / {_e(shown)}</td>')
            out.append("<tr>" + "".join(row) + "</tr>")
        out.append("</table></div>")
    return out


def _report_sections(
    report: Report, paper: Paper, ctx: ReportContext, site: Path, kinds: Counter, docs: Documents, shown: set[str]
) -> list[str]:
    root = ctx.root
    results = ctx.report_frames(report, paper.reps)
    stores = ", ".join(f"<code>{_e(ctx.shown_store(s))}</code>" for s in report.stores)
    out = [f'<h3 id="report-{_e(report.name.replace("/", "-"))}">Report {_e(report.name)}</h3>']
    own = [spec for spec in report.papers if spec.partition(":")[0] == paper.id]
    if results is None:
        out.append(f"<p>No store of this report yet: {stores}.</p>")
    else:
        out.append(f"<p>Stores: {stores}; cells on repetitions 0-{paper.reps - 1}, the paper's own splits.</p>")
        for spec in own:
            tables = _table_html(results, spec, kinds)
            if spec in shown and tables:  # an earlier report shows this table: this one is another setting
                number = spec.partition(":")[2]
                tables = [
                    f"<details><summary>Table {_e(number)} again, from these stores</summary>",
                    *tables,
                    "</details>",
                ]
            shown.add(spec)
            out += tables
    out += _elsewhere([spec for spec in report.papers if spec not in own])
    folder = root / report.name
    figures = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
    captions = _output_captions(paper, root)
    shown_figures = [
        line
        for f in figures
        for line in _figure(_copied(f, root, site), captions.get(f.resolve(), figure_caption_from_name(f)), shown)
    ]
    if shown_figures:
        out += ["<h4>Figures</h4>", '<div class="figures">', *shown_figures, "</div>"]
    diagrams = sorted(folder.glob("cd-*.svg"))
    if diagrams:
        friedman = docs.page_of(folder / "friedman.md")
        named = f' (<a href="{_e(friedman)}">friedman.md</a>, every repetition)' if friedman else " (every repetition)"
        out.append(f"<h4>Friedman test and Nemenyi critical differences{named}</h4>")
        pairs: dict[str, list[Path]] = {}
        for d in diagrams:  # cd-<table>-ours.svg beside cd-<table>-paper.svg
            pairs.setdefault(re.sub(r"-(ours|paper)$", "", d.stem), []).append(d)
        for pair in pairs.values():
            images = [
                f'<figure><img class="cd" src="{_e(_copied(d, root, site))}" alt="{_e(cd_caption(d.stem))}">'
                f"<figcaption>{_e(cd_caption(d.stem))}</figcaption></figure>"
                for d in sorted(pair, key=lambda d: not d.stem.endswith("-ours"))
            ]
            out.append('<div class="cd-pair">' + "".join(images) + "</div>")
    return out


# the page.md blocks that list the claims: the page shows the ledger once, in its own section
_CLAIM_BLOCKS = re.compile(
    r"<!-- BEGIN GENERATED: (?:claims|ledger):\S+ \(afr report; do not edit by hand\) -->\n.*?"
    r"\n<!-- END GENERATED: (?:claims|ledger):\S+ -->",
    re.S,
)


def _elsewhere(specs: list[str]) -> list[str]:
    """A line linking each published table of another paper a report also fills: that paper's page
    shows it (each table on one page)."""
    by_paper: dict[str, list[str]] = {}
    for spec in specs:
        paper_id, _, number = spec.partition(":")
        by_paper.setdefault(paper_id, []).append(number)
    return [
        f'<p class="elsewhere">This report also fills Table{"s" if len(numbers) > 1 else ""} {_e(", ".join(numbers))} '
        f"of <i>{_e(paper_named(paper_id).title)}</i>: shown, ours beside the paper's, on "
        f'<a href="{_e(paper_id)}.html#paper-tables">its page</a>.</p>'
        for paper_id, numbers in by_paper.items()
    ]


def cd_caption(stem: str) -> str:
    """A critical-difference diagram's caption from its file's stem (``cd-<paper>-<table>[-group]-<side>``)."""
    match = re.fullmatch(r"cd-([a-z_]+)-(\w+?)(?:-(\w+))?-(ours|paper)", stem)
    if match is None:
        return f"Critical-difference diagram {stem}"
    paper_id, table, group, side = match.groups()
    whose = "our numbers (every repetition)" if side == "ours" else "the paper's printed numbers"
    base = f", {group} base" if group else ""
    return f"Average ranks of the models of Table {table}{base} over its datasets, from {whose}; Nemenyi critical difference"


def figure_caption_from_name(path: Path) -> str:
    """A caption in words for a figure no output describes: its name's words."""
    return f"Figure: {path.stem.replace('_', ' ').replace('-', ' ')}"


def _output_captions(paper: Paper, root: Path) -> dict[Path, str]:
    """The caption of each figure the paper's ``outputs`` draw under ``root``, by its path."""
    out = {}
    for output in paper.outputs:
        for command in output.commands:
            if "--out" not in command:
                continue
            path = Path(command[command.index("--out") + 1].replace("{root}", str(root))).resolve()
            out[path] = output.label or figure_caption(command)
    return out


def page_text_on_root(paper: Paper, ctx: ReportContext) -> str:
    """The paper's narrative page as it is true on the context's root: the committed page on the
    project's ``results/`` (or the scratch copy ``afr report --check`` builds in its stead);
    elsewhere the copy ``afr report`` wrote under the root, whose result blocks it built from that
    root's stores or replaced by the line saying they could not be, with every other generated
    block replaced by that line too (a measurement record of the committed root is not this
    root's), so that no block keeps a number of another root. For a paper none of whose stores the
    root holds, ``afr report`` builds no block (a copy there is the committed text): each of its
    blocks is that line."""
    committed = paper.page.read_text(encoding="utf-8")
    if ctx.project:
        return committed
    copy = ctx.root / paper.id / paper.page.name
    built = copy.is_file() and paper.id in {p.id for p in own_papers((paper,), ctx.root)}
    text = copy.read_text(encoding="utf-8") if built else committed
    held = blocks_in(text) if built else {}
    note = unbuilt_note(ctx.shown)
    return with_blocks(
        text,
        {
            name: body if result_block(name, paper.id) and name in held else note
            for name, body in blocks_in(text).items()
        },
    )


def _narrative(paper: Paper, docs: Documents, shown: set[str], ctx: ReportContext) -> tuple[str, str]:
    """The paper's narrative page (``page.md``) as HTML, split where its first ``## `` section
    starts: (what the paper proposes and what we found, the rest); its own title line dropped;
    its generated blocks true on the context's root (``page_text_on_root``)."""
    if paper.page is None or not paper.page.is_file():
        return "", ""
    text = re.sub(r"\A# [^\n]*\n", "", page_text_on_root(paper, ctx))
    text = _CLAIM_BLOCKS.sub("*The claims, judged: the [claims ledger](#claims-ledger) above.*", text)
    head, sep, rest = text.partition("\n## ")
    where = f"{paper.id}.html"
    intro = docs.render(paper.page, where, shown, head)
    return intro, (docs.render(paper.page, where, shown, "## " + rest) if sep else "")


def paper_page(
    paper: Paper,
    verdicts,
    ctx: ReportContext,
    site: Path,
    kinds: Counter | None = None,
    docs: Documents | None = None,
    head: str = "",
    classes: pd.DataFrame | None = None,
) -> str:
    """One paper's HTML page, each thing once: what the paper proposes (its narrative page's
    opening), the verdicts at a glance, its tables with ours beside them (a table of another paper
    linked to that paper's page), its figures (each once), the critical-difference diagrams, what
    ``afr reproduce`` drew, the claims ledger, then the notes of its narrative page without their
    own listing of the claims (the tables' agreement kinds counted into ``kinds``; the images it
    shows copied into ``site``). ``head``: the Markdown the report layer puts first (what the root
    holds of the paper's stores); ``classes``: its published cells classed (``classify_paper``), the
    counts and the unexplained cells shown after its tables."""
    kinds = Counter() if kinds is None else kinds
    docs = Documents(ctx, site) if docs is None else docs
    shown: set[str] = set()  # what the page already shows (image paths, published tables), each once
    intro, rest = _narrative(paper, docs, shown, ctx)
    where = f"{paper.id}.html"
    body = [f"<h1>{_e(paper.title)}</h1>"]
    if head:
        body.append('<div class="held">' + docs.render(ctx.root / paper.id / "page.md", where, shown, head) + "</div>")
    body.append(intro)
    if verdicts:
        body.append(f'<p class="verdicts"><a href="#claims-ledger">Claims</a>: {_e(verdict_counts(verdicts))}.</p>')
    if any(report.papers for report in paper.reports):
        body += [
            '<h2 id="paper-tables">The paper\'s tables, ours beside them</h2>',
            "<p>"
            + "".join(f'<span class="legend {c}">{_e(k)}</span>' for k, c in AGREEMENT_CLASS.items())
            + f"</p><p>{_e(RULE)}.</p>",
        ]
        for report in paper.reports:
            body += _report_sections(report, paper, ctx, site, kinds, docs, shown)
    if classes is not None and len(classes):
        body += _classes_html(paper, classes)
    body += _output_sections(paper, ctx.root, site, docs, shown)
    body.append('<h2 id="claims-ledger">Claims ledger</h2>')
    if verdicts:
        body += [f"<p>{_e(verdict_counts(verdicts))}.</p>", *_ledger_html(verdicts)]
    else:
        body.append(
            f"<p>None: the paper's data file (<code>{_e(paper.data_file)}</code>) records no claim "
            "about results of its own.</p>"
        )
    if rest:
        body += [
            '<h2 id="write-up">Notes on the reproduction</h2>',
            f"<p>What each result rests on, the misses and what explains them (from <code>afr_cli/papers/"
            f"{_e(paper.id)}/page.md</code>).</p>",
            '<div class="write-up">',
            rest,
            "</div>",
        ]
    return page_html(paper.title, body, f"{paper.id}.html")


def _classes_html(paper: Paper, classes: pd.DataFrame) -> list[str]:
    """Every published cell's class, counted, the causes the classes rest on with the test that
    checks each, and the unexplained cells in a folded table."""
    counts = class_counts(classes)
    out = [
        '<h2 id="cell-classes">Every published cell, classed</h2>',
        f"<p>Each of the {len(classes)} published cells in the first class that holds, on repetitions "
        f"0-{paper.reps - 1}: " + _e("; ".join(f"{counts[c]} {c}" for c in CLASSES)) + ".</p>",
    ]
    causes = explanations_of(paper, "cause")
    if causes:
        out.append(
            "<p>Tested causes: "
            + "; ".join(
                f"{_e(c.cause)} (<code>{_e(c.store)}</code>, checked by <code>{_e(c.test)}</code>)" for c in causes
            )
            + ".</p>"
        )
    out += _readings_html(classes)
    out += _spread_html(classes)
    left, params = classes[classes["class"] == UNEXPLAINED], param_rows()
    if not len(left):
        return out + ["<p>No cell is unexplained.</p>"]
    rows = "".join(
        "<tr>"
        + "".join(f"<td>{_e(v)}</td>" for v in (r.table, r.dataset, r.model, METRIC_NAMES.get(r.metric, r.metric)))
        + f"<td>{_e(r.paper)}</td><td>{_e(format_cell(r.ours, r.metric, params))}</td></tr>"
        for r in left.itertuples()
    )
    return out + [
        f"<details><summary>The {len(left)} unexplained cells</summary>",
        '<div class="scroll"><table class="unexplained"><tr><th>table</th><th>dataset</th><th>model</th>'
        "<th>metric</th><th>paper</th><th>ours</th></tr>" + rows + "</table></div></details>",
    ]


def _readings_html(classes: pd.DataFrame) -> list[str]:
    """Per table, the cells the authors' code reading recomputes and how many each reading agrees
    with (``reading_counts``); nothing for a paper without a code store."""
    counts = reading_counts(classes)
    if not len(counts):
        return []
    head = "".join(f"<th>{_e(c)}</th>" for c in counts.columns)
    rows = "".join(
        "<tr>" + "".join(f'<td class="num">{_e(v)}</td>' for v in row) + "</tr>" for row in counts.astype(str).values
    )
    return [
        "<p>The authors' code as a second reading: per table, the cells it recomputes on the same "
        "splits, and how many of them each reading agrees with.</p>",
        f'<table class="readings"><tr>{head}</tr>{rows}</table>',
    ]


def _spread_html(classes: pd.DataFrame) -> list[str]:
    """What the choices no paper pins down do to the cells our text reading misses
    (``spread_summary``), and every such cell in a folded table: ours under the default choice,
    then under each other one, the range and the class."""
    choices, held = spread_choices(classes), spread_cells(classes)
    if not choices:
        return []
    out = [f"<p>{_e(spread_summary(classes))}</p>"]
    if not len(held):
        return out
    params = param_rows()
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(v)}</td>"
            for v in (r["table"], r["dataset"], r["model"], METRIC_NAMES.get(r["metric"], r["metric"]))
        )
        + f"<td>{_e(r['paper'])}</td>"
        + "".join(f"<td>{_e(format_cell(r[c], r['metric'], params))}</td>" for c in ("ours", *choices, "range"))
        + f"<td>{_e(r['class'])}</td></tr>"
        for r in held.to_dict("records")
    )
    return out + [
        f"<details><summary>The {len(held)} missed scores under each choice</summary>",
        '<div class="scroll"><table class="spread"><tr><th>table</th><th>dataset</th><th>model</th><th>metric</th>'
        "<th>paper</th><th>ours</th>"
        + "".join(f"<th>{_e(c)}</th>" for c in choices)
        + "<th>range</th><th>class</th></tr>"
        + rows
        + "</table></div></details>",
    ]


def _output_sections(paper: Paper, root: Path, site: Path, docs: Documents, shown: set[str]) -> list[str]:
    """The tables and figures the paper's ``outputs`` drew under ``root`` (``afr reproduce``):
    Markdown rendered to HTML (its tables as tables), other text preformatted, each image copied
    and shown unless the page already shows it."""
    drawn, found = [], False
    for output in paper.outputs:
        target = output.stdout or next((c[c.index("--out") + 1] for c in output.commands if "--out" in c), None)
        if target is None:
            continue
        path = Path(target.replace("{root}", str(root)))
        if not path.is_file():
            continue
        found = True
        label = output.label or (table_title(output.commands) if path.suffix != ".png" else "")
        if path.suffix == ".png":
            caption = output.label or figure_caption(next(c for c in output.commands if "--out" in c))
            drawn += _figure(_copied(path, root, site), caption, shown)
        elif path.suffix == ".md":
            drawn += [  # folded: the paper's tables above come first, these are its extra views
                f"<details><summary>{_e(label)}</summary>",
                docs.render(path, f"{paper.id}.html", shown),
                "</details>",
            ]
        else:
            drawn.append(
                f"<details><summary>{_e(label)}</summary><pre>{_e(path.read_text(encoding='utf-8'))}</pre></details>"
            )
    if not paper.outputs:
        return []
    head = (
        '<h2 id="drawn">Drawn after the experiments (<code>afr reproduce ' + _e(paper.id) + "</code>)</h2>"
        "<p>The figures and extra tables <code>afr reproduce " + _e(paper.id) + "</code> draws from the stores.</p>"
    )
    if found and not drawn:
        drawn = ["<p>Each of its figures is shown above.</p>"]
    return [head, *(drawn or ["<p>Nothing drawn yet under this results root.</p>"])]


def _bar(y: int, label: str, parts: list[tuple[str, int, str]], width: int = 420) -> list[str]:
    """One stacked bar at height ``y``: segments (name, count, css class) scaled to ``width``."""
    total = sum(n for _, n, _ in parts)
    out = [f'<text x="0" y="{y + 13}" class="bar-label">{_e(label)}</text>']
    if not total:
        return out + [f'<text x="110" y="{y + 13}" class="bar-label">none</text>']
    x = 110.0
    for name, n, css in parts:
        if not n:
            continue
        w = width * n / total
        out.append(
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="18" fill="{COLOUR[css]}">'
            f"<title>{_e(f'{n} {name}')}</title></rect>"
        )
        if w >= 18:
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + 13}" text-anchor="middle" class="bar-count">{n}</text>')
        x += w
    return out


def glance_chart(rows: list[tuple[Paper, Counter, Counter]]) -> str:
    """Inline SVG: per paper, a stacked bar of its table cells by agreement kind and one of its
    claims by verdict, each scaled to its own total (the counts are printed in the segments)."""
    height = 16 + 64 * len(rows) + 40
    out = [
        f'<svg class="glance" xmlns="http://www.w3.org/2000/svg" width="760" height="{height}" '
        f'viewBox="0 0 760 {height}" role="img" aria-label="agreement and claim verdicts per paper">'
    ]
    y = 14
    for paper, kinds, verdicts in rows:
        out.append(f'<text x="0" y="{y}" class="paper">{_e(paper.title)}</text>')
        out += _bar(y + 6, "table cells", [(k, kinds[k], c) for k, c in AGREEMENT_CLASS.items() if k != "n/a"])
        out += _bar(y + 28, "claims", [(v, verdicts[v], VERDICT_CLASS[v]) for v in VERDICTS])
        y += 64
    legend = [(k, c) for k, c in AGREEMENT_CLASS.items() if k != "n/a"] + [(v, VERDICT_CLASS[v]) for v in VERDICTS]
    x = 0
    for row, chunk in enumerate((legend[:3], legend[3:])):
        x = 0
        for name, css in chunk:
            out.append(
                f'<rect x="{x}" y="{y + row * 18}" width="12" height="12" fill="{COLOUR[css]}"></rect>'
                f'<text x="{x + 16}" y="{y + row * 18 + 10}" class="bar-label">{_e(name)}</text>'
            )
            x += 26 + int(5.6 * len(name))
    return "\n".join(out + ["</svg>"])


def _own_pages_html(own: Sequence[SitePage], root_shown: str) -> list[str]:
    """The index's list of the root's own experiments, each linked to its page, or the one line
    saying how to get one."""
    head = f'<h2 id="experiments">Experiments of this results root (<code>{_e(root_shown)}</code>)</h2>'
    if not own:
        return [
            head,
            "<p>None yet: a store under this root that no paper names (<code>afr run mine.yaml --out "
            f"{_e(root_shown)}/mine</code>) gets its page here at the next <code>afr report --html</code>.</p>",
        ]
    items = "".join(
        f'<li><a href="{_e(p.where)}">{_e(p.title)}</a>{_e(": " + p.summary if p.summary else "")}</li>' for p in own
    )
    return [head, f'<ul class="experiments">{items}</ul>']


def _classes_table(pages: list[tuple[Paper, str, Counter, Counter]], classes: dict[str, Counter]) -> list[str]:
    """The index's table of every published cell's class, one row per paper (its counts sum to
    the paper's published cells)."""
    rows = "".join(
        f'<tr><td><a href="{_e(href)}#cell-classes">{_e(p.title)}</a></td>'
        + "".join(f'<td class="num">{classes[p.id][c]}</td>' for c in CLASSES)
        + f'<td class="num">{sum(classes[p.id].values())}</td></tr>'
        for p, href, _, _ in pages
        if p.id in classes
    )
    return [
        "<p>Every published cell, classed: the first class that holds, as printed or within tolerance "
        "(the agreement rule), within the spread of choices the paper leaves open, reached by the "
        "authors' code reading, explained by a tested cause the paper's page names, else unexplained.</p>",
        '<div class="scroll"><table class="cell-classes"><tr><th>paper</th>'
        + "".join(f"<th>{_e(c)}</th>" for c in CLASSES)
        + "<th>published cells</th></tr>"
        + rows
        + "</table></div>",
    ]


def index_page(
    pages: list[tuple[Paper, str, Counter, Counter]],
    own: Sequence[SitePage] = (),
    root_shown: str = "results",
    classes: dict[str, Counter] | None = None,
) -> str:
    """The site's landing page: the chart, then one row per paper with its counts, its published
    cells by class (``classes``, by paper id), then the root's own experiments (``own``), each
    linked to its page."""
    rows = [
        f'<tr><td><a href="{_e(href)}">{_e(p.title)}</a></td>'
        + "".join(f"<td>{kinds[k]}</td>" for k in AGREEMENT_CLASS if k != "n/a")
        + "".join(f"<td>{verdicts[v]}</td>" for v in VERDICTS)
        + "</tr>"
        for p, href, kinds, verdicts in pages
    ]
    heads = "".join(f'<th class="{c}">{_e(k)}</th>' for k, c in AGREEMENT_CLASS.items() if k != "n/a")
    heads += "".join(f'<th class="{VERDICT_CLASS[v]}">{_e(v)}</th>' for v in VERDICTS)
    return page_html(
        "afr: the papers reproduced",
        [
            "<h1>afr: the papers reproduced</h1>",
            "<p>One page per paper: its claims with computed verdicts, its tables with ours beside every "
            "cell, the figures and the critical-difference diagrams. Written by <code>afr report --html</code>. "
            'The documentation is in the same site: start at <a href="readme.html">the README</a> or '
            '<a href="docs/README.html">the docs index</a>.</p>',
            "<h2>At a glance</h2>",
            f"<p>Table cells shown: ours against the printed number on the paper's own repetitions ({_e(RULE)}), "
            "counted once per table the pages show, so a published cell that two reports set beside ours "
            "counts twice (the classes below count each published cell once); claims: the verdicts of the "
            "claims ledger.</p>",
            '<div class="scroll">' + glance_chart([(p, kinds, verdicts) for p, _, kinds, verdicts in pages]) + "</div>",
            '<div class="scroll"><table class="glance-counts"><tr><th rowspan="2">paper</th><th colspan="3">table '
            "cells shown</th>"
            f'<th colspan="{len(VERDICTS)}">claims</th></tr>',
            f"<tr>{heads}</tr>",
            *rows,
            "</table></div>",
            *(_classes_table(pages, classes) if classes else []),
            *_own_pages_html(own, root_shown),
        ],
    )


def _files(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else {}


def own_page(page: SitePage, docs: Documents) -> str:
    """An experiment's page: its Markdown rendered, its images copied beside the site's."""
    return page_html(
        page.title,
        [
            docs.render(page.source, page.where, set(), page.markdown),
            f'<p class="source">Written by <code>afr report</code> from <code>{_e(page.source.parent.name)}/'
            f"{_e(page.source.name)}</code> under the results root.</p>",
        ],
        page.where,
    )


def write_site(
    root: Path, ctx: ReportContext | None = None, own: Sequence[SitePage] = (), heads: dict[str, str] | None = None
) -> list[Path]:
    """results/site/index.html, one page per paper the loader returns, the docs' pages and the
    images and files they show, copied inside site/; a file of an earlier build that no page
    shows any more is removed. Returns the files whose bytes changed or that were removed (an
    unchanged site writes nothing). A build passes its report context ``ctx`` (of ``root``);
    ``afr report --site-only`` makes its own. The report layer (afr_cli/reporting/) hands it
    what it decided the pages hold beyond the papers' own: ``own``, the root's experiments'
    pages, listed on the index; ``heads``, the Markdown each paper's page opens with, by paper id."""
    ctx = ReportContext(root) if ctx is None else ctx
    site = ctx.root / SITE
    before = _files(site)
    site.mkdir(parents=True, exist_ok=True)
    write_if_changed(site / STYLESHEET, STYLE.lstrip())
    docs = Documents(ctx, site)
    pages, classes = [], {}
    for paper in ctx.papers:
        verdicts = judge_paper(paper, ctx)
        kinds: Counter = Counter()
        path = site / f"{paper.id}.html"
        head = (heads or {}).get(paper.id, "")
        classed = classify_paper(paper, ctx)
        classes[paper.id] = class_counts(classed)
        write_if_changed(path, paper_page(paper, verdicts, ctx, site, kinds, docs, head, classed))
        pages.append((paper, path.name, kinds, Counter(v.verdict for v in verdicts)))
    for page in own:
        write_if_changed(site / page.where, own_page(page, docs))
    write_if_changed(site / "index.html", index_page(pages, own, ctx.shown, classes))
    docs.write_pages()
    removed = _prune(
        site,
        [
            site / "index.html",
            *(site / name for _, name, _, _ in pages),
            *(site / page.where for page in own),
            *(site / where for where in docs.pages.values()),
        ],
    )
    return sorted([path for path, data in _files(site).items() if before.get(path) != data] + removed)


def _prune(site: Path, pages: list[Path]) -> list[Path]:
    """Remove every file under ``site`` that is neither one of this build's ``pages`` nor the
    stylesheet nor linked from one of them (left by an earlier build), and the folders that leaves
    empty; the files removed."""
    kept = {site / STYLESHEET, *pages}
    for page in set(pages):
        for target in re.findall(r'(?:src|href)="([^"#]+)"', page.read_text(encoding="utf-8")):
            kept.add(page.parent / unquote(target))
    kept = {p.resolve() for p in kept}
    removed = [p for p in sorted(site.rglob("*")) if p.is_file() and p.resolve() not in kept]
    for path in removed:
        path.unlink()
    for folder in sorted((d for d in site.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()
    return removed
