"""One duration format for every command and page (``afr_cli.core.durations``): hours and whole
minutes from an hour up; below it, minutes to a tenth, whole minutes, or seconds below a minute."""

from __future__ import annotations

import pytest

from afr_cli.core.durations import format_duration


@pytest.mark.parametrize(
    "seconds, below_hour, text",
    [
        (3725, "tenths", "1 h 02 min"),  # afr status: ETA and wall time at best
        (95, "tenths", "1.6 min"),
        (6, "tenths", "0.1 min"),  # a status ETA stays in minutes
        (60 * 121.1 / 2, "whole", "1 h 01 min"),  # the compute table: 121.1 CPU-min on 2 workers
        (60 * 966.5 / 2, "whole", "8 h 03 min"),
        (60 * 36.6, "whole", "37 min"),
        (45, "seconds", "45 s"),  # afr reproduce: step times, often short
        (72, "seconds", "1.2 min"),
        (7200, "seconds", "2 h 00 min"),
        (60 * 61.7, "tenths", "1 h 02 min"),  # the minutes of the hour form are rounded, not cut
        (60 * 59.7, "tenths", "1 h 00 min"),  # what rounds to an hour is said in hours
        (60 * 59.7, "whole", "1 h 00 min"),
    ],
)
def test_a_duration_reads_the_same_wherever_it_is_printed(seconds, below_hour, text):
    assert format_duration(seconds, below_hour) == text
