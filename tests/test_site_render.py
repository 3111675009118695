"""The site's Markdown rendering and its write-once rules, without a browser or a store: tables
as HTML tables in their own scrolling box, emphasis rendered, links to Markdown mapped to the
rendered pages, each image once a page, an unchanged file never rewritten; and the faults a
reader would meet (``site_faults``) absent from the pages rendered from the committed files."""

from __future__ import annotations

import re
import shutil

from site_faults import faults

from afr_cli.catalogue.knowledge import PROJECT_DIR, paper
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import slug, to_html
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.publish.site import paper_page
from afr_cli.publish.site_docs import Documents
from afr_cli.publish.site_page import TOC_BUDGET


def test_a_markdown_table_becomes_an_html_table_in_a_scrolling_box():
    out = to_html("| model | R² |\n|---|---:|\n| **rf** | 0.443 ± 0.074 |\n")
    assert '<div class="scroll"><table>' in out and "</table></div>" in out
    assert "<td><strong>rf</strong></td>" in out and '<td class="num">0.443 ± 0.074</td>' in out
    assert "|" not in out and "**" not in out and " style=" not in out  # the stylesheet aligns, no inline style


def test_links_are_mapped_and_a_link_to_a_file_the_site_lacks_keeps_only_its_text():
    def href(target: str, image: bool) -> str | None:
        return None if target.endswith(".py") else target.replace(".md", ".html")

    out = to_html("See [the config](config.md#datasets) and [the code](../afr_cli/x.py); ![a](x.md)", href)
    assert '<a href="config.html#datasets">the config</a>' in out
    assert "the code" in out and "x.py" not in out and out.count("<a ") == 1


def test_headings_carry_githubs_anchors():
    assert slug("Preprocessing: what the baselines say") == "preprocessing-what-the-baselines-say"
    assert '<h2 id="shared-work-cpu-recorded">' in to_html("## Shared work, CPU recorded\n")


def test_the_docs_links_between_them_land_on_rendered_pages(tmp_path):
    docs = Documents(ReportContext(tmp_path / "results"), tmp_path / "site")
    assert docs.page_of(PROJECT_DIR / "docs" / "cli.md") == "docs/cli.html"
    assert docs.page_of(PROJECT_DIR / "README.md") == "readme.html"
    page = docs.render(
        PROJECT_DIR / "docs" / "README.md",
        "docs/README.html",
        set(),
        "[config](config.md#datasets), [readme](../README.md#commands), [code](../afr_cli/cli.py)",
    )
    assert 'href="config.html#datasets"' in page and 'href="../readme.html#commands"' in page
    assert "cli.py" not in page


def test_a_figure_shown_by_a_report_and_by_the_papers_outputs_appears_once(tmp_path):
    root = tmp_path / "results"
    figures = root / "satrf" / "figures"
    figures.mkdir(parents=True)
    shutil.copy(PROJECT_DIR / "results" / "satrf" / "figures" / "Sparse.png", figures)
    page = paper_page(paper("satrf"), [], ReportContext(root), tmp_path / "site")
    assert page.count('src="satrf/figures/Sparse.png"') == 1
    assert (tmp_path / "site" / "satrf" / "figures" / "Sparse.png").is_file()


def test_an_unchanged_file_is_not_rewritten(tmp_path):
    path = tmp_path / "a" / "page.html"
    assert write_if_changed(path, "<p>x</p>") and path.read_text() == "<p>x</p>"
    stamp = path.stat().st_mtime_ns
    assert not write_if_changed(path, "<p>x</p>") and path.stat().st_mtime_ns == stamp
    assert write_if_changed(path, b"<p>y</p>") and path.read_bytes() == b"<p>y</p>"


def test_a_file_no_page_shows_any_more_is_removed_from_the_site(tmp_path):
    from afr_cli.publish.site import SITE, write_site

    root = tmp_path / "results"
    stale = root / SITE / "satrf" / "friedman.md"  # an earlier build copied it; no page links it now
    stale.parent.mkdir(parents=True)
    stale.write_text("# old\n")
    written = write_site(root)
    assert not stale.exists() and not stale.parent.exists() and stale in written
    assert (root / SITE / "docs" / "cli.html").is_file() and (root / SITE / "index.html") in written
    assert write_site(root) == []  # built again, nothing changed: nothing written


