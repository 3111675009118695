"""A mistyped name gets "did you mean": datasets (in the config and in --datasets), families,
ensembles, models named by best_of; --datasets names the option and the config's own datasets;
a family that is a paper's best_of model says how to write it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from afr_cli.config.dataset_option import datasets_override
from afr_cli.config.experiment import load_experiment
from afr_cli.config.family_names import paper_best_of
from afr_cli.core.names import closest, hint
from afr_cli.data.registry import canonical_name
from afr_cli.ensembles import get_ensemble
from afr_cli.errors import AfrInputError

CONFIG = {
    "name": "names",
    "seed": 1,
    "protocol": {"reps": 1, "inner_folds": 2},
    "datasets": ["Friedman1"],
    "bases": [{"kind": "rf", "n_estimators": 3}],
    "models": [{"id": "rf", "family": "forest"}],
}


def _config(tmp: Path, **changes) -> Path:
    path = tmp / "c.yaml"
    path.write_text(yaml.safe_dump({**CONFIG, **changes}, sort_keys=False))
    return path


def test_case_first_then_the_closest_spelling():
    assert closest("Swiss", ["msleep", "swiss", "Swiss2"]) == "swiss"
    assert closest("eps-abfr", ["forest", "eps-abrf", "eps-arf"]) == "eps-abrf"
    assert closest("zzz", ["forest", "eps-abrf"]) is None
    assert hint("forest", ["forest"]) == ""  # the name itself is no suggestion


def test_datasets_option_names_the_option_and_the_configs_own_datasets(tmp_path):
    (tmp_path / "s.csv").write_text("a,y\n1,2\n")
    entries = [{"name": "swiss", "file": "s.csv", "target": "y"}, "Diabetes"]
    config = _config(tmp_path, datasets=entries)
    with pytest.raises(AfrInputError) as err:
        datasets_override("Swiss", config)
    assert str(err.value) == (
        "--datasets: unknown dataset 'Swiss'; did you mean 'swiss'? the config's datasets: swiss, Diabetes "
        "(or a registered name, see `afr datasets list`)"
    )
    assert datasets_override("swiss, yacht", config) == [entries[0], "yacht"]  # a registered name stays
    with pytest.raises(AfrInputError, match="--datasets: 'sw\\\\x00iss' is not allowed"):
        datasets_override("sw\x00iss", config)


def test_config_dataset_family_ensemble_and_best_of_names_suggest(tmp_path):
    for changes, needle in (
        ({"datasets": ["Diabets"]}, "datasets[0]: unknown dataset 'Diabets'; did you mean 'Diabetes'?"),
        ({"models": [{"id": "rf", "family": "Forest"}]}, "unknown model family 'Forest'; did you mean 'forest'?"),
        ({"bases": [{"kind": "ertt", "n_estimators": 3}]}, "unknown ensemble 'ertt'; did you mean 'ert'?"),
        (
            {
                "models": [
                    {"id": "rf", "family": "forest"},
                    {"id": "b", "family": "forest"},
                    {"id": "c", "best_of": ["rf", "bb"]},
                ]
            },
            "best_of[1]: 'bb' is not a model defined above; did you mean 'b'?",
        ),
    ):
        with pytest.raises(AfrInputError) as err:
            load_experiment(_config(tmp_path, **changes))
        assert needle in str(err.value), str(err.value)
    with pytest.raises(AfrInputError, match="did you mean 'Friedman1'"):
        canonical_name("Friedmann1")
    with pytest.raises(AfrInputError, match="did you mean 'rf'"):
        get_ensemble("RF ")


def test_a_papers_best_of_model_given_as_a_family_says_how_to_write_it(tmp_path):
    assert paper_best_of()["sat-rf"] == ("sat-rf-y", "sat-rf-x", "sat-rf-yx")
    with pytest.raises(AfrInputError) as err:
        load_experiment(_config(tmp_path, models=[{"id": "sat", "family": "sat-rf"}]))
    message = str(err.value)
    assert "'sat-rf' is a best_of model of the papers, not a family" in message
    assert "{id: sat-rf, best_of: [sat-rf-y, sat-rf-x, sat-rf-yx]}" in message
    assert "sat-rf (best_of sat-rf-y/sat-rf-x/sat-rf-yx)" in message and "\n" not in message


def test_compare_model_names_suggest(tmp_path):
    """`afr table --compare` with a mistyped model: in the results given, and among the stores of a root."""
    import pandas as pd

    from afr_cli.store.discover import stores_for_compare
    from afr_cli.tables.compare import compare_models

    rows = pd.DataFrame(
        [
            {"dataset": d, "base": "RF", "model": m, "rep": r, "r2": 0.5 + 0.01 * r, "test_fraction": 0.2}
            for d in ("a", "b")
            for m in ("rf", "softmax")
            for r in range(3)
        ]
    )
    with pytest.raises(AfrInputError, match=r"unknown model 'Softmax'; did you mean 'softmax'\? models in the"):
        compare_models(rows, "rf", "Softmax", "r2")
    with pytest.raises(AfrInputError, match=r"holding sat-rff: none \(did you mean 'sat-rf'\?\)"):
        stores_for_compare("eps-abrf", "sat-rff", Path(__file__).resolve().parents[1] / "results")
