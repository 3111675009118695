"""Protocol axes: training fractions and noise levels are unit keys and store columns."""

from __future__ import annotations

import pytest
import yaml

from afr_cli.config.experiment import load_experiment
from afr_cli.engine.protocol import run_unit
from afr_cli.engine.runner import RunOptions, run_experiment
from afr_cli.errors import AfrInputError
from afr_cli.store import load_results

CONFIG = {
    "name": "axes",
    "seed": 5,
    "datasets": ["Diabetes"],
    "preprocess": {"scale": "none"},
    "protocol": {"reps": 2, "train_fractions": [0.15, 0.5], "noise_eta": [0, 0.5], "select_by": "rmse"},
    "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 1}],
    "models": [
        {"id": "rf", "family": "forest"},
        {"id": "robust", "family": "robust-rf", "params": {"alpha": 0.2}, "grid": {"eps": [0, 0.5], "lam": [0, 1]}},
    ],
}


def _write(tmp_path, config, name="c.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config))
    return path


def test_axes_are_units_and_store_columns(tmp_path):
    exp = load_experiment(_write(tmp_path, CONFIG), results_dir=tmp_path / "store")
    run_experiment(exp, RunOptions(jobs=1, progress=False), echo=lambda *_: None)
    df = load_results(tmp_path / "store")
    assert sorted(df.groupby(["train_fraction", "noise_eta"]).size().items()) == [
        ((0.15, 0.0), 4),
        ((0.15, 0.5), 4),
        ((0.5, 0.0), 4),
        ((0.5, 0.5), 4),
    ]
    rf = df[df.model == "rf"].set_index(["train_fraction", "noise_eta", "rep"]).rmse
    # test-feature noise hurts the plain forest on every split (the same split and forest)
    for f in (0.15, 0.5):
        for rep in (0, 1):
            assert rf[(f, 0.5, rep)] > rf[(f, 0.0, rep)]
    # eps = 0 is in the grid, so best-test can never be worse than the forest; the stored rows
    # are inner-CV selected by RMSE
    assert set(df.selection) == {"inner-cv"}
    # afr status counts repetitions, not units, per (dataset, base)
    from afr_cli.store.status import render_status, store_status

    status = store_status(tmp_path / "store")
    assert (status.units, status.axis_points, int(status.reps.iloc[0, 0])) == (8, 4, 2)
    assert (
        "8 units: 1 dataset x 1 base, 2 repetitions on every (dataset, base) at each of 4 "
        "(train_fraction, noise_eta) points"
    ) in render_status(status)


def test_noise_does_not_change_the_split_or_the_forests(tmp_path):
    exp = load_experiment(_write(tmp_path, CONFIG))
    from afr_cli.data import load_dataset

    X, y = load_dataset("Diabetes", 0)
    clean = run_unit(exp, "Diabetes", exp.bases[0], 0, X, y, 0.15, 0.0)
    noisy = run_unit(exp, "Diabetes", exp.bases[0], 0, X, y, 0.15, 0.5)
    assert (clean.split_seed, clean.n_train, clean.n_test) == (noisy.split_seed, noisy.n_train, noisy.n_test)
    assert clean.n_train == round(0.15 * len(y)) and clean.n_train + clean.n_test == len(y)
    assert (clean.axes["train_fraction"], clean.axes["noise_eta"], noisy.axes["noise_eta"]) == (0.15, 0.0, 0.5)
    other = run_unit(exp, "Diabetes", exp.bases[0], 0, X, y, 0.5, 0.0)
    assert other.split_seed != clean.split_seed


def test_noise_on_train_leaves_test_features_clean(tmp_path):
    config = {**CONFIG, "protocol": {**CONFIG["protocol"], "noise_on": "train"}}
    exp = load_experiment(_write(tmp_path, config))
    from afr_cli.data import load_dataset

    X, y = load_dataset("Diabetes", 0)
    clean = run_unit(exp, "Diabetes", exp.bases[0], 1, X, y, 0.5, 0.0)
    noisy = run_unit(exp, "Diabetes", exp.bases[0], 1, X, y, 0.5, 2.0)
    assert clean.results[0]["rmse"] != noisy.results[0]["rmse"]  # noisy targets change the forest


def test_default_protocol_keeps_its_hash_and_axes(tmp_path):
    base = {k: v for k, v in CONFIG.items() if k != "protocol"}
    exp = load_experiment(_write(tmp_path, {**base, "protocol": {"reps": 3}}))
    assert exp.protocol.axes() == [(0.8, 0.0)]
    same = load_experiment(_write(tmp_path, {**base, "protocol": {"reps": 7}}, "d.yaml"))
    assert exp.unit_hash() == same.unit_hash()


@pytest.mark.parametrize(
    "protocol,needle",
    [
        ({"train_fractions": [0.15, 1.0]}, "train_fractions[1]"),
        ({"train_fractions": [0.5], "test_fraction": 0.2}, "not both"),
        ({"noise_eta": [-1]}, "noise_eta[0]"),
        ({"noise_on": "features"}, "noise_on"),
        ({"select_by": "mse"}, "select_by"),
    ],
)
def test_bad_axes_are_input_errors(tmp_path, protocol, needle):
    with pytest.raises(AfrInputError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        load_experiment(_write(tmp_path, {**CONFIG, "protocol": protocol}))
