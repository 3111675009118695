"""The frame every page of the site shares: the head linking the one stylesheet, the navigation
bar (the papers and the docs a reader looks for), and the load-time check a browser test reads;
and the copying of a file a page shows into ``site/``. Links are relative to the page's own place
under ``site/``, so the folder opens from disk or any server."""

from __future__ import annotations

import html
import os
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
    " body.setAttribute('data-markdown-left', left.join(' ')); });"
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


def page_html(title: str, body: list[str], where: str = "index.html") -> str:
    """A whole page of the site at ``where`` (its path under ``site/``): the stylesheet and the
    navigation bar linked relative to it, then ``body``."""
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
            'data-markdown-left="unknown">',
            nav_html(where),
            *body,
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
