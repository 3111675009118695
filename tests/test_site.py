"""``afr report --html``: the static site, loaded in a real (headless) Chromium as a user would,
held to what a reader must not meet (``site_faults``) and to a table of contents on a page taller
than two screens."""

from __future__ import annotations

import re
import shutil
import subprocess
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml
from conftest import run_afr
from site_faults import faults

from afr_cli.catalogue.knowledge import papers

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


pytestmark = pytest.mark.slow  # every test here uses a site made by a real `afr run` and `afr report`


OWN_MODELS = ["rf", "softmax", "eps-abrf", "em-w-larf"]


def own_experiment(root: Path) -> Path:
    """A researcher's own experiment under ``root``: two CSV files of their own (a text column left
    out, rows with a missing value dropped), 4 models, 2 repetitions of a few trees; its config."""
    import numpy as np
    import pandas as pd

    data = root.parent / "own-data"
    data.mkdir(exist_ok=True)
    entries = []
    for k, name in enumerate(("Lab", "Field")):
        rng = np.random.default_rng(k)
        x = rng.normal(size=(40, 3))
        frame = pd.DataFrame(x, columns=["a", "b", "c"]).assign(
            site=rng.choice(["north", "south"], 40), y=2 * x[:, 0] + np.sin(x[:, 1]) + rng.normal(0, 0.3, 40)
        )
        frame.loc[3, "b"] = np.nan
        frame.to_csv(data / f"{name.lower()}.csv", index=False)
        entries.append(
            {
                "name": name,
                "file": str(data / f"{name.lower()}.csv"),
                "target": "y",
                "drop": ["site"],
                "missing": "drop-rows",
            }
        )
    cfg = {
        "name": "mine",
        "description": "four models on two files of my own",
        "seed": 1,
        "protocol": {"reps": 2, "inner_folds": 2},
        "datasets": entries,
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "softmax", "family": "eps-abrf", "params": {"eps": 0.0}},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}},
            {"id": "em-w-larf", "family": "em-w-larf", "grid": {"M": [1, 3]}},
        ],
    }
    config = root.parent / "mine.yaml"
    config.write_text(yaml.safe_dump(cfg))
    return config


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A tiny abrf_rf store (3 datasets, 2 repetitions), a researcher's own experiment beside it
    (own_experiment), the reports and the site over both."""
    root = tmp_path_factory.mktemp("results")
    cfg = {
        "name": "abrf_rf",
        "seed": 3,
        "protocol": {"reps": 2},
        "datasets": ["Sparse", "Friedman1", "Friedman2"],
        "bases": [{"id": "RF", "kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "rf", "family": "forest"},
            {"id": "softmax", "family": "eps-abrf", "params": {"eps": 0.0}},
            {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0]}},
        ],
    }
    config = root / "abrf_rf.yaml"
    config.write_text(yaml.safe_dump(cfg))
    assert run_afr("run", str(config), "--out", str(root / "abrf_rf"), "-q", "--jobs", "1").returncode == 0
    proc = run_afr("run", str(own_experiment(root)), "--out", str(root / "mine"), "-q", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    figures = root / "satrf" / "figures"
    figures.mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[1] / "results" / "satrf" / "figures" / "Sparse.png", figures)
    proc = run_afr("report", "--root", str(root), "--html")
    assert proc.returncode == 0, proc.stderr
    return root / "site"


def test_site_pages_exist_with_tables_ledger_and_links_that_resolve(site):
    pages = sorted(p.name for p in site.glob("*.html"))
    # one per paper and one per experiment of the root
    assert pages == sorted(["index.html", "readme.html", "experiment-mine.html", *(f"{p.id}.html" for p in papers())])
    for doc in ("tutorial-own-family", "datasets", "config", "cli", "errors", "README"):  # the docs, rendered
        assert (site / "docs" / f"{doc}.html").is_file(), doc
    assert "dm.html" in pages  # the Decision Machines have a folder, so a page
    satrf = (site / "satrf.html").read_text()
    # Table 9's eps-ABRF column beside ours, coloured by the agreement rule, and the ledger
    assert 'data-spec="satrf:9"' in satrf and re.search(r'<td class="(printed|tol|miss)" title=', satrf)
    assert 'id="claim-t9-beats-eps-abrf-rf"' in satrf and "not run" in satrf
    assert '<img src="satrf/figures/Sparse.png"' in satrf  # copied inside site/: the folder stands alone
    for page in site.rglob("*.html"):
        for target in re.findall(r'(?:src|href)="([^"#]+)"', page.read_text()):
            assert not re.match(r"[a-z]+:", target), f"{page.name}: non-relative link {target}"
            assert (page.parent / unquote(target)).exists(), f"{page.name}: {target} does not exist"
            assert not target.endswith(".md"), f"{page.name}: {target} links raw Markdown, not its rendered page"


def test_site_is_deterministic_and_an_unchanged_build_writes_nothing(site):
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()}
    proc = run_afr("report", "--root", str(site.parent), "--site-only")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"nothing changed: every file afr report writes from {site.parent} is current (none written)"
    ]
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()} == before


def test_every_page_links_the_one_stylesheet_and_inlines_none(site):
    from afr_cli.publish.site import STYLE

    assert (site / "site.css").read_text() == STYLE.lstrip()
    for page in site.rglob("*.html"):
        text = page.read_text()
        href = "../" * (len(page.relative_to(site).parts) - 1) + "site.css"
        assert text.count(f'<link rel="stylesheet" href="{href}">') == 1, page.name
        assert "<style" not in text and " style=" not in text, page.name


@pytest.mark.skipif(
    BROWSER is None, reason="no Chromium installed (apt-get install chromium): the browser test needs one"
)
def test_every_page_loads_in_a_browser_with_no_broken_resource(site, tmp_path):
    elsewhere = tmp_path / "copied" / "site"  # the folder stands alone: a copy of it loads whole
    shutil.copytree(site, elsewhere)
    pages = sorted(elsewhere.rglob("*.html"))
    assert len(pages) > len(papers()) + 10  # the papers' pages, the docs and the results' pages
    for page in pages:
        name = page.relative_to(elsewhere).as_posix()
        proc = subprocess.run(
            [
                BROWSER,
                *FLAGS,
                "--window-size=1280,900",
                f"--user-data-dir={tmp_path / 'profile'}",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        dom = proc.stdout
        # the page's own load-time check: every <img> decoded (a missing SVG or PNG counts)
        assert 'data-broken-images="0"' in dom, f"{name}: {re.search(r'data-broken-images=[^ >]*', dom)}"
        assert 'data-styled="true"' in dom, f"{name}: site.css did not apply"
        # nothing wider than the window: a wide table scrolls inside its own box
        assert 'data-overflow="0"' in dom, f"{name}: {re.search(r'data-overflow=[^ >]*', dom)}"
        # no Markdown left in the text a reader sees (code aside): no **bold**, no |---| table rule
        assert 'data-markdown-left=""' in dom, f"{name}: {re.search(r'data-markdown-left=[^>]*', dom)}"
        # what a reader must not meet: a claims listing twice, an image without words, a ticket number
        assert faults(dom) == [], f"{name}: {faults(dom)}"
        # a page taller than two screens with sections to jump to has a table of contents
        height = int(re.search(r'data-height="(\d+)"', dom).group(1))
        sections = len(re.findall(r"<h[23]\b", dom))
        assert height <= 2 * 900 or sections < 2 or 'data-toc="true"' in dom, f"{name}: {height} px, no contents"
        srcs = re.findall(r'<img[^>]* src="([^"]+)"', dom)
        assert len(srcs) == len(set(srcs)), f"{name}: an image shown twice"
        if name == "satrf.html":
            # Table 9 here; LARF's tables the same report fills are linked to the LARF page, not shown again
            assert dom.count('class="paper-table"') >= 1 and "Sparse.png" in dom
            assert 'href="larf.html#paper-tables"' in dom
        if name == "experiment-mine.html":  # the researcher's own experiment: its diagram decoded too
            assert re.search(r'<img[^>]* src="mine/cd-RF\.svg"', dom), name


def test_an_own_experiment_gets_its_summary_report_and_a_page_reachable_from_the_index(site):
    """`afr run` on a CSV of one's own, then `afr report --html`: the store's summary, its report
    and its page, linked from the index, with the scores and their intervals, the ranks and the
    Friedman test, the CD diagram, the answer for every pair and the hyperparameters chosen."""
    root = site.parent
    assert (root / "mine" / "summary.md").is_file() and (root / "mine" / "report.md").is_file()
    index = (site / "index.html").read_text()
    assert '<a href="experiment-mine.html">Experiment mine</a>: four models on two files of my own' in index
    page = (site / "experiment-mine.html").read_text()
    assert "holds 2 repetitions of 2 datasets on RF" in page  # what the root holds, from afr status
    for model in OWN_MODELS:
        assert f"<th>{model}</th>" in page or f'<th class="num">{model}</th>' in page, model
    assert re.search(r"<td>Lab</td>\s*<td class=\"num\">-?\d\.\d{3} \[-?\d\.\d{3}, -?\d\.\d{3}\]</td>", page)
    assert "Friedman χ² = " in page and "critical difference" in page and 'src="mine/cd-RF.svg"' in page
    pairs = re.findall(r"<li><code>([\w-]+)</code> against <code>([\w-]+)</code>: ", page)
    assert len(pairs) == 6 and len(set(map(frozenset, pairs))) == 6  # every pair of the 4 models, once
    assert "M = " in page and "eps = " in page  # the hyperparameters selected
    # how many repetitions each pair's answer needs: one row per pair, where its verdict settles
    assert "How many repetitions each answer needs" in page
    assert len(re.findall(r"<td>(?:settles at \d+|does not settle)</td>", page)) == 6
    from afr_cli.errors import AfrInputError
    from afr_cli.publish.context import ReportContext
    from afr_cli.reporting.build import chosen

    ctx = ReportContext(root)
    assert [e.name for e in chosen(ctx, ["mine"])[1]] == ["mine"]  # `afr report mine`: by its name, as a report's
    with pytest.raises(AfrInputError, match=r"'minee' is unknown; allowed: abrf, .*, mine \(the papers"):
        chosen(ctx, ["minee"])


def test_the_reproduction_pipeline_writes_an_own_experiments_page(site, tmp_path):
    """`afr reproduce mine.yaml --root DIR` ends in the build that writes the experiment's page."""
    from afr_cli.reproduction.pipeline import build_reports

    root = tmp_path / "elsewhere"
    shutil.copytree(site.parent / "mine", root / "mine", ignore=shutil.ignore_patterns("*.md", "*.svg", "*.csv"))
    written = build_reports(root, html=False)  # the site over it is `afr report --html`'s, tested above
    assert root / "mine" / "report.md" in written and root / "mine" / "summary.md" in written
    assert (root / "mine" / "report.md").read_text() == (site.parent / "mine" / "report.md").read_text().replace(
        str(site.parent), str(root)
    )


