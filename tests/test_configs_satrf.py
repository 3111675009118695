"""The SAT-RF reference configs: they validate and hold the paper's models and grids."""

from __future__ import annotations

import pytest
from conftest import ROOT, run_afr

from afr_cli.config.experiment import load_experiment

ALL_DATASETS = (
    "Diabetes",
    "Friedman1",
    "Friedman2",
    "Friedman3",
    "Regression",
    "Sparse",
    "Wine",
    "Boston",
    "Concrete",
    "Yacht",
    "Airfoil",
)
STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)
HALVES = (0.0, 0.5, 1.0)
CONFIGS = ("satrf_rf", "satrf_ert", "satrf_surfaces")


@pytest.mark.slow
@pytest.mark.parametrize("name", CONFIGS)
def test_config_validates(name):
    proc = run_afr("validate", f"configs/{name}.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "ok" in proc.stdout


@pytest.mark.parametrize("kind", ["rf", "ert"])
def test_satrf_reference_config(kind):
    exp = load_experiment(ROOT / "configs" / f"satrf_{kind}.yaml")
    abrf = load_experiment(ROOT / "configs" / f"abrf_{kind}.yaml")
    assert exp.name == f"satrf_{kind}"
    assert (exp.seed, exp.data_seed, exp.synthetic_noise) == (2023, 1, "none")
    assert (abrf.seed, abrf.data_seed, abrf.synthetic_noise) == (2023, 1, "none")
    assert exp.datasets == ALL_DATASETS
    assert exp.protocol == abrf.protocol  # the same protocol, the papers' 100 repetitions
    assert (exp.protocol.reps, exp.protocol.test_fraction, exp.protocol.inner_folds) == (100, 0.2, 3)
    assert exp.protocol.seeding == "rep-index"
    assert (exp.protocol.selection, exp.protocol.select_by, exp.scale) == ("inner-cv", "r2", "standard")
    assert len(exp.bases) == 1
    base = exp.bases[0]
    assert (base.kind, base.params) == (
        kind,
        {"n_estimators": 100, "min_samples_leaf": 10, "max_features": 1.0, "max_depth": None},
    )
    assert exp.solver == "AUTO"

    models = {m.id: m for m in exp.models}
    assert list(models) == [
        kind,
        "softmax-y",
        "softmax-x",
        "softmax-yx",
        "sat-rf-y",
        "sat-rf-x",
        "sat-rf-yx",
        "sat-rf",
        "eps-abrf",
        "sat-rf-y2",
    ]
    assert models[kind].family == "forest" and models[kind].grid == {}
    for variant in ("y", "x", "yx"):
        soft, full = models[f"softmax-{variant}"], models[f"sat-rf-{variant}"]
        assert soft.family == full.family == f"sat-rf-{variant}"
        assert soft.grid == {"tau": (1.0,), "kappa": (1.0,), "eps": (0.0,), "gamma": (0.0,)}
        assert full.grid == {"tau": (1.0,), "kappa": (1.0,), "eps": STEPS, "gamma": STEPS}
        assert soft.solver == full.solver == "AUTO" and soft.loss == full.loss == "l2"
    assert models["sat-rf"].best_of == ("sat-rf-y", "sat-rf-x", "sat-rf-yx")
    assert models["eps-abrf"].family == "eps-abrf"
    assert models["eps-abrf"].grid == {"tau": (1.0,), "eps": STEPS}
    y2 = models["sat-rf-y2"]
    assert y2.family == "sat-rf-y2"
    assert y2.grid == {
        "tau": (1.0,),
        "kappa1": (1.0,),
        "kappa2": (1.0,),
        "eps": HALVES,
        "gamma1": HALVES,
        "gamma2": HALVES,
    }
    assert "ran no experiment" in (ROOT / "configs" / f"satrf_{kind}.yaml").read_text().lower()


def test_satrf_surfaces_config():
    exp = load_experiment(ROOT / "configs" / "satrf_surfaces.yaml")
    assert exp.datasets == ("Sparse", "Friedman1", "Boston", "Wine")
    assert exp.protocol.reps == 100 and exp.solver == "AUTO"
    assert (exp.seed, exp.data_seed, exp.synthetic_noise, exp.protocol.seeding) == (2023, 1, "none", "rep-index")
    assert [b.kind for b in exp.bases] == ["ert"]
    assert exp.bases[0].params["n_estimators"] == 100 and exp.bases[0].params["min_samples_leaf"] == 10
    models = {m.id: m for m in exp.models}
    assert list(models) == ["sat-rf-yx-tau-eps", "sat-rf-yx-kappa-gamma"]
    assert all(m.family == "sat-rf-yx" for m in models.values())
    assert models["sat-rf-yx-tau-eps"].grid == {"tau": (0.1, 1.0, 10.0), "kappa": (1.0,), "eps": STEPS, "gamma": (0.0,)}
    assert models["sat-rf-yx-kappa-gamma"].grid == {
        "tau": (1.0,),
        "kappa": (0.1, 1.0, 10.0),
        "eps": (0.0,),
        "gamma": STEPS,
    }
