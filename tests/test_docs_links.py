"""The README's promises about itself: at most 250 lines, the two set-up commands exactly as the
Makefile runs them, and every relative link in README.md, docs/*.md and the paper pages resolving
to a file (and a `#anchor` to a heading of that file); results/README.md too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from afr_cli.catalogue.knowledge import papers

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def pages() -> list[Path]:
    return [
        README,
        *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "results" / "README.md",
        ROOT / "results" / "bench" / "README.md",
        *(p.page for p in papers() if p.page is not None),
    ]


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def links(path: Path) -> list[str]:
    return _LINK.findall(_FENCE.sub("", path.read_text(encoding="utf-8")))


def test_the_readme_is_at_most_250_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_readme_states_the_set_up_commands_as_the_makefile_runs_them():
    readme = README.read_text(encoding="utf-8")
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    for target in ("demo", "test"):
        recipe = re.search(rf"^{target}: .*\n((?:\t.*\n)+)", make, re.M).group(1)
        for command in recipe.strip().splitlines():
            command = command.strip().replace("$(BIN)", ".venv/bin")
            assert f"`{command}`" in readme, command


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` whose file is missing, or whose ``#anchor`` names no heading."""
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(target)
    return broken


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    broken = broken_links(page)
    assert not broken, f"{page.relative_to(ROOT)}: broken links: {broken}"


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# The papers' protocol, identified\n\n## Set-up: two commands\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-papers-protocol-identified) [ok](other.md#set-up-two-commands) "
        "[gone](missing.md) [no anchor](other.md#nowhere) [web](https://example.org/x)\n"
        "```\n[in a fence](ignored.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md", "other.md#nowhere"]