def test_every_verdict_has_a_colour_on_the_site():
    """A verdict added to the judge must get its colour (the landing chart and the ledger's cells)."""
    from afr_cli.publish.claims.judge import VERDICTS
    from afr_cli.publish.site import COLOUR, STYLE, VERDICT_CLASS

    for verdict in VERDICTS:
        css = VERDICT_CLASS[verdict]
        assert css in COLOUR and f".{css} {{" in STYLE, verdict


def test_a_paper_without_claims_or_tables_shows_what_its_outputs_drew(tmp_path):
    """The Decision Machines print no table and make no claim of results: their page says so and
    shows the summary and comparisons `afr reproduce dm` drew, not an empty ledger and table."""
    from afr_cli.catalogue.knowledge import paper
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.site import paper_page

    root = tmp_path / "results"
    (root / "dm_soft").mkdir(parents=True)
    (root / "dm_soft" / "compare.md").write_text(
        "| dataset | forest | dm-soft |\n|---|---|---|\n| Wine | 0.41 | 0.42 |\n"
    )
    page = paper_page(paper("dm"), [], ReportContext(root), tmp_path / "site")
    assert "records no claim" in page and 'class="paper-table"' not in page
    assert "<td>Wine</td>\n<td>0.41</td>\n<td>0.42</td>" in page  # an HTML table, not Markdown in <pre>
    assert "| Wine |" not in page and "<pre>| dataset" not in page


