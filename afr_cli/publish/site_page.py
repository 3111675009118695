"""The frame every page of the site shares: the head linking the one stylesheet, the navigation
bar (the papers and the docs a reader looks for), a table of contents made from the headings of a
page longer than two screens, and the load-time check a browser test reads; and the copying of
a file a page shows into ``site/``. Links are relative to the page's own place under ``site/``,
so the folder opens from disk or any server."""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path

STYLESHEET = "site.css"  # written once beside the index page; every page links it
BROKEN_IMAGE_CHECK = (  # what a browser test reads back from the loaded page
    "<script>window.addEventListener('load', function () {"
    " var body = document.body, root = document.documentElement;"
    " var broken = Array.prototype.filter.call(document.images, function (i) {"
    " return !i.complete || i.naturalWidth === 0; }).length;"
    " body.setAttribute('data-broken-images', String(broken));"
    " body.setAttribute('data-styled', String(getComputedStyle(body).maxWidth !== 'none'));"
    " body.setAttribute('data-overflow', String(Math.max(0, root.scrollWidth - root.clientWidth)));"
    " var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT), left = [], node;"
    " while ((node = walker.nextNode())) { if (node.parentElement.closest('pre, code, script')) continue;"
    " var m = node.nodeValue.match(/\\*\\*|\\|\\s*:?-{3,}/); if (m) left.push(m[0]); }"
    " body.setAttribute('data-markdown-left', left.join(' '));"
    " body.setAttribute('data-height', String(root.scrollHeight));"
    " body.setAttribute('data-toc', String(document.querySelector('nav.toc') !== null)); });"
    "</script>"
)
SORTABLE_ROWS = 25  # a table with more body rows than this (more than a screen) sorts by a click on a heading
SORT_TABLES = (  # a click on a heading sorts the rows by that column (numbers as numbers), again reverses
    "<script>(function () { function key(row, i) { var c = row.cells[i]; var t = c ? c.textContent.trim() : '';"
    " var n = parseFloat(t.replace(/[\\u2212]/g, '-')); return isNaN(n) ? t.toLowerCase() : n; }"
    " Array.prototype.forEach.call(document.querySelectorAll('table'), function (table) {"
    " var head = table.rows[0]; if (!head) return; var cells = Array.prototype.slice.call(head.cells);"
    " if (!cells.every(function (c) { return c.tagName === 'TH' && c.colSpan === 1 && c.rowSpan === 1; })) return;"
    " var body = Array.prototype.slice.call(table.rows, 1); if (body.length <= " + str(SORTABLE_ROWS) + ") return;"
    " table.classList.add('sortable'); cells.forEach(function (th, i) { th.title = 'sort by this column';"
    " th.addEventListener('click', function () { var up = th.getAttribute('data-sorted') !== 'up';"
    " cells.forEach(function (c) { c.removeAttribute('data-sorted'); }); th.setAttribute('data-sorted', up ? 'up' : "
    "'down');"
    " var rows = Array.prototype.slice.call(table.rows, 1); rows.sort(function (a, b) {"
    " var x = key(a, i), y = key(b, i); if (typeof x !== typeof y) { x = String(x); y = String(y); }"
    " return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1); });"
    " rows.forEach(function (r) { r.parentNode.appendChild(r); }); }); }); }); })();</script>"
)
# The navigation bar, in reading order: (label, page under site/)
NAV = (
    ("Papers", "index.html"),
    ("README", "readme.html"),
    ("Tutorial: your own family", "docs/tutorial-own-family.html"),
    ("Datasets", "docs/datasets.html"),
    ("Config reference", "docs/config.html"),
    ("CLI reference", "docs/cli.html"),
    ("Errors", "docs/errors.html"),
    ("All docs", "docs/README.html"),
)


def esc(text) -> str:
    """``text`` escaped for HTML text and attribute values."""
    return html.escape(str(text))


def relative(target: str, where: str) -> str:
    """The link from the page at ``where`` to ``target`` (both paths under ``site/``)."""
    return os.path.relpath(target, os.path.dirname(where) or ".").replace(os.sep, "/")


def nav_html(where: str) -> str:
    """The navigation bar of the page at ``where``."""
    links = "".join(f'<a href="{esc(relative(target, where))}">{esc(label)}</a>' for label, target in NAV)
    return f'<nav class="site">{links}</nav>'


SCREEN_LINES = 40  # about one screen of text lines at 1280 x 900 (a table row, a paragraph's line)
TOC_BUDGET = 2 * SCREEN_LINES  # a page estimated longer than this gets a table of contents
_HEADING = re.compile(r"<h([23])((?: [^>]*)?)>(.*?)</h\1>", re.S)
_TAG = re.compile(r"<[^>]+>")


