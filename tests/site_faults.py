"""What a reader of a rendered site page must not meet, read from its HTML alone (no browser), so the
same rules hold in the Chromium test and wherever Chromium is absent: a claims ledger shown twice,
a page over its length budget without a table of contents, an image without alt text or a figure
without a caption, two headings with nothing between them, and a reference to the project's own
tickets or working sessions in the text a reader sees."""

from __future__ import annotations

import re

from afr_cli.publish.claims.judge import VERDICTS
from afr_cli.publish.site_page import TOC_BUDGET, estimated_lines, text_of

TICKET = re.compile(r"\b(?:issue|session|ticket)s? #?\d+", re.I)  # "issue 23", "session 15", "issues 24"
_CLAIM_HEAD = re.compile(r"<tr>\s*<th>claim</th>", re.S)  # a ledger's header row, as the site or Markdown writes it
_VERDICT_ITEM = re.compile(  # a claim listed as a bullet: "<li><strong>partly</strong> (Table 3): ..."
    r"<li>\s*<strong>(?:" + "|".join(re.escape(v) for v in VERDICTS) + r")</strong> \("
)
_UNSEEN = re.compile(r"<(script|style)\b.*?</\1>|<!--.*?-->", re.S)


def visible_text(page: str) -> str:
    """The text of ``page`` a reader sees: scripts, styles and comments dropped, tags dropped."""
    return text_of(_UNSEEN.sub(" ", page))


def faults(page: str) -> list[str]:
    """Every rule ``page`` (a whole HTML page or a body fragment) breaks, one line each; [] when none."""
    out = []
    body = _UNSEEN.sub(" ", page)
    ledgers = len(_CLAIM_HEAD.findall(body))
    if ledgers > 1:
        out.append(f"the claims ledger is shown {ledgers} times")
    if ledgers and len(_VERDICT_ITEM.findall(body)) > 1:
        out.append("the claims are listed twice: as the ledger and as bullets")
    lines = estimated_lines(body)
    headings = len(re.findall(r"<h[23]\b", body))
    if lines > TOC_BUDGET and headings >= 2 and 'class="toc"' not in body:
        out.append(f"about {lines} lines long (budget {TOC_BUDGET}) with {headings} headings and no table of contents")
    for img in re.findall(r"<img\b[^>]*>", body):
        alt = re.search(r'\balt="([^"]*)"', img)
        if alt is None or not alt.group(1).strip():
            out.append(f"an image without alt text: {img[:120]}")
        elif re.fullmatch(r"[\w.-]+\.(?:png|svg|jpe?g)", alt.group(1).strip()):
            out.append(f"an image whose alt text is a file name: {alt.group(1)}")
    for figure in re.findall(r"<figure\b.*?</figure>", body, re.S):
        caption = re.search(r"<figcaption>(.*?)</figcaption>", figure, re.S)
        words = text_of(caption.group(1)) if caption else ""
        if not words or re.fullmatch(r"[\w.-]+\.(?:png|svg|jpe?g)", words) or len(words.split()) < 4:
            out.append(f"a figure without a caption in words: {figure[:160]}")
    for first, second in re.findall(r"(<h[1-6][^>]*>.*?</h[1-6]>)\s*(<h[1-6][^>]*>.*?</h[1-6]>)", body, re.S):
        out.append(f"two headings with nothing between them: {text_of(first)!r}, {text_of(second)!r}")
    for ticket in TICKET.findall(visible_text(page)):
        out.append(f"an internal ticket reference in the text: {ticket!r}")
    return out