def test_a_long_page_gets_a_table_of_contents_from_its_headings_and_a_short_one_none():
    from afr_cli.publish.site_page import TOC_BUDGET, page_html

    rows = "".join(f"<tr><td>{i}</td></tr>" for i in range(TOC_BUDGET))
    long = page_html("t", ["<h1>T</h1>", "<h2>First part</h2>", f"<table>{rows}</table>", "<h3>A detail</h3><p>x</p>"])
    toc = re.search(r'<nav class="toc">.*?</nav>', long, re.S).group(0)
    assert '<a href="#first-part">First part</a><ul><li><a href="#a-detail">A detail</a></li></ul>' in toc
    assert long.index("</h1>") < long.index('class="toc"') < long.index('<h2 id="first-part">')
    assert faults(long) == []
    short = page_html("t", ["<h1>T</h1><p>What it is.</p>", "<h2>One</h2><p>x</p>", "<h2>Two</h2><p>y</p>"])
    assert 'class="toc"' not in short and faults(short) == []


def test_the_site_checks_catch_each_fault_a_reader_would_meet():
    ledger = "<table><tr><th>claim</th><th>verdict</th></tr><tr><td>t1</td><td>partly</td></tr></table>"
    assert faults(ledger + "<p>x</p>" + ledger) == ["the claims ledger is shown 2 times"]
    bullets = "<ul><li><strong>partly</strong> (Table 3): a</li><li><strong>does not</strong> (Table 4): b</li></ul>"
    assert faults(ledger + bullets) == ["the claims are listed twice: as the ledger and as bullets"]
    assert faults('<img src="a.png">')[0].startswith("an image without alt text")
    assert "a file name" in faults('<img src="a.png" alt="boston_RF-msl1_eta0.5.png">')[0]
    assert "caption in words" in faults('<figure><img src="a.png" alt="RMSE on Boston, by fraction"></figure>')[0]
    assert faults("<h2>A</h2>\n<h3>B</h3><p>x</p>") == ["two headings with nothing between them: 'A', 'B'"]
    assert faults("<p>The fix of issue 23 and session 15.</p><!-- issue 9 -->") == [
        "an internal ticket reference in the text: 'issue 23'",
        "an internal ticket reference in the text: 'session 15'",
    ]
    long = "<h2>A</h2><p>x</p><h2>B</h2>" + "<p>y</p>" * (TOC_BUDGET + 1)
    assert "no table of contents" in faults(long)[0]


def test_the_docs_and_readmes_render_without_a_fault_a_reader_would_meet(tmp_path):
    """Every page of the docs, the README and the results' READMEs, rendered as the site renders them."""
    docs = Documents(ReportContext(PROJECT_DIR / "results"), tmp_path / "site")
    docs.write_pages()
    found = {
        page.relative_to(tmp_path / "site").as_posix(): faults(page.read_text())
        for page in (tmp_path / "site").rglob("*.html")
    }
    assert len(found) > 15 and {name: f for name, f in found.items() if f} == {}


def test_a_paper_page_shows_its_claims_once_its_tables_once_and_figures_in_words(tmp_path):
    """The SAT-RF page from the committed stores: LARF's tables its eps-ABRF report also fills are
    linked to the LARF page, not shown again; page.md's own listing of the claims is left out (the
    ledger section shows them); figures are captioned in words; nothing a reader meets is a fault."""
    from afr_cli.publish.claims.ledger import judge_paper

    ctx = ReportContext(PROJECT_DIR / "results")
    satrf = paper("satrf")
    page = paper_page(satrf, judge_paper(satrf, ctx), ctx, tmp_path / "site")
    assert faults(page) == []
    assert 'data-spec="larf:10"' not in page and 'data-spec="satrf:9"' in page
    assert 'href="larf.html#paper-tables"' in page
    assert page.count('id="claims-ledger"') == 1 and page.index('id="claims-ledger"') < page.index('id="write-up"')
    assert "Sparse.png" in page and "over a grid of two parameters on Sparse" in page


def test_captions_and_extra_tables_are_named_in_words_from_the_commands_that_draw_them():
    from afr_cli.figures.captions import figure_caption, table_title

    curve = figure_caption(
        ["afr", "plot", "curve", "--results", "{root}/robust_rf_boston", "--dataset", "Boston", "--base", "RF-msl1"]
        + ["--noise-eta", "0.5", "--model", "rf", "--model", "robust-rf-a0.2", "--out", "boston_RF-msl1_eta0.5.png"]
    )
    assert curve.startswith("RMSE against the training fraction on Boston, base forest RF with min_samples_leaf = 1")
    assert "noise of level η = 0.5" in curve and "rf and robust-rf-a0.2" in curve and ".png" not in curve
    title = table_title(
        [["table", "--results", "{root}/robust_rf_boston", "--paper", "robust_rf:I", "--selection", "best-test"]]
    )
    assert title == "Table I of the paper beside ours from robust_rf_boston (the best grid point on the test set)"
    compare = [["table", "--results", "{root}/dm_soft", "--compare", "forest", "dm-soft"]]
    assert table_title(compare) == "dm-soft against forest on dm_soft"
