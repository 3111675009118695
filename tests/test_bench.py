"""``afr bench``: bad options are rejected before any benchmark work starts."""

from __future__ import annotations

import pytest

from conftest import assert_one_line_error, run_afr


@pytest.mark.parametrize("args, needles", [
    (["qp", "--format", "xml"], ["--format", "table, json"]),
    (["satrf", "--solver", "gurobi"], ["--solver", "ECOS"]),
    (["larf", "--n", "5"], ["--n 5", "n must be >= 20"]),
])
def test_bad_bench_options_fail_at_once(args, needles):
    assert_one_line_error(run_afr("bench", *args, timeout=60), *needles)
