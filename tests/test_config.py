"""Config validation: every bad input is one line naming file, key and what is allowed, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import ROOT, assert_one_line_error, run_afr

from afr_cli.config.experiment import load_experiment
from afr_cli.errors import AfrInputError

GOOD = {
    "name": "t",
    "seed": 1,
    "protocol": {"reps": 2, "inner_folds": 3},
    "datasets": ["Diabetes", "friedman 1"],
    "bases": [{"kind": "rf", "n_estimators": 10}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "eps-abrf", "family": "eps-abrf", "grid": {"eps": [0, 0.5], "tau": [1, 10]}},
    ],
}


def _write(tmp_path: Path, cfg: dict | str) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg))
    return path


def _with(**changes) -> dict:
    cfg = yaml.safe_load(yaml.safe_dump(GOOD))
    for dotted, value in changes.items():
        node = cfg
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node[int(k)] if k.isdigit() else node[k]
        last = keys[-1]
        if value is KeyError:
            del node[last]
        elif last.isdigit():
            node[int(last)] = value
        else:
            node[last] = value
    return cfg


def test_good_config_loads_with_canonical_names_and_grid_order(tmp_path):
    exp = load_experiment(_write(tmp_path, GOOD))
    assert exp.datasets == ("Diabetes", "Friedman1")
    assert exp.bases[0].id == "RF@10"
    abrf = exp.models[1]
    assert list(abrf.grid) == ["tau", "eps"]  # design parameters vary slowest
    assert len(abrf.grid_points()) == 4
    # a parameter recorded only where a config sets it (reading) stays out of the grid at its default,
    # so the stored hyperparameters of the text reading equal those stored before the parameter existed
    assert all("reading" not in point for point in abrf.grid_points())


@pytest.mark.parametrize(
    "cfg, needles",
    [
        (_with(datasets=["Diabetes", "Atlantis"]), ["datasets[1]", "Atlantis", "Friedman1"]),
        (_with(models__1__family="nope"), ["models[1].family", "nope", "eps-abrf"]),
        (_with(models__1__grid={"eps": [0, 1.5]}), ["models[1].grid.eps[1]", "[0, 1]"]),
        (_with(models__1__grid={"tau": [0]}), ["models[1].grid.tau[0]", "> 0"]),
        (_with(models__1__grid={"tau": []}), ["models[1].grid.tau", "non-empty list"]),
        (_with(models__1__grid={"kappa": [1]}), ["models[1].grid.kappa", "unknown hyperparameter"]),
        (_with(protocol={"reps": 2, "folds": 3}), ["protocol.folds", "unknown key", "inner_folds"]),
        (_with(protocol={"selection": "oracle"}), ["protocol.selection", "best-test"]),
        (_with(bases=[{"kind": "gbm"}]), ["bases[0].kind", "rf, ert, dt, gbm-dt, gbm-ert", "module:Class"]),
        (
            _with(bases=[{"kind": "rf", "learning_rate": 0.1}]),
            [
                "bases[0].learning_rate",
                "unknown key",
                "allowed for kind rf",
                "n_estimators, min_samples_leaf, max_features",
            ],
        ),
        (_with(bases=[{"kind": "gbm-dt", "max_depth": 0}]), ["bases[0].max_depth", "integer >= 1 or null"]),
        (_with(bases=[{"kind": "rf", "max_features": 1.5}]), ["bases[0].max_features", "sqrt or log2"]),
        (_with(bases=[{"kind": "gbm-ert"}]), ["models[1].family", "eps-abrf cannot run on base GBM-ERT", "average"]),
        (_with(protocol={"seeding": "random"}), ["protocol.seeding", "derived, rep-index"]),
        (_with(synthetic_noise="loud"), ["synthetic_noise", "documented, none"]),
        (_with(typo_key=1), ["typo_key", "unknown key"]),
        (_with(models=[]), ["models", "non-empty"]),
        (_with(datasets=KeyError), ["datasets", "missing"]),
    ],
)
def test_bad_configs_are_one_line_errors(tmp_path, cfg, needles):
    path = _write(tmp_path, cfg)
    with pytest.raises(AfrInputError) as err:
        load_experiment(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(str(path))
    for needle in needles:
        assert needle in message


def test_bases_take_their_ensembles_parameters_and_ids(tmp_path):
    cfg = _with(
        bases=[
            {"kind": "gbm-dt", "learning_rate": 0.1, "max_depth": None},
            {"kind": "dt"},
            {"kind": "gbm-ert", "n_estimators": 50, "id": "mine"},
            {"kind": "rf", "max_features": 1},
        ],
        models=[{"id": "forest", "family": "forest"}],
    )
    exp = load_experiment(_write(tmp_path, cfg))
    assert [b.id for b in exp.bases] == ["GBM-DT", "DT", "mine", "RF"]
    assert exp.bases[0].params == {
        "n_estimators": 200,
        "learning_rate": 0.1,
        "max_depth": None,
        "min_samples_leaf": 10,
        "max_features": 1.0,
    }
    assert exp.bases[3].params["max_features"] == 1 and isinstance(exp.bases[3].params["max_features"], int)
    exp = load_experiment(_write(tmp_path, cfg), ["bases.0.max_depth=3"])
    assert exp.bases[0].params["max_depth"] == 3
    with pytest.raises(AfrInputError, match="bases.1.max_depthh"):
        load_experiment(_write(tmp_path, cfg), ["bases.1.max_depthh=3"])


def test_set_overrides_apply_and_reject_unknown_keys(tmp_path):
    path = _write(tmp_path, GOOD)
    exp = load_experiment(path, ["protocol.reps=7", "models.1.grid.eps=[0.25]"])
    assert exp.protocol.reps == 7 and exp.models[1].grid["eps"] == (0.25,)
    with pytest.raises(AfrInputError, match="protocol.repz"):
        load_experiment(path, ["protocol.repz=3"])
    with pytest.raises(AfrInputError, match="KEY=VALUE"):
        load_experiment(path, ["protocol.reps"])


@pytest.mark.slow
def test_validate_cli_exit_codes(tmp_path):
    ok = run_afr("validate", str(_write(tmp_path, GOOD)))
    assert ok.returncode == 0 and "ok" in ok.stdout
    bad = _write(tmp_path, _with(models__1__grid={"eps": [-0.1]}))
    assert_one_line_error(run_afr("validate", str(bad)), str(bad), "eps", "[0, 1]")
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nmodels: [unclosed\n")
    assert_one_line_error(run_afr("validate", str(broken)), str(broken), "malformed YAML")
    assert_one_line_error(run_afr("validate", str(tmp_path / "missing.yaml")), "missing.yaml", "no such config file")
    assert_one_line_error(run_afr("validate", str(_write(tmp_path, GOOD)), "--set", "nope=1"), "nope", "unknown key")


def test_all_shipped_configs_validate():
    for path in sorted((ROOT / "configs").glob("*.yaml")):
        load_experiment(path)


@pytest.mark.slow
def test_models_command_lists_families():
    proc = run_afr("models")
    assert proc.returncode == 0
    assert "eps-abrf" in proc.stdout and "forest" in proc.stdout and "tau" in proc.stdout


def test_a_shipped_config_keeps_its_store_and_finds_it_from_elsewhere(monkeypatch, tmp_path):
    """From the checkout's root every shipped config's store is results/<name>, as it always was;
    started from another directory, a config whose store exists in the checkout resumes that store
    (the search walks up from the config's folder to the checkout's root)."""
    monkeypatch.chdir(ROOT)
    for config in sorted((ROOT / "configs").glob("*.yaml")):
        exp = load_experiment(Path("configs") / config.name)
        assert exp.results == Path("results") / exp.name, config
    monkeypatch.chdir(tmp_path)
    exp = load_experiment(ROOT / "configs" / "satrf_rf.yaml")
    assert exp.results.resolve() == (ROOT / "results" / "satrf_rf").resolve()


def test_a_base_names_its_forest_and_the_engine_fits_it(tmp_path, small_data):
    """A config object holds no fitting: the engine's fit_forest fits the base with its
    own parameters and seed, the same forest the ensemble gives when asked directly."""
    import numpy as np

    from afr_cli.config.experiment import Base
    from afr_cli.engine.forest_fit import fit_forest

    assert not hasattr(Base, "fit")
    Xtr, ytr, Xte, _ = small_data
    base = load_experiment(_write(tmp_path, GOOD), ["bases.0.n_estimators=4"]).bases[0]
    assert base.params["n_estimators"] == 4
    forest = fit_forest(base, Xtr, ytr, 7)
    direct = base.ensemble.fit(Xtr, ytr, 7, n_estimators=4, min_samples_leaf=10)
    assert forest.n_trees == 4 and np.array_equal(forest.predict(Xte), direct.predict(Xte))
    assert not np.array_equal(forest.predict(Xte), fit_forest(base, Xtr, ytr, 8).predict(Xte))
