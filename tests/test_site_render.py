"""The site's Markdown rendering and its write-once rules, without a browser or a store: tables
as HTML tables in their own scrolling box, emphasis rendered, links to Markdown mapped to the
rendered pages, each image once a page, an unchanged file never rewritten."""

from __future__ import annotations

import shutil

from afr_cli.catalogue.knowledge import PROJECT_DIR, paper
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import slug, to_html
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.publish.site import paper_page
from afr_cli.publish.site_docs import Documents


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
