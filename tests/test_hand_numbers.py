"""No number is typed by hand on a page unless it is known: every numeric token of the paper pages,
docs/*.md (but the generated config.md, cli.md) and results/README.md outside a generated block is
either of a kind that is no result (afr_cli/publish/hand_numbers.py, ALLOWED: references, the papers'
stated protocol, versions, exit codes, ...) or listed, per page, in tests/hand_typed_numbers.json:
the numbers still typed by hand (docs/README.md, "What is still typed by hand"). A new one fails
here; so does a listed one that is gone (shrink the list: it only ever gets shorter)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from afr_cli.publish.hand_numbers import ALLOWED, hand_number_counts, hand_numbers, pages, prose
from afr_cli.publish.pages import BEGIN, END

PROJECT = Path(__file__).resolve().parent.parent
KNOWN = Path(__file__).resolve().parent / "hand_typed_numbers.json"


def _known() -> dict[str, Counter]:
    return {page: Counter(tokens) for page, tokens in json.loads(KNOWN.read_text(encoding="utf-8")).items()}


def test_no_new_number_is_typed_by_hand():
    known, new = _known(), []
    for page in pages(PROJECT):
        rel = page.relative_to(PROJECT).as_posix()
        extra = hand_number_counts(page) - known.get(rel, Counter())
        lines = hand_numbers(page.read_text(encoding="utf-8"))
        new += [f"{rel}:{k}: {token}" for k, token in lines if token in extra]
    assert not new, (
        "numbers typed by hand outside a generated block (make each a study or a measurement "
        "record rendered by afr report; see docs/README.md):\n" + "\n".join(new)
    )


def test_the_list_of_known_hand_typed_numbers_is_exact():
    """A number that became generated leaves the list, so the list is what is still typed by hand."""
    on_pages = {page.relative_to(PROJECT).as_posix(): hand_number_counts(page) for page in pages(PROJECT)}
    stale = []
    for rel, tokens in _known().items():
        gone = tokens - on_pages.get(rel, Counter())
        stale += [f"{rel}: {token} x{count}" for token, count in gone.items()]
    assert not stale, "listed in tests/hand_typed_numbers.json but no longer on the page:\n" + "\n".join(stale)


def test_generated_blocks_code_and_allowed_numbers_are_not_counted():
    text = "\n".join(
        [
            "Our R² is 0.731 on Table 3 (100 repetitions, 3-fold inner CV, repetitions 0-9, Python 3.11).",
            BEGIN.format(name="study:x"),
            "| 0.512 | 17 |",
            END.format(name="study:x"),
            "Run `afr run --reps 5` or see [it](../results/x2/3.md); exit code 2 on bad input.",
            "```",
            "afr table --reps 10",
            "```",
            "Friedman 1-3 differ by 0.04 and 12 %.",
        ]
    )
    assert hand_numbers(text) == [(1, "0.731"), (9, "0.04"), (9, "12")]
    assert "0.512" not in prose(text) and "5" not in prose(text).split()


def test_each_allowed_kind_says_why():
    assert ALLOWED and all(reason.strip() for _, reason in ALLOWED)


def test_the_pages_are_the_papers_docs_and_results_readme():
    names = {p.relative_to(PROJECT).as_posix() for p in pages(PROJECT)}
    assert "afr_cli/papers/satrf/page.md" in names and "results/README.md" in names
    assert "docs/speed.md" in names and "docs/config.md" not in names and "docs/cli.md" not in names
