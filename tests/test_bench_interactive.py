"""``afr bench interactive`` (afr_cli/benchmarks/interactive.py): whole-process CPU per command,
median of the counted rounds after the warm-up, a failing command refused, the record rendered."""

from __future__ import annotations

import sys

import pytest

from afr_cli.benchmarks import interactive
from afr_cli.errors import AfrInputError
from afr_cli.publish import bench_blocks


def test_measure_counts_the_rounds_after_the_warm_up_and_sees_a_command_s_cpu(tmp_path):
    spin = [sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"]
    idle = [sys.executable, "-c", "pass"]
    rows = interactive.measure([("spin", spin), ("idle", idle)], runs=2, cwd=tmp_path)
    assert [r["command"] for r in rows] == ["spin", "idle"]
    assert all(len(r["cpu_runs"]) == 2 for r in rows)
    assert rows[0]["cpu_s"] >= 0.3 > rows[1]["cpu_s"]


def test_a_failing_command_is_refused_not_measured(tmp_path):
    with pytest.raises(AfrInputError, match="exited with 3"):
        interactive.measure([("fails", [sys.executable, "-c", "raise SystemExit(3)"])], runs=1, cwd=tmp_path)


def test_outside_the_project_root_it_says_where_to_run(tmp_path):
    with pytest.raises(AfrInputError, match="project root"):
        interactive.run(1, tmp_path)


def test_the_record_renders_each_command_against_the_reference():
    result = {
        "runs": 5,
        "warmup": 1,
        "target_ratio": 2.0,
        "reference": {"command": "python -c 'import pandas'", "cpu_s": 0.5, "wall_s": 0.6, "cpu_runs": []},
        "commands": [
            {"command": "afr status", "cpu_s": 0.8, "wall_s": 1.0, "ratio": 1.6, "within_target": True},
            {"command": "afr table --compare a b", "cpu_s": 2.0, "wall_s": 2.5, "ratio": 4.0, "within_target": False},
        ],
    }
    block = bench_blocks.interactive_block([{"result": result}])
    assert "| `afr status` | 0.80 | 1.00 | 1.60x | yes |" in block
    assert "| `afr table --compare a b` | 2.00 | 2.50 | 4.00x | no |" in block
    assert "| `python -c 'import pandas'` (reference) | 0.50 | 0.60 | 1.00x |  |" in block
    text = "\n".join(interactive.lines(result))
    assert "afr table --compare a b" in text and "4.00x" in text
