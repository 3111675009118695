"""The Markdown the generated blocks are written in, one way everywhere: a table, and a number in
short scientific notation."""

from __future__ import annotations


def table(headers: list[str], rows: list[list[str]], align: list[str] | None = None) -> str:
    """A Markdown table of text cells; ``align``: each column's marker row cell (``---`` left,
    ``---:`` right), left by default. Cells are written as given (escape a ``|`` in one first)."""
    marks = align or ["---"] * len(headers)
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(marks) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def short_exponent(x: float, spec: str = "+.0e") -> str:
    """``x`` formatted by ``spec`` without the exponent's leading zero (-4e-9, not -4e-09; 1e-9 by
    ``g``); a number ``spec`` writes without an exponent stays as it is."""
    mantissa, _, exponent = format(x, spec).partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def slug(text: str) -> str:
    """A heading's anchor as GitHub writes it (lower case, punctuation dropped, spaces as ``-``),
    so the ``page.md#a-heading`` links the docs already carry land on the rendered heading."""
    import re

    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def to_html(text: str, href=None) -> str:
    """``text`` (CommonMark with pipe tables) as an HTML fragment for the site.

    Every table sits in its own ``<div class="scroll">`` (a wide table scrolls inside its box
    instead of clipping or widening the page), a column's alignment is a class (``num``), never an
    inline style, and every heading carries its GitHub anchor as ``id``. ``href(target, image)``,
    when given, maps each link and image target: a new target, or None to show a link's text
    without a link (a file the site does not hold) and to leave an image out (one the page
    already shows, or a file the site does not hold). Raw HTML (the generated blocks' comments) passes
    through. markdown-it-py (pinned in requirements.lock) parses."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    tokens = md.parse(text)
    for i, token in enumerate(tokens):
        if token.type in ("th_open", "td_open") and token.attrGet("style"):
            token.attrs.pop("style")
            token.attrSet("class", "num")
        elif token.type == "heading_open" and i + 1 < len(tokens):
            token.attrSet("id", slug("".join(c.content for c in tokens[i + 1].children or [] if c.content)))
        elif token.type == "inline" and href is not None:
            _map_links(token, href)
    out = md.renderer.render(tokens, md.options, {})
    return out.replace("<table>", '<div class="scroll"><table>').replace("</table>", "</table></div>")


def _map_links(inline, href) -> None:
    """Rewrite the link and image targets of one inline token by ``href`` (see ``to_html``); a
    link it maps to None loses its opening and closing tags, keeping its text."""
    children, kept, dropped = inline.children or [], [], 0
    for child in children:
        if child.type == "image":
            target = href(child.attrGet("src"), True)
            if target is None:
                continue
            child.attrSet("src", target)
        elif child.type == "link_open":
            target = href(child.attrGet("href"), False)
            if target is None:
                dropped += 1
                continue
            child.attrSet("href", target)
        elif child.type == "link_close" and dropped:
            dropped -= 1
            continue
        kept.append(child)
    inline.children = kept
