"""Durations in words, one way everywhere: ``afr status`` ETAs and wall-time bounds, ``afr
reproduce``'s plan and step times, the compute table of the project's pages.

From an hour up a duration is hours and whole minutes (``1 h 01 min``, the minutes rounded);
below it, minutes to a tenth (``36.7 min``), or whole (``37 min``) where a table rounds, or, for
step times that are often short, seconds below a minute (``45 s``).
"""

from __future__ import annotations

from typing import Literal

BelowHour = Literal["tenths", "whole", "seconds"]


def format_duration(seconds: float, below_hour: BelowHour = "tenths") -> str:
    """``seconds`` in words: '1 h 01 min' once it rounds to an hour or more; below that, by
    ``below_hour``: 'tenths' -> '36.7 min', 'whole' -> '37 min', 'seconds' -> '36.7 min' or,
    below a minute, '45 s'."""
    minutes = seconds / 60
    whole = round(minutes)
    if whole >= 60:
        hours, rest = divmod(whole, 60)
        return f"{hours} h {rest:02d} min"
    if below_hour == "whole":
        return f"{whole} min"
    if below_hour == "seconds" and seconds < 60:
        return f"{seconds:.0f} s"
    return f"{minutes:.1f} min"
