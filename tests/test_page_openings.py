"""Every paper's page opens with what the paper proposes, then its verdict summary, then its
tables and figures: in ``page.md`` the text before the first section is the idea alone
(prose, two or three sentences; no list, table, code or generated block), and on the site page that
idea is the first paragraph under the title, followed by the claims' verdict counts, before any
table, figure or section."""

from __future__ import annotations

import re

import pytest

from afr_cli.catalogue.knowledge import papers
from afr_cli.publish.claims.ledger import judge_paper
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import to_html
from afr_cli.publish.site import paper_page

PAPERS = [p for p in papers() if p.page is not None]


def _opening(text: str) -> list[str]:
    """The paragraphs between a page's title line and its first ``## `` section."""
    head = re.sub(r"\A# [^\n]*\n", "", text).partition("\n## ")[0]
    return [p.strip() for p in head.strip().split("\n\n") if p.strip()]


def _sentences(paragraph: str) -> int:
    return len(re.findall(r"[.!?](?=\s|$)", paragraph))


@pytest.mark.parametrize("paper", PAPERS, ids=[p.id for p in PAPERS])
def test_the_page_md_opens_with_the_papers_idea_alone(paper):
    paragraphs = _opening(paper.page.read_text(encoding="utf-8"))
    assert paragraphs, f"{paper.id}: nothing between the title and the first section"
    idea = paragraphs[0]
    assert 2 <= _sentences(idea) <= 3, f"{paper.id}: the idea takes two or three sentences: {idea[:80]!r}"
    assert "proposal" in idea or "proposes" in idea, (
        f"{paper.id}: the first paragraph does not say what the paper proposes"
    )
    for paragraph in paragraphs:  # prose only: the stores, tables and lists belong to the sections below
        assert not re.search(r"^\s*(?:[-*] |\||```|<!--|\*\*)", paragraph, re.M), f"{paper.id}: {paragraph[:60]!r}"


@pytest.mark.parametrize("paper", PAPERS, ids=[p.id for p in PAPERS])
def test_the_site_page_shows_the_idea_then_the_verdicts_then_the_tables(paper, tmp_path):
    root = tmp_path / "results"  # no store: every claim 'not run', the tables say no store yet
    root.mkdir()
    ctx = ReportContext(root)
    verdicts = judge_paper(paper, ctx)
    page = paper_page(paper, verdicts, ctx, tmp_path / "site")
    body = page.split("</h1>", 1)[1]
    idea = to_html(_opening(paper.page.read_text(encoding="utf-8"))[0]).strip()
    assert body.lstrip().startswith(idea), f"{paper.id}: the page does not open with the paper's idea"
    after = body.lstrip()[len(idea) :]
    first_block = min(
        (m.start() for m in re.finditer(r"<(?:table|img|pre|h2|ul|ol|figure)\b", after)), default=len(after)
    )
    if verdicts:
        verdict_line = after.find('<p class="verdicts">')
        assert 0 <= verdict_line < first_block, f"{paper.id}: the verdict summary is not next, before the tables"
    else:  # no claim of its own: the opening says so in prose, still before any table
        assert re.match(r"\s*(?:<p>[^<]*(?:<(?:code|em|strong|i)>[^<]*</(?:code|em|strong|i)>[^<]*)*</p>\s*)+", after)
        assert "no claim" in after[:first_block], f"{paper.id}: a page without claims says so up front"
