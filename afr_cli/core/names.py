"""Did you mean" for a mistyped name: the one close name among those allowed, or none.

A name that differs only in case from an allowed one (``Swiss`` for ``swiss``) is that name;
otherwise difflib's closest match above its default cutoff, compared without case. Messages
append ``hint(...)`` so every "unknown X" error suggests in the same words.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(name: str, allowed: Iterable[str]) -> str | None:
    """The allowed name ``name`` most likely meant: equal ignoring case first, else difflib's
    closest (cutoff 0.6) ignoring case; None when nothing is close."""
    choices = [str(a) for a in allowed]
    lowered = str(name).casefold()
    for choice in choices:
        if choice.casefold() == lowered:
            return choice
    by_key = {c.casefold(): c for c in choices}
    found = difflib.get_close_matches(lowered, list(by_key), n=1)
    return by_key[found[0]] if found else None


def hint(name: str, allowed: Iterable[str]) -> str:
    """``"did you mean 'x'? "`` for the closest allowed name, or ``""`` (ready to precede a list)."""
    found = closest(name, allowed)
    return f"did you mean {found!r}? " if found is not None and found != name else ""