def text_of(fragment: str) -> str:
    """The text a reader sees of an HTML fragment: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(
        html.unescape(_TAG.sub("", re.sub(r"<(?:br|/p|/li|/td|/th|/h[1-6])\b[^>]*>", " ", fragment))).split()
    )


def estimated_lines(fragment: str) -> int:
    """How many screen lines an HTML fragment takes, roughly: a line per table row and heading, a
    line per 130 characters of a paragraph or list item (and one for its margin), a line per line
    of preformatted text, 18 lines per image; the site's length budget (``TOC_BUDGET``) is counted
    in these."""
    rows = len(re.findall(r"<(?:tr|h[1-6])\b", fragment))
    prose = sum(len(text_of(m.group(0))) // 130 + 2 for m in re.finditer(r"<(p|li)\b.*?</\1>", fragment, re.S))
    code = sum(p.count("\n") + 2 for p in re.findall(r"<pre\b.*?</pre>", fragment, re.S))
    return rows + prose + code + 18 * len(re.findall(r"<img\b", fragment))


def with_contents(body: str) -> str:
    """``body`` with an id on each ``<h2>``/``<h3>`` that lacks one and, when it is longer than
    ``TOC_BUDGET`` lines and has two headings or more, a table of contents of them before the first
    (after the page's title and its opening paragraphs)."""
    taken = set(re.findall(r' id="([^"]+)"', body))
    entries: list[tuple[int, str, str]] = []

    def named(match: re.Match) -> str:
        level, attrs, inner = match.group(1), match.group(2), match.group(3)
        found = re.search(r' id="([^"]+)"', attrs)
        if found:
            anchor = found.group(1)
        else:
            base = re.sub(r"[^\w\- ]", "", text_of(inner).lower()).replace(" ", "-") or "section"
            anchor, n = base, 1
            while anchor in taken:
                n += 1
                anchor = f"{base}-{n}"
            taken.add(anchor)
            attrs = f' id="{anchor}"{attrs}'
        entries.append((int(level), anchor, text_of(inner)))
        return f"<h{level}{attrs}>{inner}</h{level}>"

    body = _HEADING.sub(named, body)
    if len(entries) < 2 or estimated_lines(body) <= TOC_BUDGET:
        return body
    seen_h2 = False
    for k, (level, anchor, text) in enumerate(entries):  # an h3 before the first h2 is listed as a section
        seen_h2 = seen_h2 or level == 2
        entries[k] = (level if seen_h2 else 2, anchor, text)
    toc = ['<nav class="toc"><p>On this page</p><ul>']
    for k, (level, anchor, text) in enumerate(entries):
        nxt = entries[k + 1][0] if k + 1 < len(entries) else 2
        toc.append(f'<li><a href="#{esc(anchor)}">{esc(text)}</a>')
        if level == 2 and nxt == 3:
            toc.append("<ul>")  # the h3 entries that follow nest under this one
            continue
        toc.append("</li>")
        if level == 3 and nxt == 2:
            toc.append("</ul></li>")
    toc.append("</ul></nav>")
    toc = "".join(toc)
    first = _HEADING.search(body).start()  # after the page's title and opening, before its first section
    return body[:first] + toc + "\n" + body[first:]


def page_html(title: str, body: list[str], where: str = "index.html") -> str:
    """A whole page of the site at ``where`` (its path under ``site/``): the stylesheet and the
    navigation bar linked relative to it, then ``body`` (with a table of contents when it is long,
    ``with_contents``)."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title>",
            f'<link rel="stylesheet" href="{esc(relative(STYLESHEET, where))}">',
            "</head>",
            '<body data-broken-images="unknown" data-styled="unknown" data-overflow="unknown" '
            'data-markdown-left="unknown" data-height="unknown" data-toc="unknown">',
            nav_html(where),
            with_contents("\n".join(body)),
            BROKEN_IMAGE_CHECK,
            SORT_TABLES,
            "</body>",
            "</html>",
            "",
        ]
    )


def copied(source: Path, base: Path, site: Path, under: str = "") -> str:
    """Copy ``source`` (a file under ``base``) to the same place under ``site/<under>``, unless an
    identical copy is there; its path under ``site/``."""
    rel = Path(under) / source.relative_to(base)
    target = site / rel
    if not target.is_file() or target.read_bytes() != source.read_bytes():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    return rel.as_posix()
