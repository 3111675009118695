"""``afr reproduce --plan`` projects what it would compute from measured seconds per unit, also
when nothing of the experiment is stored under its root: per (dataset, base)
from its own store, else from the committed store of the same experiment, and it says which.
And ``afr reproduce`` prints its wall times as a table, never the README's generated block."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from afr_cli.catalogue.knowledge import paper
from afr_cli.reproduction.pipeline import cpu_minutes, plan_experiment, render_plan
from afr_cli.reproduction.plan_costs import COMMITTED_ROOT, UnitCosts, project, unit_costs
from afr_cli.store import ResultsStore, UnitRecord, open_existing

ROOT = Path(__file__).resolve().parents[1]


def _dm_spec():
    return paper("dm").experiments[0]


def test_a_fresh_root_is_projected_from_the_committed_store_per_dataset_and_base(tmp_path):
    spec = _dm_spec()
    planned = plan_experiment("dm", spec, tmp_path / "fresh", None, None)
    assert planned.stored == 0 and planned.missing
    units = open_existing(COMMITTED_ROOT / spec.store()).frame("units")
    mean = units.groupby(["dataset", "base"])["cpu_seconds"].mean()
    expected = sum(mean[(d, planned.exp.bases[b].id)] for d, b, _, _ in planned.missing)
    assert planned.projected_seconds == pytest.approx(expected, rel=1e-9)
    assert expected > 60  # a real reproduction, not a rounding of nothing
    text = render_plan([planned], tmp_path / "fresh", 2)
    assert f"from CPU of committed results/{spec.store()}" in text and "unknown" not in text
    assert f"projected {cpu_minutes(expected)}" in text and "projected 0.0 CPU-min" not in text


def test_a_plan_with_nothing_missing_says_so_instead_of_projecting_zero():
    spec = _dm_spec()
    planned = plan_experiment("dm", spec, COMMITTED_ROOT, None, None)
    assert not planned.missing
    text = render_plan([planned], COMMITTED_ROOT, 2)
    assert "nothing to compute" in text and "0.0 CPU-min" not in text


def _costs(where: str, cells: dict, overall: float, measured: str = "CPU") -> UnitCosts:
    return UnitCosts(where, measured, cells, overall)


def test_each_unit_is_priced_by_the_first_measurement_holding_its_dataset_and_base():
    own = _costs("its store", {("Diabetes", "RF"): 2.0}, 2.0)
    committed = _costs("committed results/x", {("Diabetes", "RF"): 9.0, ("Airfoil", "RF"): 5.0}, 7.0)
    cells = [("Diabetes", "RF")] * 3 + [("Airfoil", "RF")] * 2 + [("Yacht", "RF")]
    got = project(cells, [own, committed])
    assert got.seconds == pytest.approx(3 * 2.0 + 2 * 5.0 + 2.0)  # Yacht: no one measured it, own mean unit
    assert got.at_mean == 1 and got.sources == (own, committed)
    assert got.label() == "from CPU and CPU of committed results/x; 1 unit of an unmeasured dataset at the mean unit"
    only_committed = project([("Airfoil", "RF")], [committed])
    assert only_committed.label() == "from CPU of committed results/x" and only_committed.seconds == 5.0
    assert project(cells, []) is None


def _row(model: str) -> dict:
    return {
        "model": model,
        "r2": 0.5,
        "mae": 1.0,
        "rmse": 1.2,
        "params": {},
        "selection": "inner-cv",
        "cv_score": 0.4,
        "solver_status": {},
        "seconds": 1.0,
    }


def test_unit_costs_are_cpu_seconds_per_dataset_and_base_else_wall(tmp_path):
    store = ResultsStore(tmp_path / "cpu")
    store.create({"experiment": "demo", "config_hash": "abc"})
    for rep, (dataset, cpu) in enumerate([("A", 2.0), ("A", 4.0), ("B", 10.0)]):
        store.write_unit(UnitRecord(dataset, "RF", rep, rep, 8, 2, 0.5, 60.0, [_row("rf")], [], cpu_seconds=cpu))
    costs = unit_costs(tmp_path / "cpu", "its store")
    assert costs.measured_in == "CPU" and costs.per_cell == {("A", "RF"): 3.0, ("B", "RF"): 10.0}
    assert costs.overall == pytest.approx(16 / 3) and costs.forest == 0.5
    wall = ResultsStore(tmp_path / "wall")
    wall.create({"experiment": "demo", "config_hash": "abc"})
    wall.write_unit(UnitRecord("A", "ERT", 0, 0, 8, 2, 0.1, 6.0, [_row("rf")], []))  # no CPU recorded
    assert unit_costs(tmp_path / "wall", "its store").per_cell == {("A", "ERT"): 6.0}
    assert unit_costs(tmp_path / "wall", "its store").measured_in == "wall"
    assert unit_costs(tmp_path / "none", "its store") is None


TINY = """name: tiny-plan
seed: 1
data_seed: 0
protocol: {reps: 1, test_fraction: 0.2, inner_folds: 2, selection: inner-cv, select_by: r2}
datasets: [Friedman1]
bases:
  - {kind: rf, n_estimators: 5, min_samples_leaf: 10, max_features: 1.0}
