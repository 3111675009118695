"""An experiment's datasets as arrays: the papers' registered sets and the user's files and loaders.

Every command that needs an experiment's data (run, validate, plot, dm export, bench) reads it
here, so a file dataset is checked the same way everywhere: the checks of afr_cli.data.checks,
plus enough rows for this experiment's protocol.
"""

from __future__ import annotations

import numpy as np

from afr_cli.config import Experiment, Protocol
from afr_cli.data import load_dataset
from afr_cli.data.checks import check_enough_rows
from afr_cli.data.files import load_source
from afr_cli.split_targets import check_split_targets


def test_fractions(protocol: Protocol) -> tuple[float, ...]:
    """Every test fraction the protocol splits with (one per training fraction, or test_fraction)."""
    return tuple(round(1.0 - f, 10) for f in protocol.train_fractions) or (protocol.test_fraction,)


def load_experiment_data(exp: Experiment, names: tuple[str, ...] | None = None, registered: bool = True
                         ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, dict]]:
    """(arrays by dataset name, identity by name of each file or loader dataset) for ``names``
    (default: all the experiment's). ``registered=False`` skips the papers' sets (for ``afr
    validate``, which checks the user's data but needs no UCI cache)."""
    data, identity = {}, {}
    for name in names or exp.datasets:
        source = exp.dataset_sources.get(name)
        if source is None:
            if registered:
                data[name] = load_dataset(name, exp.data_seed, exp.synthetic_noise)
            continue
        loaded = load_source(source)
        check_enough_rows(len(loaded.y), test_fractions(exp.protocol), exp.protocol.inner_folds, source.where)
        check_split_targets(exp, name, loaded.y, source.where)
        data[name] = (loaded.X, loaded.y)
        identity[name] = loaded.identity
    return data, identity


def load_one(exp: Experiment, name: str) -> tuple[np.ndarray, np.ndarray]:
    """X and y of one of the experiment's datasets."""
    return load_experiment_data(exp, (name,))[0][name]
