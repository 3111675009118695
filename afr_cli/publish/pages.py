"""Generated blocks in the Markdown pages: README.md, docs/*.md, results/README.md, results/*/README.md
and each paper folder's page (``page`` in its data file) hold sections between
``<!-- BEGIN GENERATED: name ... -->`` and ``<!-- END GENERATED: name -->`` that ``afr report``
rewrites (claims, ledgers, agreement counts, studies), so no number in a page is typed by hand;
the prose around a block is never touched. A block named in no page is not written anywhere."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from afr_cli.catalogue.knowledge import PROJECT_DIR, Paper, papers

BEGIN = "<!-- BEGIN GENERATED: {name} (afr report; do not edit by hand) -->"
END = "<!-- END GENERATED: {name} -->"
DOCS_DIR = "docs"  # beside the results root: the documentation pages (docs/*.md)
_ANY_BLOCK = re.compile(
    r"<!-- BEGIN GENERATED: (\S+) \(afr report; do not edit by hand\) -->\n(.*?)\n<!-- END GENERATED: \1 -->", re.S
)


def page_files(root: Path, shown: Sequence[Paper] | None = None) -> list[Path]:
    """The pages that may hold generated blocks: the README and docs/*.md beside ``root``, its own
    README.md and each results/*/README.md, and the page of every paper of ``shown`` (default:
    every known paper; see ``paper_page``)."""
    readmes = [
        root.parent / "README.md",
        *sorted((root.parent / DOCS_DIR).glob("*.md")),
        root / "README.md",
        *sorted(root.glob("*/README.md")),
    ]
    pages = [paper_page(p.page, p.id, root) for p in (papers() if shown is None else shown) if p.page is not None]
    return [p for p in [*readmes, *pages] if p.is_file()]


def is_project_results(root: Path) -> bool:
    """Whether ``root`` is the project's own results root (the checkout's ``results/``, wherever afr
    runs from), not a scratch one (``--root``, or a ``results/`` in another directory)."""
    return Path(root).resolve() == (PROJECT_DIR / "results").resolve()


def paper_page(page: Path, paper_id: str, root: Path) -> Path:
    """Where a paper's page takes its generated blocks from the stores under ``root``: the page in
    its folder for the project's own results root (``results/``), else a copy of it under the other
    root (``<root>/<paper>/page.md``, made on first use), so a scratch run never rewrites a committed page."""
    if is_project_results(root):
        return page
    copy = Path(root) / paper_id / page.name
    if not copy.is_file():
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    return copy


def committed_page(copy: Path, root: Path) -> Path | None:
    """The committed page a scratch copy under ``root`` stands for (``paper_page``'s inverse), or None."""
    for paper in papers():
        if paper.page is not None and (Path(root) / paper.id / paper.page.name).resolve() == Path(copy).resolve():
            return paper.page
    return None


def result_block(name: str, paper_id: str) -> bool:
    """Whether a block of a paper's page states results from its stores: its claims, ledger,
    agreement counts and studies (not a measurement record such as ``bench:unit:...``)."""
    return name in (f"claims:{paper_id}", f"ledger:{paper_id}", f"agreement:{paper_id}") or name.startswith(
        f"study:{paper_id}:"
    )


def unbuilt_note(root_shown: str) -> str:
    """The one line that stands in a scratch page copy for a result block its root could not build."""
    return (
        f"*Not built from `{root_shown}`: the stores under it lack what this block reads (a store, a dataset "
        f"or a study's saved frame). The committed page shows it from the project's `results/`.*"
    )


def unbuilt_blocks(page: Path, paper_id: str, built: dict[str, str], root_shown: str) -> dict[str, str]:
    """For a paper's page copy under a scratch root: each result block of the page that ``built``
    lacks, mapped to ``unbuilt_note``, so the copy never keeps a committed result its root does not hold."""
    return {
        name: unbuilt_note(root_shown)
        for name in blocks_in(page.read_text(encoding="utf-8"))
        if result_block(name, paper_id) and name not in built
    }


def blocks_in(text: str) -> dict[str, str]:
    """The generated blocks of a page's text, by name: their bodies as written."""
    return {m.group(1): m.group(2) for m in _ANY_BLOCK.finditer(text)}


def with_blocks(text: str, blocks: dict[str, str]) -> str:
    """``text`` with the body of every block it holds that ``blocks`` names replaced."""
    for name, body in blocks.items():
        pattern = re.compile(re.escape(BEGIN.format(name=name)) + r".*?" + re.escape(END.format(name=name)), re.S)
        text = pattern.sub(lambda _: f"{BEGIN.format(name=name)}\n{body}\n{END.format(name=name)}", text)
    return text


def replace_sections(path: Path, blocks: dict[str, str]) -> bool:
    """Rewrite the generated sections of one file; True when the file changed."""
    text = path.read_text(encoding="utf-8")
    new = with_blocks(text, blocks)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def write_pages(root: Path, blocks: dict[str, str], shown: Sequence[Paper] | None = None) -> list[Path]:
    """Every page's generated blocks (the papers' pages of ``shown``, see ``page_files``); returns the
    pages that changed."""
    return [page for page in page_files(root, shown) if replace_sections(page, blocks)]