models:
  - {id: rf, family: forest}
"""


@pytest.mark.slow
def test_reproduce_prints_its_wall_times_as_a_table_not_the_readme_block(tmp_path):
    from afr_forkserver import Invocation, run_afr_forked

    config = tmp_path / "tiny.yaml"
    config.write_text(TINY, encoding="utf-8")
    args = ("reproduce", str(config), "--root", str(tmp_path / "root"), "--no-site", "-q", "-j", "1")
    (done,) = run_afr_forked([Invocation(args, ROOT, dict(os.environ))], jobs=1)
    assert done.returncode == 0, done.stderr
    assert "<!--" not in done.stdout and "GENERATED" not in done.stdout and "**" not in done.stdout
    table = done.stdout.split("wall time of this invocation", 1)[1].splitlines()
    assert table[1].split() == ["step", "wall", "time"] and table[-1].split()[0] == "total"
    assert any(line.startswith("tables, claims, pages, site (report build)") for line in table)


def test_an_experiment_no_committed_store_runs_is_priced_model_by_model(tmp_path, monkeypatch):
    """Per (dataset, base): the unit's work outside its models, plus each model's committed seconds
    per grid point of its family on that dataset and base times its own grid points."""
    from types import SimpleNamespace

    import afr_cli.reproduction.plan_costs as plan_costs

    committed = tmp_path / "committed"
    store = ResultsStore(committed / "other")
    config = {
        "models": [
            {"id": "a", "family": "eps-abrf", "grid": {"eps": [0.0, 0.5], "tau": [1.0]}},
            {"id": "f", "family": "forest"},
        ]
    }
    store.create({"experiment": "other", "config_hash": "abc", "config": config})
    for rep, scale in enumerate([1.0, 3.0]):  # unit seconds 10 and 30; a: 4 and 12 s over 2 points; f: 1 and 3 s
        rows = [{**_row("a"), "seconds": 4.0 * scale}, {**_row("f"), "seconds": 1.0 * scale}]
        store.write_unit(UnitRecord("D", "RF", rep, rep, 8, 2, 0.1, 10.0 * scale, rows, [], cpu_seconds=1.0))
    monkeypatch.setattr(plan_costs, "COMMITTED_ROOT", committed)
    plan_costs._committed_model_seconds.cache_clear()
    try:
        model = SimpleNamespace
        exp = SimpleNamespace(
            datasets=["D", "E"],
            bases=[SimpleNamespace(id="RF")],
            models=[
                model(family="eps-abrf", grid={"eps": (0.0, 0.5, 1.0)}),
                model(family="forest", grid={}),
                model(family=None, grid={}),
            ],
        )
        costs = plan_costs.family_costs(exp)
        # outside the models: mean of 5 and 15 = 10; eps-abrf: mean of 2 and 6 per point = 4, times 3; forest: 2
        assert costs.per_cell == {("D", "RF"): pytest.approx(10 + 3 * 4 + 2)}  # E: never run, left out
        assert costs.measured_in == "wall" and "eps-abrf, forest" in costs.where
        exp.models.append(model(family="sat-rf-y", grid={}))  # a family no committed store ran
        assert plan_costs.family_costs(exp) is None
    finally:
        plan_costs._committed_model_seconds.cache_clear()


def test_a_config_of_your_own_on_a_fresh_root_is_projected_from_the_committed_families(tmp_path):
    from afr_cli.catalogue.knowledge import ExperimentSpec

    config = tmp_path / "mine.yaml"  # the quickstart under a name no committed (or demo) store has
    config.write_text(
        (ROOT / "configs" / "quickstart.yaml")
        .read_text(encoding="utf-8")
        .replace("name: quickstart", "name: plan-costs-mine"),
        encoding="utf-8",
    )
    planned = plan_experiment("mine", ExperimentSpec(config, 0), tmp_path / "root", None, None)
    assert planned.stored == 0 and planned.missing and planned.projected_seconds > 0
    text = render_plan([planned], tmp_path / "root", 2)
    assert "from wall of the committed stores' forest, eps-abrf, sat-rf-y, em-w-larf" in text
    assert "unknown" not in text and "nothing measured" not in text
