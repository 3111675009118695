"""The words a generated page statement is made of, so that a sentence stating a result is true of
the stores it is built from: which store (named under the root the page is built for, so a page
built on ``afr reproduce --root DIR`` names ``DIR/<store>``, never ``results/<store>``), how many
(``every``, ``none`` or ``k of n``, from the count itself), whether a test is significant (from
its p against the level), and lists that never print as an empty ``()``.

A page's statements are written by its paper's ``studies.py`` from its frames; each word here is
computed, never typed, so the same sentence reads true on the 100 committed repetitions and on a
two-repetition scratch root.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from afr_cli.publish.pages import is_project_results

ALPHA = 0.05  # the papers' significance level (Demšar's paired t-test), as the claims judge it


def shown_root(root: Path) -> str:
    """How a page names the results root it is built from: ``results`` for the project's own,
    else the root as it was given (``/tmp/p2dm``). ``afr report --check`` builds a scratch copy
    under the name of the root it stands for (``ReportContext.shown``)."""
    return "results" if is_project_results(root) else Path(root).as_posix()


def listing(items: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``; '' for none."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def in_brackets(items: Sequence[str], lead: str = "") -> str:
    """`` (lead a, b)`` for a non-empty list, '' for an empty one (never ``()``)."""
    return f" ({lead}{', '.join(str(i) for i in items)})" if items else ""


def how_many(k: int, n: int) -> str:
    """A count of ``n`` as prose: ``all n``, ``none of the n``, else ``k of n``."""
    if n > 0 and k == n:
        return f"all {n}"
    if k == 0:
        return f"none of the {n}"
    return f"{k} of {n}"


def significant(p: float, alpha: float = ALPHA) -> bool:
    """Whether a p-value is below the level (a NaN p, a test that could not run, is not)."""
    return bool(p < alpha)


def significance_words(p: float, alpha: float = ALPHA) -> str:
    """``significant`` or ``not significant``, at ``alpha``, from the p-value itself."""
    return "significant" if significant(p, alpha) else "not significant"


def repetitions_label(reps: Sequence[int]) -> str:
    """The repetitions a row rests on, as the pages write them: ``0-9``, ``0-1``, ``0``."""
    reps = sorted(int(r) for r in reps)
    if not reps:
        return "none"
    return f"{reps[0]}" if reps[0] == reps[-1] else f"{reps[0]}-{reps[-1]}"