@pytest.mark.skipif(
    BROWSER is None, reason="no Chromium installed (apt-get install chromium): the browser test needs one"
)
def test_a_table_longer_than_a_screen_sorts_by_a_click_on_its_heading(tmp_path):
    """More than SORTABLE_ROWS rows: a click on a heading sorts by that column, numbers as numbers."""
    from afr_cli.publish.markdown import to_html
    from afr_cli.publish.site import STYLE
    from afr_cli.publish.site_page import SORTABLE_ROWS, page_html

    n = SORTABLE_ROWS + 5
    value = {i: (i * 7 + 3) % n + 0.5 for i in range(n)}  # not in order; 10.5 before 2.5 as text
    rows = "".join(f"| d{i} | {value[i]} |\n" for i in range(n))
    click = (
        "<script>window.addEventListener('load', function () { var th = document.querySelectorAll('th')[1];"
        " th.click(); document.body.setAttribute('data-first', Array.prototype.map.call("
        " document.querySelectorAll('tbody tr'), function (r) { return r.cells[0].textContent; }).slice(0, 3).join(' "
        "'));"
        " });</script>"
    )
    (tmp_path / "site.css").write_text(STYLE)
    page = tmp_path / "t.html"
    page.write_text(page_html("t", [to_html("| dataset | R² |\n|---|---:|\n" + rows), click], "t.html"))
    proc = subprocess.run(
        [BROWSER, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    first = " ".join(f"d{i}" for i in sorted(range(n), key=value.get)[:3])  # by number: 0.5, 1.5, 2.5
    assert 'class="sortable"' in proc.stdout and f'data-first="{first}"' in proc.stdout


# a number a reader would recognise as one result: thousands separated, or three decimals or more
# and three significant digits or more (``_numbers``)
RESULT_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+\.\d{3,}(?![\w.])")
SIGNIFICANT = 3


ANY_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?")  # a csv's commas separate


def _numbers(text: str, pattern: re.Pattern = RESULT_NUMBER, digits: int = SIGNIFICANT) -> set[Decimal]:
    """The numbers ``pattern`` finds in ``text`` with at least ``digits`` significant digits, by
    value (0.3800 is 0.38, 1,455 is 1455)."""
    found = set()
    for number in pattern.findall(text):
        plain = number.replace(",", "")
        if len(plain.replace(".", "").lstrip("0")) < digits:
            continue
        try:
            found.add(Decimal(plain).normalize())
        except InvalidOperation:
            continue
    return found


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", re.sub(r"<script>.*?</script>", "", html, flags=re.S))


def committed_numbers(paper, ctx) -> set[str]:
    """The result numbers of a paper's committed page that only its generated blocks state: the
    numbers in the blocks, less those its prose, its published tables and its data file state and
    those the claims ledger computes from the published tables alone (its "paper" column, judged
    on ``ctx``'s root)."""
    from afr_cli.publish.claims.ledger import judge_paper
    from afr_cli.publish.pages import blocks_in

    text = paper.page.read_text(encoding="utf-8")
    blocks = blocks_in(text)
    in_blocks = set().union(*(_numbers(body) for body in blocks.values()))
    prose = text
    for body in blocks.values():
        prose = prose.replace(body, "")
    elsewhere = "\n".join(
        p.read_text(encoding="utf-8") for p in paper.folder.iterdir() if p.suffix in (".csv", ".yaml")
    )
    elsewhere += "\n".join(v.paper.text for v in judge_paper(paper, ctx) if v.paper is not None)
    return in_blocks - _numbers(prose, ANY_NUMBER, 1) - _numbers(elsewhere, ANY_NUMBER, 1)


def built_numbers(paper, root: Path) -> set[Decimal]:
    """The numbers of the blocks ``afr report`` built from ``root``'s own stores (its copy of the
    paper's page, each block whose body differs from the committed one): that root's results,
    which may happen to equal a committed number."""
    from afr_cli.publish.pages import blocks_in

    copy = root / paper.id / paper.page.name
    if not copy.is_file():
        return set()
    committed = blocks_in(paper.page.read_text(encoding="utf-8"))
    built = blocks_in(copy.read_text(encoding="utf-8"))
    return set().union(*(_numbers(body) for name, body in built.items() if committed.get(name) != body))


def test_no_paper_page_on_another_root_states_a_number_of_the_committed_root(site, tmp_path):
    """Every paper's page built on an empty root and on a partial one (one small store of a paper
    and an experiment of one's own) states none of the numbers the committed page's generated
    blocks hold (which the committed site shows), and says where a block could not be built."""
    from afr_cli.publish.context import ReportContext
    from afr_cli.publish.site import SITE
    from afr_cli.reporting.build import write_all

    empty = tmp_path / "empty"
    empty.mkdir()
    write_all(empty, html=True)
    committed_site = Path(__file__).resolve().parents[1] / "results" / SITE
    for p in (p for p in papers() if p.page is not None):
        numbers = committed_numbers(p, ReportContext(empty))
        shown = _numbers(_text((committed_site / f"{p.id}.html").read_text(encoding="utf-8")))
        if p.id != "dm":  # the measure finds what it looks for: the committed site shows those numbers
            assert len(numbers & shown) >= 5, p.id
        for root in (empty, site.parent):
            page = _text((root / SITE / f"{p.id}.html").read_text(encoding="utf-8"))
            leaked = sorted(numbers & _numbers(page) - built_numbers(p, root))
            assert not leaked, f"{p.id} on {root.name}: states committed numbers {leaked[:10]}"
            assert "Not built from " in page and str(root) in page, p.id  # says which root lacks the block
            assert "1,118,400" not in page


def test_report_check_covers_an_own_experiments_report(site):
    """`afr report --check` regenerates the experiments' outputs too: an edited report.md is named."""
    report = site.parent / "mine" / "report.md"
    kept = report.read_text(encoding="utf-8")
    try:
        report.write_text(kept + "edited\n", encoding="utf-8")
        proc = run_afr("report", "--root", str(site.parent), "--check")
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert f"{report.as_posix()}: stale" in proc.stdout.splitlines(), proc.stdout
    finally:
        report.write_text(kept, encoding="utf-8")
