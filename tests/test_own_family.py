"""A model family of the user's own, named ``module:Class`` in a config, runs on the same
footing as the registered ones (same splits, forests and selection), in parallel workers too."""

from __future__ import annotations

import os

import pandas as pd
import pytest
import yaml

from afr_cli.store import load_results
from conftest import assert_one_line_error, run_afr

FAMILY_MODULE = '''
from afr_cli.models.abrf import EpsABRFFamily, softmax_features
from afr_cli.models.base import EPS


class SharpABRF(EpsABRFFamily):
    """eps-ABRF with the softmax temperature fixed at 0.5: a variant a researcher might add."""

    name = "sharp-abrf"
    summary = "eps-ABRF, tau fixed at 0.5"
    params = (EPS,)

    def features(self, rows, design):
        return softmax_features(rows, 0.5)


class NotAFamily:
    name = "nope"
'''


def _config(tmp_path, family: str) -> str:
    cfg = {"name": "own", "seed": 4, "protocol": {"reps": 2}, "datasets": ["Friedman1"],
           "bases": [{"kind": "rf", "n_estimators": 10, "min_samples_leaf": 5}],
           "models": [{"id": "mine", "family": family, "grid": {"eps": [0.0, 0.5, 1.0]}},
                      {"id": "same", "family": "eps-abrf", "params": {"tau": 0.5}, "grid": {"eps": [0.0, 0.5, 1.0]}}]}
    path = tmp_path / "own.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


@pytest.mark.slow
def test_a_family_of_ones_own_runs_beside_the_registered_ones(tmp_path):
    (tmp_path / "my_families.py").write_text(FAMILY_MODULE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = tmp_path / "store"
    proc = run_afr("run", _config(tmp_path, "my_families:SharpABRF"), "--out", str(out), "--jobs", "2", "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    rows = load_results(out).set_index(["rep", "model"])
    for rep in (0, 1):
        mine, same = rows.loc[(rep, "mine")], rows.loc[(rep, "same")]
        assert (mine.r2, mine.mae, mine.params["eps"]) == (same.r2, same.mae, same.params["eps"])
    assert isinstance(rows.r2.iloc[0], float) and not pd.isna(rows.r2).any()


@pytest.mark.slow
def test_a_family_that_cannot_be_used_is_a_one_line_error(tmp_path):
    (tmp_path / "my_families.py").write_text(FAMILY_MODULE)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    assert_one_line_error(run_afr("validate", _config(tmp_path, "no_such_module:X"), env=env),
                          "models[0].family", "cannot import module 'no_such_module'", "PYTHONPATH")
    assert_one_line_error(run_afr("validate", _config(tmp_path, "my_families:NotAFamily"), env=env),
                          "models[0].family", "not a concrete subclass of afr_cli.models.Family")
    assert_one_line_error(run_afr("validate", _config(tmp_path, "sharp"), env=env),
                          "unknown model family 'sharp'", "module:Class")
