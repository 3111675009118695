"""``afr bench baseline``: the code before against today's on the same units, projected with the committed stores."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.benchmarks.baseline import compare_costs
from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.publish.bench_blocks import baseline_block
from afr_cli.store.bench_records import read_records
from afr_cli.store.export import export_store

CONFIG = {
    "name": "baseline-test",
    "seed": 3,
    "protocol": {"reps": 4, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0], "tau": [1.0]}},
    ],
}


def _set_cpu(store, seconds: float) -> None:
    with sqlite3.connect(store / "store.sqlite") as conn:
        conn.execute("UPDATE units SET cpu_seconds = ?", (seconds,))


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """``committed``: 4 repetitions, exported (as committed); ``before`` and ``after``: the first 2
    repetitions run again, with each unit's CPU set to 120 s and 60 s."""
    path = tmp_path_factory.mktemp("cfg") / "baseline.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    made = {}
    for side, reps in (("committed", 4), ("before", 2), ("after", 2)):
        root = tmp_path_factory.mktemp(side)
        exp = load_experiment(path, [("protocol.reps", reps)], root / "exp")
        run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *_: None)
        made[side] = root
    _set_cpu(made["before"] / "exp", 120.0)
    _set_cpu(made["after"] / "exp", 60.0)
    _set_cpu(made["committed"] / "exp", 30.0)
    export_store(made["committed"] / "exp")
    (made["committed"] / "exp" / "store.sqlite").unlink()
    return made


def test_each_side_is_summed_on_the_common_units_and_projected_to_the_committed_repetitions(roots):
    r = compare_costs(roots["before"], roots["after"], roots["committed"], 1e-9)
    (s,) = r["stores"]
    assert (s["store"], s["units"], s["units_committed"]) == ("exp", 2, 4)
    assert (s["cells_above"], s["grid_moved"], s["params_changed"], s["solver_status_changed"]) == (0, 0, 0, 0)
    assert (s["cpu_min_before"], s["cpu_min_after"]) == (4.0, 2.0)  # 2 units x 120 s and x 60 s
    assert s["cpu_min_committed_same_units"] == 1.0 and s["cpu_min_committed"] == 2.0  # 2 and 4 units x 30 s
    assert (s["projected_before"], s["projected_after"]) == (8.0, 4.0)  # x 4 committed units / 2 sampled
    assert (r["ratio"], r["projected_before"], r["projected_after"], r["cpu_min_committed"]) == (0.5, 8.0, 4.0, 2.0)


def test_the_command_records_the_block_renders_it_and_a_moved_number_exits_1(roots, tmp_path):
    committed = str(roots["committed"])
    proc = run_afr(
        "bench", "baseline", str(roots["before"]), str(roots["after"]), "--committed", committed, "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["projected_after"] == 4.0
    after = tmp_path / "after"
    shutil.copytree(roots["after"], after)
    with sqlite3.connect(after / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE results SET r2 = r2 - 0.5 WHERE model = 'rf' AND rep = 0")
    proc = run_afr(
        "bench", "baseline", str(roots["before"]), str(after), "--committed", committed, "--record", cwd=tmp_path
    )
    assert proc.returncode == 1 and "1 cell(s) and 0 grid point(s) moved" in proc.stdout
    (record,) = read_records(tmp_path / "results", "baseline")
    block = baseline_block([record])
    assert "| exp | 2 | 1 | 0 of 6 | 4.00 | 2.00 | 0.50 | 1.00 | 8.0 | 4.0 |" in block
    assert "| **all 1 stores** | 2 | **1** |" in block
    assert "8.0 CPU-min by the code before and 4.0 by today's code" in block
    assert "The committed stores record 2.0 CPU-min" in block
    assert "at the ratio of the two projections (0.500) today's code would record 1.0 CPU-min" in block


def test_missing_cpu_a_missing_store_and_no_common_unit_are_one_line_errors(roots, tmp_path):
    committed = str(roots["committed"])
    before = tmp_path / "before"
    shutil.copytree(roots["before"], before)
    with sqlite3.connect(before / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE units SET cpu_seconds = NULL WHERE rep = 1")
    assert_one_line_error(
        run_afr("bench", "baseline", str(before), str(roots["after"]), "--committed", committed),
        "units without recorded CPU",
        "before",
    )
    (tmp_path / "empty").mkdir()
    assert_one_line_error(
        run_afr("bench", "baseline", str(tmp_path / "empty"), str(roots["after"]), "--committed", committed),
        "no store or export to compare",
    )
    with sqlite3.connect(before / "exp" / "store.sqlite") as conn:
        conn.execute("DELETE FROM units")
    assert_one_line_error(
        run_afr("bench", "baseline", str(before), str(roots["after"]), "--committed", committed), "no unit in common"
    )
