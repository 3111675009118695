"""Numbers typed by hand on the pages: every numeric token of a page that is not inside a generated
block (``afr report`` writes those from the stores and records, and ``--check`` keeps them
current) and is not one of the few kinds of number that are no result at all (``ALLOWED``).

The pages are the ones a reader takes results from: each paper's page (``afr_cli/papers/*/page.md``),
``docs/*.md`` except the pages generated whole (config.md, cli.md), and ``results/README.md``.
Fenced code, inline code, link targets and HTML comments are commands and addresses, not prose,
and are skipped. tests/test_hand_numbers.py holds every page to the numbers it is known to still
type by hand, so a new one fails.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from afr_cli.publish.pages import BEGIN, END

GENERATED_PAGES = ("config.md", "cli.md")  # docs pages generated whole (afr docs config / cli)

_BLOCK = re.compile(
    re.escape(BEGIN).replace(r"\{name\}", r"(\S+)") + r".*?" + re.escape(END).replace(r"\{name\}", r"\1"), re.S
)
_FENCE = re.compile(r"^\s*```.*?^\s*```[^\n]*$", re.S | re.M)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_NUMBER = re.compile(r"(?<![\w.@/-])[-+−±~≈]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])%?")

# Numbers that are not results, each with why it may be typed by hand. A match is blanked out
# before the page is scanned for numbers.
ALLOWED: tuple[tuple[str, str], ...] = (
    # References to the papers' and the project's own parts: a table, figure, section, equation or
    # issue number names a place, it measures nothing ("sec. 5" too, as the model table cites them).
    (
        r"\b(?:Tables?|Figures?|Figs?\.|Sections?|[Ss]ec\.|eqs?\.?|equations?|Eqs?\.|issues?|Algorithms?|Steps?"
        r"|Theorems?|Lemmas?|Appendix|Part|items?|Tests?)\s+[IVX\d]+(?:\s*(?:[-–,/]|and|or|=)\s*[IVX\d]+)*",
        "a reference",
    ),
    # Dataset names that hold a digit (the papers' Friedman 1-3).
    (r"\bFriedman\s*\d(?:\s*[-–,]\s*\d|\s+and\s+\d)*", "a dataset's name"),
    # The papers' stated protocol, quoted as the papers state it: 100 repetitions of an 80/20 split,
    # 3-fold inner CV, 100 trees, the 11 datasets, and their own repetitions 0-9 (10 repetitions).
    (
        r"\b(?:100|10|20)\s+repetitions\b|\brepetitions?\s+0\s*[-–]\s*9\b|\b0\s*[-–]\s*9\b|\b80\s*/\s*20\b|\b3-fold\b"
        r"|\b100\s+trees\b|\b11\s+datasets\b|\b100\s+reps\b",
        "the papers' stated protocol",
    ),
    # Software versions and Python itself.
    (r"\b(?:Python|python|scikit-learn|numpy|pandas|cvxpy|version|v)\s*\d+(?:\.\d+)+\b", "a version"),
    # A cited paper's year, in brackets.
    (r"\b(?:19|20)\d\d\b(?=[)\]]|\s*\))", "a year in a citation"),
    # The command line's contract: exit codes are part of the interface, not measurements.
    (r"\b(?:exit(?:s| code| status)?|exits? with)\s+(?:code\s+)?\d+(?:\s*(?:,|or|and)\s*\d+)*", "an exit code"),
    # A tutorial's numbered steps.
    (r"^#+\s+\d+\.", "a step number in a heading"),
)
_ALLOWED = re.compile("|".join(f"(?:{pattern})" for pattern, _ in ALLOWED), re.M)


def pages(project: Path) -> list[Path]:
    """The pages held to it: each paper's page, docs/*.md but the generated ones, results/README.md."""
    project = Path(project)
    docs = [p for p in sorted((project / "docs").glob("*.md")) if p.name not in GENERATED_PAGES]
    papers = sorted((project / "afr_cli" / "papers").glob("*/page.md"))
    return [p for p in [*papers, *docs, project / "results" / "README.md"] if p.is_file()]


def prose(text: str) -> str:
    """A page's text with everything that is not hand-written prose blanked out (generated blocks,
    code, comments, link targets, allowed numbers); line breaks are kept, so lines still count."""

    def blank(match: re.Match) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    for pattern in (_BLOCK, _FENCE, _COMMENT, _CODE, _LINK_TARGET, _ALLOWED):
        text = pattern.sub(blank, text)
    return text


def hand_numbers(text: str) -> list[tuple[int, str]]:
    """Every number typed by hand in a page's text: (line number, the number as written)."""
    found = []
    for k, line in enumerate(prose(text).splitlines(), start=1):
        found += [(k, m.group(0)) for m in _NUMBER.finditer(line)]
    return found


def hand_number_counts(page: Path) -> Counter:
    """How often each hand-typed number occurs on one page."""
    return Counter(token for _, token in hand_numbers(Path(page).read_text(encoding="utf-8")))
