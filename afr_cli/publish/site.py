"""``afr report --html``: a static site under ``results/site/`` that stands alone.

``index.html`` shows every paper's agreement (its table cells as printed / within tolerance /
miss, on the paper's own repetitions) and its claim verdicts at a glance, as stacked bars drawn
in inline SVG, with the counts in a table beside; one page per paper the loader returns holds
the claims ledger with its verdicts, every published table of the paper's reports with ours beside
each cell, coloured by the agreement rule, the figures under ``results/<report>/figures/`` and the
Friedman / Nemenyi critical-difference diagrams. Every image and file a page links to is copied
inside ``site/`` (``site/<report>/...``), so the folder can be copied or published on its own.
Every page links the one stylesheet ``site/site.css``. A small inline script counts images that
failed to load into ``<body data-broken-images>`` and says whether the stylesheet applied in
``<body data-styled>``, so a browser test can see a broken page.
"""

from __future__ import annotations

import html
import re
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd

from afr_cli.papers.knowledge import Paper, Report, param_rows, papers
from afr_cli.publish.claims.judge import VERDICTS, describe_test
from afr_cli.publish.claims.ledger import judge_paper, verdict_counts
from afr_cli.publish.frames import report_frames
from afr_cli.tables.agreement import RULE, agreement
from afr_cli.tables.format import METRIC_NAMES, METRICS, format_param, format_value
from afr_cli.tables.paper_compare import paper_comparison, printed_cells

SITE = "site"
VERDICT_CLASS = {v: f"v{i}" for i, v in enumerate(VERDICTS)}
AGREEMENT_CLASS = {"as printed": "printed", "within tol": "tol", "miss": "miss", "n/a": "na"}
COLOUR = {"printed": "#5cb85c", "tol": "#f0c419", "miss": "#d9534f", "na": "#bbbbbb",
          "v0": "#5cb85c", "v1": "#f0c419", "v2": "#d9534f", "v3": "#9b7fd1", "v4": "#bbbbbb",
          "v5": "#7fb3d5"}
STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 80em; color: #222; }
table { border-collapse: collapse; margin: 0.6em 0 1.4em; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.45em; text-align: left; vertical-align: top; }
th { background: #eee; }
.printed { background: #b9e6b9; } .tol { background: #fbeeb0; } .miss { background: #f4b6b6; }
.na { background: #e4e4e4; color: #666; }
.v0 { background: #b9e6b9; } .v1 { background: #fbeeb0; } .v2 { background: #f4b6b6; }
.v3 { background: #d9c8ef; } .v4 { background: #e4e4e4; } .v5 { background: #cfe2f0; }
span.legend { padding: 0.1em 0.5em; margin-right: 0.5em; border: 1px solid #bbb; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.3em 0; }
blockquote { margin: 0.2em 0 0.2em 1em; color: #444; font-style: italic; }
pre { font-size: 0.8em; background: #f7f7f7; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto; }
svg.glance .bar-label { font: 12px sans-serif; } svg.glance .bar-count { font: bold 11px sans-serif; fill: #111; }
svg.glance .paper { font: bold 13px sans-serif; }
"""
STYLESHEET = "site.css"  # STYLE, written once beside the pages, each linking to it
BROKEN_IMAGE_CHECK = (
    "<script>window.addEventListener('load', function () {"
    " var broken = Array.prototype.filter.call(document.images, function (i) {"
    " return !i.complete || i.naturalWidth === 0; }).length;"
    " document.body.setAttribute('data-broken-images', String(broken));"
    " document.body.setAttribute('data-styled', String(getComputedStyle(document.body).maxWidth !== 'none')); });"
    "</script>")


def _e(text) -> str:
    return html.escape(str(text))


def _page(title: str, body: list[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>{_e(title)}</title>", f'<link rel="stylesheet" href="{STYLESHEET}">', "</head>",
        '<body data-broken-images="unknown" data-styled="unknown">',
        *body, BROKEN_IMAGE_CHECK, "</body>", "</html>", ""])


def _copied(source: Path, root: Path, site: Path) -> str:
    """Copy ``source`` (a file under ``root``) to the same place under ``site``; the page's link to it."""
    rel = source.relative_to(root)
    target = site / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or target.read_bytes() != source.read_bytes():
        shutil.copyfile(source, target)
    return rel.as_posix()


def _ledger_html(verdicts) -> list[str]:
    rows = ["<table>", "<tr><th>claim</th><th>quote</th><th>test</th><th>paper</th><th>ours (every repetition)</th>"
            "<th>ours (paper's repetitions)</th><th>verdict</th></tr>"]
    for v in verdicts:
        rows.append(
            f'<tr id="claim-{_e(v.id)}"><td>{_e(v.id)}</td><td><blockquote>{_e(v.claim["quote"])}</blockquote></td>'
            f"<td>{_e(describe_test(v.claim))}</td><td>{_e(v.paper.text if v.paper else '')}</td>"
            f"<td>{_e(v.ours.text if v.ours else '')}{_e(f' [{v.reps} reps]' if v.reps else '')}</td>"
            f"<td>{_e(v.ours_paper_reps.text if v.ours_paper_reps else '')}</td>"
            f'<td class="{VERDICT_CLASS[v.verdict]}">{_e(v.verdict)}</td></tr>')
    return rows + ["</table>"]


def _table_html(results: pd.DataFrame, spec: str, kinds: Counter) -> list[str]:
    """One published table as rows of datasets and a cell 'ours / paper' per column and metric,
    coloured by the agreement rule; each cell's kind is counted into ``kinds``."""
    comparison = paper_comparison(results, spec)
    printed = printed_cells(spec)
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
        out.append(f'<table class="paper-table" data-spec="{_e(spec)}" data-metric="{_e(metric)}">')
        out.append(f"<caption>{_e(spec)}, {_e(name)}: ours / paper</caption>")
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
                kind = agreement(cell["ours"], shown, metric, is_param=is_param)
                kinds[kind] += 1
                ours = ("n/a" if pd.isna(cell["ours"]) else
                        format_param(cell["ours"]) if is_param else format_value(cell["ours"], metric))
                row.append(f'<td class="{AGREEMENT_CLASS[kind]}" title="{_e(kind)}">{_e(ours)} / {_e(shown)}</td>')
            out.append("<tr>" + "".join(row) + "</tr>")
        out.append("</table>")
    return out


def _report_sections(report: Report, paper: Paper, root: Path, site: Path, kinds: Counter) -> list[str]:
    results = report_frames(report, root, paper.reps)
    stores = ", ".join(f"<code>results/{_e(s)}</code>" for s in report.stores)
    out = [f"<h3>Report {_e(report.name)}</h3>"]
    if results is None:
        out.append(f"<p>No store of this report yet: {stores}.</p>")
    else:
        out.append(f"<p>Stores: {stores}; cells on repetitions 0-{paper.reps - 1}, the paper's own splits.</p>")
        for spec in report.papers:
            out += _table_html(results, spec, kinds)
    folder = root / report.name
    figures = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
    if figures:
        out.append("<h4>Figures</h4>")
        out += [f'<figure><img src="{_e(_copied(f, root, site))}" alt="{_e(f.stem)}"><figcaption>{_e(f.name)}</figcaption></figure>'
                for f in figures]
    diagrams = sorted(folder.glob("cd-*.svg"))
    if diagrams:
        out.append(f'<h4>Friedman test and Nemenyi critical differences '
                   f'(<a href="{_e(_copied(folder / "friedman.md", root, site))}">friedman.md</a>, every repetition)</h4>')
        out += [f'<img class="cd" src="{_e(_copied(d, root, site))}" alt="{_e(d.stem)}">' for d in diagrams]
    return out


def paper_page(paper: Paper, verdicts, root: Path, site: Path, kinds: Counter | None = None) -> str:
    """One paper's HTML page: its claims ledger and each of its tables with ours beside it (the
    tables' agreement kinds counted into ``kinds``; the images it shows copied into ``site``)."""
    kinds = Counter() if kinds is None else kinds
    body = ['<p><a href="index.html">all papers</a></p>', f"<h1>{_e(paper.title)}</h1>", "<h2>Claims ledger</h2>"]
    if verdicts:
        body += [f"<p>{_e(verdict_counts(verdicts))}.</p>", *_ledger_html(verdicts)]
    else:
        body.append(f"<p>None: the paper's data file (<code>{_e(paper.data_file)}</code>) records no claim "
                    "about results of its own.</p>")
    if any(report.papers for report in paper.reports):
        body += ["<h2>The paper's tables, ours beside them</h2>",
                 "<p>" + "".join(f'<span class="legend {c}">{_e(k)}</span>' for k, c in AGREEMENT_CLASS.items())
                 + f"</p><p>{_e(RULE)}.</p>"]
        for report in paper.reports:
            body += _report_sections(report, paper, root, site, kinds)
    body += _output_sections(paper, root, site)
    return _page(paper.title, body)


def _output_sections(paper: Paper, root: Path, site: Path) -> list[str]:
    """The tables and figures the paper's ``outputs`` drew under ``root`` (``afr reproduce``),
    each text shown as written (Markdown tables read well as preformatted text), each image copied."""
    shown = []
    for output in paper.outputs:
        target = output.stdout or next((c[c.index("--out") + 1] for c in output.commands if "--out" in c), None)
        if target is None:
            continue
        path = Path(target.replace("{root}", str(root)))
        if not path.is_file():
            continue
        label = _e(output.label or path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name)
        if path.suffix == ".png":
            shown.append(f'<figure><img src="{_e(_copied(path, root, site))}" alt="{label}">'
                         f"<figcaption>{label}</figcaption></figure>")
        else:
            shown.append(f"<h3>{label}</h3><pre>{_e(path.read_text(encoding='utf-8'))}</pre>")
    if not paper.outputs:
        return []
    head = "<h2>Drawn after the experiments (<code>afr reproduce " + _e(paper.id) + "</code>)</h2>"
    return [head, *(shown or ["<p>Nothing drawn yet under this results root.</p>"])]


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
        out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="18" fill="{COLOUR[css]}">'
                   f"<title>{_e(f'{n} {name}')}</title></rect>")
        if w >= 18:
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + 13}" text-anchor="middle" class="bar-count">{n}</text>')
        x += w
    return out


def glance_chart(rows: list[tuple[Paper, Counter, Counter]]) -> str:
    """Inline SVG: per paper, a stacked bar of its table cells by agreement kind and one of its
    claims by verdict, each scaled to its own total (the counts are printed in the segments)."""
    height = 16 + 64 * len(rows) + 40
    out = [f'<svg class="glance" xmlns="http://www.w3.org/2000/svg" width="680" height="{height}" '
           f'viewBox="0 0 680 {height}" role="img" aria-label="agreement and claim verdicts per paper">']
    y = 14
    for paper, kinds, verdicts in rows:
        out.append(f'<text x="0" y="{y}" class="paper">{_e(paper.id)}</text>')
        out += _bar(y + 6, "table cells", [(k, kinds[k], c) for k, c in AGREEMENT_CLASS.items() if k != "n/a"])
        out += _bar(y + 28, "claims", [(v, verdicts[v], VERDICT_CLASS[v]) for v in VERDICTS])
        y += 64
    legend = [(k, c) for k, c in AGREEMENT_CLASS.items() if k != "n/a"] + [(v, VERDICT_CLASS[v]) for v in VERDICTS]
    x = 0
    for row, chunk in enumerate((legend[:3], legend[3:])):
        x = 0
        for name, css in chunk:
            out.append(f'<rect x="{x}" y="{y + row * 18}" width="12" height="12" fill="{COLOUR[css]}"></rect>'
                       f'<text x="{x + 16}" y="{y + row * 18 + 10}" class="bar-label">{_e(name)}</text>')
            x += 26 + int(5.6 * len(name))
    return "\n".join(out + ["</svg>"])


def index_page(pages: list[tuple[Paper, str, Counter, Counter]]) -> str:
    """The site's landing page: the chart, then one row per paper with its counts."""
    rows = [f'<tr><td><a href="{_e(href)}">{_e(p.title)}</a></td>'
            + "".join(f"<td>{kinds[k]}</td>" for k in AGREEMENT_CLASS if k != "n/a")
            + "".join(f"<td>{verdicts[v]}</td>" for v in VERDICTS) + "</tr>"
            for p, href, kinds, verdicts in pages]
    heads = "".join(f'<th class="{c}">{_e(k)}</th>' for k, c in AGREEMENT_CLASS.items() if k != "n/a")
    heads += "".join(f'<th class="{VERDICT_CLASS[v]}">{_e(v)}</th>' for v in VERDICTS)
    return _page("afr: the papers reproduced", [
        "<h1>afr: the papers reproduced</h1>",
        "<p>One page per paper: its claims with computed verdicts, its tables with ours beside every "
        "cell, the figures and the critical-difference diagrams. Written by <code>afr report --html</code>.</p>",
        "<h2>At a glance</h2>",
        f"<p>Table cells: ours against the printed number on the paper's own repetitions ({_e(RULE)}); "
        "claims: the verdicts of the claims ledger.</p>",
        glance_chart([(p, kinds, verdicts) for p, _, kinds, verdicts in pages]),
        '<table class="glance-counts"><tr><th rowspan="2">paper</th><th colspan="3">table cells</th>'
        f'<th colspan="{len(VERDICTS)}">claims</th></tr>', f"<tr>{heads}</tr>", *rows, "</table>"])


def write_site(root: Path) -> list[Path]:
    """results/site/index.html, one page per paper the loader returns, and the images and files
    they show, copied inside site/; returns the pages and the files they link to."""
    site = root / SITE
    site.mkdir(parents=True, exist_ok=True)
    stylesheet = site / STYLESHEET
    stylesheet.write_text(STYLE.lstrip(), encoding="utf-8")
    written, pages = [], []
    for paper in papers():
        verdicts = judge_paper(paper, root)
        kinds: Counter = Counter()
        path = site / f"{paper.id}.html"
        path.write_text(paper_page(paper, verdicts, root, site, kinds), encoding="utf-8")
        written.append(path)
        pages.append((paper, path.name, kinds, Counter(v.verdict for v in verdicts)))
    index = site / "index.html"
    index.write_text(index_page(pages), encoding="utf-8")
    linked = sorted({site / target for page in written for target in
                     re.findall(r'(?:src|href)="([^"#]+)"', page.read_text(encoding="utf-8"))
                     if not target.endswith(".html")} | {stylesheet})
    return [index, *written, *linked]
