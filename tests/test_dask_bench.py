"""``afr bench dask`` (afr_cli/benchmarks/dask_units.py): its refusals before any cluster starts, and
the pages' ``bench:dask`` block rendered from a record (afr_cli/publish/bench_blocks.py)."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run_afr

from afr_cli.publish.bench_blocks import bench_blocks
from afr_cli.store.bench_records import write_record

RESULT = {
    "config": "configs/abrf_rf.yaml",
    "datasets": ["Yacht", "Concrete"],
    "reps": 2,
    "cores": 2,
    "load_average": [1.25, 3.5],
    "unit_cpu": {
        "tasks": 4,
        "rounds": 1,
        "places": [
            {
                "place": "loky worker",
                "median_cpu_s": 0.5,
                "total_cpu_s": 2.0,
                "median_thread_cpu_s": 0.5,
                "ratio_to_loky": 1.0,
            },
            {
                "place": "Dask worker",
                "median_cpu_s": 0.52,
                "total_cpu_s": 2.1,
                "median_thread_cpu_s": 0.49,
                "ratio_to_loky": 1.04,
            },
        ],
    },
    "scaling": {
        "units": 4,
        "load_average": [1.25, 3.5],
        "rows": [
            {
                "where": "afr's process (--jobs 1)",
                "workers": 1,
                "wall_s": 2.0,
                "identical": True,
                "units_per_min": 120.0,
            },
            {"where": "Dask", "workers": 2, "wall_s": 1.5, "identical": False, "units_per_min": 160.0},
        ],
    },
}


def test_the_block_shows_each_place_and_each_run_and_says_where_rows_differ(tmp_path):
    write_record(tmp_path, "dask", "abrf_rf-Yacht-Concrete-reps2", "afr bench dask --reps 2", RESULT)
    block = bench_blocks(tmp_path)["bench:dask"]
    assert "abrf_rf on Yacht, Concrete, repetitions 0..1; load average 1.2 before, 3.5 after, on 2 cores" in block
    assert "| Dask worker | 0.520 | 0.490 | 1.04x |" in block
    assert "| afr's process (--jobs 1) | 1 | 2.0 | 120.0 | yes |" in block
    assert "| Dask | 2 | 1.5 | 160.0 | no |" in block
    assert "`afr bench dask --reps 2`" in block  # where the numbers come from


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, needle",
    [
        (["--workers", "0"], "--workers: '0' is not allowed; comma-separated counts >= 1"),
        (["--workers", "two"], "--workers: 'two' is not allowed"),
        (["--datasets", "Nowhere"], "--datasets: 'Nowhere' is not allowed; allowed: Diabetes"),
        (["--rounds", "0"], "--rounds: 0 is not allowed; an integer >= 1"),
    ],
)
def test_bad_options_are_one_line_before_any_cluster_starts(args, needle):
    assert_one_line_error(run_afr("bench", "dask", *args), needle)
