"""A model family of the user's own and a config running it, shared by the tests of the two ways a
config names such a family: ``module:Class`` on PYTHONPATH (test_own_family) and ``plugins:``, a
file beside the config (test_plugins_in_config).

``sharp-abrf`` is eps-ABRF with the softmax temperature fixed at 0.5, written against the
documented family API (``afr_cli.family_api``); the config runs it beside the registered eps-abrf
at tau 0.5 on the same splits and forests, so the two models' rows must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from afr_cli.store import load_results

SHARP_FAMILY_MODULE = '''
from afr_cli.family_api import EPS, EpsABRFFamily, softmax_features


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


def write_sharp_config(path: Path, family: str, plugins: object = None) -> str:
    """Write a two-rep config with model ``mine`` of ``family`` and ``same`` (eps-abrf at tau 0.5,
    the same eps grid) to ``path`` (with ``plugins:`` when given); returns the path as text."""
    cfg = {
        "name": "own",
        "seed": 4,
        "protocol": {"reps": 2},
        "datasets": ["Friedman1"],
        "bases": [{"kind": "rf", "n_estimators": 8, "min_samples_leaf": 5}],
        "models": [
            {"id": "mine", "family": family, "grid": {"eps": [0.0, 0.5, 1.0]}},
            {"id": "same", "family": "eps-abrf", "params": {"tau": 0.5}, "grid": {"eps": [0.0, 0.5, 1.0]}},
        ],
    }
    if plugins is not None:
        cfg = {"plugins": plugins, **cfg}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return str(path)


def assert_mine_equals_same(out: Path) -> None:
    """The run stored in ``out`` scored ``mine`` exactly as ``same`` in both reps (same eps chosen)."""
    rows = load_results(out).set_index(["rep", "model"])
    for rep in (0, 1):
        mine, same = rows.loc[(rep, "mine")], rows.loc[(rep, "same")]
        assert (mine.r2, mine.mae, mine.params["eps"]) == (same.r2, same.mae, same.params["eps"])
    assert isinstance(rows.r2.iloc[0], float) and not pd.isna(rows.r2).any()
