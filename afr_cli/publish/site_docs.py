"""The Markdown the site renders beside the papers' pages: the README, docs/*.md, the datasets'
and results' READMEs, each report's ``friedman.md`` and the papers' narrative pages, each to one
HTML page under ``site/``, and every link between them mapped to the rendered page.

Where each goes: the README to ``readme.html``, ``docs/X.md`` to ``docs/X.html``, another file of
the checkout to ``docs/<path with - for />.html``, a file under the results root to
``results/<path>.html``, a paper's ``page.md`` into its paper page (``<id>.html``, site.py). A
link to a page of this set points at its rendered page (anchors kept: headings carry GitHub's
ids); a link to anything else (source code, a csv) keeps its text and loses the link, since the
site must stand alone; an image is copied into ``site/`` and shown once per page.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

from afr_cli.catalogue.knowledge import PROJECT_DIR
from afr_cli.publish.context import ReportContext
from afr_cli.publish.markdown import to_html
from afr_cli.publish.outfiles import write_if_changed
from afr_cli.publish.site_page import copied, page_html, relative

EXTERNAL = re.compile(r"[a-z][a-z0-9+.-]*:", re.I)  # http:, https:, mailto:: left as they are


class Documents:
    """The Markdown files of one site build (results root ``root``, site folder ``site``) and
    the page under ``site/`` each is rendered to."""

    def __init__(self, ctx: ReportContext, site: Path):
        self.root, self.site = ctx.root.resolve(), Path(site)
        self.papers = ctx.papers
        project = PROJECT_DIR.resolve()
        # the checkout's results/ the docs link into: this root, when it is the project's own results
        # root or (afr report --check) a scratch copy standing for it
        self.results = (project / "results").resolve() if ctx.shown == "results" else None
        found = [project / "README.md", *sorted((project / "docs").glob("*.md")), project / "datasets" / "README.md"]
        self.pages: dict[Path, str] = {}
        for source in (f for f in found if f.is_file()):
            rel = source.relative_to(project)
            self.pages[source] = (
                "readme.html"
                if rel == Path("README.md")
                else f"docs/{rel.stem}.html"
                if rel.parent == Path("docs")
                else "docs/" + rel.with_suffix(".html").as_posix().replace("/", "-")
            )
        for source in [
            self.root / "README.md",
            *sorted(self.root.glob("*/README.md")),
            *sorted(self.root.glob("*/friedman.md")),
        ]:
            if source.is_file():
                self.pages[source] = "results/" + source.relative_to(self.root).with_suffix(".html").as_posix()
        for paper in self.papers:
            if paper.page is not None and paper.page.is_file():
                self.pages[paper.page.resolve()] = f"{paper.id}.html"

    def page_of(self, source: Path) -> str | None:
        """The page under ``site/`` that ``source`` is rendered to, or None."""
        return self.pages.get(Path(source).resolve())

    def image(self, path: Path) -> str | None:
        """Copy an image file into ``site/`` (under ``files/`` when it is outside the results
        root); its path under ``site/``, or None for a file that is not there."""
        path = path.resolve()
        if not path.is_file():
            return None
        if path.is_relative_to(self.root):
            return copied(path, self.root, self.site)
        if path.is_relative_to(PROJECT_DIR.resolve()):
            return copied(path, PROJECT_DIR.resolve(), self.site, "files")
        return None

    def linker(self, source: Path, where: str, shown: set[str]):
        """The ``href`` function ``to_html`` takes for Markdown read from ``source`` and shown on
        the page at ``where``; the images it lets through are added to ``shown``."""

        def href(target: str, image: bool) -> str | None:
            if EXTERNAL.match(target):
                return None if image else target
            if target.startswith("#"):
                return target
            path_part, _, anchor = target.partition("#")
            path = (Path(source).parent / unquote(path_part)).resolve()
            if self.results is not None and path.is_relative_to(self.results):
                path = self.root / path.relative_to(self.results)
            elif (
                self.results is not None
                and not path.is_relative_to(self.root)
                and path.is_relative_to(self.root.parent)
            ):
                path = PROJECT_DIR.resolve() / path.relative_to(self.root.parent)  # from the copy's README to the docs
            if image:
                held = self.image(path)
                if held is None or held in shown:
                    return None
                shown.add(held)
                return relative(held, where)
            page = self.pages.get(path)
            if page is None:
                return None
            return relative(page, where) + (f"#{anchor}" if anchor else "")

        return href

    def render(self, source: Path, where: str, shown: set[str], text: str | None = None) -> str:
        """``source``'s Markdown (or ``text`` read from it) as HTML for the page at ``where``."""
        text = Path(source).read_text(encoding="utf-8") if text is None else text
        return to_html(text, self.linker(source, where, shown))

    def write_pages(self) -> list[Path]:
        """Every page of the set but the papers' (site.py writes those): its title, its text;
        returns the files written (an unchanged page is not rewritten)."""
        paper_pages = {p.page.resolve() for p in self.papers if p.page is not None}
        written = []
        for source, where in self.pages.items():
            if source in paper_pages:
                continue
            text = source.read_text(encoding="utf-8")
            heading = re.search(r"^# (.+)$", text, re.M)
            title = heading.group(1).strip() if heading else source.name
            html = page_html(
                title,
                [
                    self.render(source, where, set(), text),
                    f'<p class="source">Rendered from <code>{_shown_path(source, self.root)}</code>.</p>',
                ],
                where,
            )
            if write_if_changed(self.site / where, html):
                written.append(self.site / where)
        return written


def _shown_path(source: Path, root: Path) -> str:
    """How a rendered page names the file it comes from: its path in the checkout, or under the results root."""
    project = PROJECT_DIR.resolve()
    if source.is_relative_to(project):
        return source.relative_to(project).as_posix()
    return f"{root.name}/{source.relative_to(root).as_posix()}"
