"""``afr bench regenerated``: a regenerated results root against the committed one, store by store."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest
import yaml
from conftest import assert_one_line_error, run_afr

from afr_cli.benchmarks.regenerated import compare_roots
from afr_cli.config.experiment import load_experiment
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.publish.bench_blocks import regenerated_block
from afr_cli.store.bench_records import read_records
from afr_cli.store.export import export_store
from afr_cli.store.reader import load_grid

CONFIG = {
    "name": "regen-test",
    "seed": 3,
    "protocol": {"reps": 2, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 6, "min_samples_leaf": 5}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0.0, 1.0], "tau": [1.0]}},
    ],
}


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    """``old``: the experiment's export only (as committed); ``new``: the same config run again."""
    path = tmp_path_factory.mktemp("cfg") / "regen.yaml"
    path.write_text(yaml.safe_dump(CONFIG))
    made = {}
    for side in ("old", "new"):
        root = tmp_path_factory.mktemp(side)
        exp = load_experiment(path, [], root / "exp")
        run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *_: None)
        made[side] = root
    export_store(made["old"] / "exp")
    (made["old"] / "exp" / "store.sqlite").unlink()
    return made


def test_the_same_config_run_again_moves_nothing_and_its_cpu_is_summed(roots):
    r = compare_roots(roots["old"], roots["new"])
    (s,) = r["stores"]
    assert s["store"] == "exp" and s["units_common"] == s["units_new"] == 2
    assert (s["cells"], s["cells_above"], s["largest"], s["params_changed"]) == (2, 0, 0.0, 0)
    assert s["grid_rows"] == 2 * (1 + 2) and s["grid_moved"] == 0  # 2 reps x (rf's point + eps-abrf's 2)
    with sqlite3.connect(roots["new"] / "exp" / "store.sqlite") as conn:
        cpu = conn.execute("SELECT sum(cpu_seconds) FROM units").fetchone()[0]
    assert s["cpu_units_new"] == 2 and s["cpu_min_new"] == round(cpu / 60, 2) and r["cpu_min_new"] == round(cpu / 60, 1)
    assert r["cells_above"] == 0


def test_a_moved_score_a_moved_grid_point_and_another_selection_are_found(roots, tmp_path):
    new = tmp_path / "new"
    shutil.copytree(roots["new"], new)
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute(
            'UPDATE results SET mae = mae + 3e-9, params = \'{"eps": 0.5, "tau": 1.0}\' '
            "WHERE model = 'eps-abrf' AND rep = 1"
        )
        conn.execute("UPDATE grid SET test_r2 = test_r2 + 0.01 WHERE model = 'eps-abrf' AND rep = 0")
    (s,) = compare_roots(roots["old"], new, threshold=1e-9)["stores"]
    assert s["cells_above"] == 1 and s["largest"] == pytest.approx(3e-9, rel=1e-3)
    assert s["largest_where"] == "mae, Friedman1 / RF@6 / eps-abrf / rep 1"
    assert s["params_changed"] == 1 and s["grid_moved"] == 2
    assert compare_roots(roots["old"], new, threshold=1e-8)["cells_above"] == 0  # below a looser threshold


def test_grid_scores_are_compared_at_the_exports_precision(roots, tmp_path):
    """A change the export's 7 significant digits cannot hold is no move; one they hold is; a value
    within half a unit of the old rounded one that rounds the other way is counted apart."""
    new = tmp_path / "new"
    shutil.copytree(roots["new"], new)
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE grid SET test_rmse = test_rmse * (1 + 1e-12) WHERE rep = 0")
    s = compare_roots(roots["old"], new)["stores"][0]
    assert (s["grid_moved"], s["grid_rounding_flips"]) == (0, 0)
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE grid SET test_rmse = test_rmse * (1 + 1e-5) WHERE rep = 0")
    s = compare_roots(roots["old"], new)["stores"][0]
    assert (s["grid_moved"], s["grid_rounding_flips"]) == (3, 0)  # rep 0: 1 + 2 points
    assert s["grid_largest"] > 0
    old_value = load_grid(roots["old"] / "exp").query("rep == 1 and model == 'rf'")["test_mae"].iloc[0]
    half = 0.5 * 10.0 ** (np.floor(np.log10(abs(old_value))) - 6)
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE grid SET test_mae = ? WHERE rep = 1 AND model = 'rf'", (old_value - half * 1.0002,))
    s = compare_roots(roots["old"], new)["stores"][0]
    assert (s["grid_moved"], s["grid_rounding_flips"]) == (3, 1)  # rounds down a unit, yet within the slack
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE grid SET test_mae = ? WHERE rep = 1 AND model = 'rf'", (old_value - half * 1.01,))
    assert compare_roots(roots["old"], new)["stores"][0]["grid_moved"] == 4  # beyond it: a move


def test_the_command_records_and_the_block_renders_it_and_a_move_exits_1(roots, tmp_path):
    proc = run_afr("bench", "regenerated", str(roots["old"]), str(roots["new"]), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["stores"][0]["cells_above"] == 0
    new = tmp_path / "new"
    shutil.copytree(roots["new"], new)
    with sqlite3.connect(new / "exp" / "store.sqlite") as conn:
        conn.execute("UPDATE results SET r2 = r2 - 0.5 WHERE model = 'rf' AND rep = 0")
    proc = run_afr("bench", "regenerated", str(roots["old"]), str(new), "--record", cwd=tmp_path)
    assert proc.returncode == 1 and "1 cell(s) moved above 1e-09" in proc.stdout
    (record,) = read_records(tmp_path / "results", "regenerated")
    block = regenerated_block([record])
    assert "| exp | 2 of 2 | 2 | 1 | 0.5 (r2, Friedman1 / RF@6 / rf / rep 0) |" in block
    assert "| **all 1 stores** |" in block


def test_a_store_with_nothing_to_compare_with_is_a_one_line_error(roots, tmp_path):
    (tmp_path / "old").mkdir()
    assert_one_line_error(
        run_afr("bench", "regenerated", str(tmp_path / "old"), str(roots["new"])),
        "no store or export to compare",
        "exp",
    )
    assert_one_line_error(
        run_afr("bench", "regenerated", str(roots["old"]), str(tmp_path / "old")), "no results store here"
    )
