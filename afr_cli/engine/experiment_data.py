"""An experiment's datasets as arrays: the papers' registered sets and the user's files and loaders.

Every command that needs an experiment's data (run, validate, plot, dm export, bench) reads it
here, so a file dataset is checked the same way everywhere: the checks of afr_cli.data.checks,
plus enough rows for this experiment's protocol. A loader is the user's code: importing and
calling it, an exit attempt (``sys.exit``, ``os._exit``) is one line naming the loader and the
call, never afr's silent exit; and it must return at least one feature column. A file or loader
dataset of fewer than ``SMALL_ROWS`` rows is named in a one-line warning on stderr: its test
split is a handful of rows, so its scores swing widely.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np

from afr_cli.config.experiment import Experiment, Protocol
from afr_cli.core.plugin_registry import exit_refused, said
from afr_cli.core.quiet_interrupt import doing
from afr_cli.data import load_dataset
from afr_cli.data.checks import check_enough_rows, small_data_warning
from afr_cli.data.files import DatasetSource, LoadedDataset, LoaderDataset, load_source
from afr_cli.engine.split_targets import check_split_targets
from afr_cli.errors import AfrInputError


def test_fractions(protocol: Protocol) -> tuple[float, ...]:
    """Every test fraction the protocol splits with (one per training fraction, or test_fraction)."""
    return tuple(round(1.0 - f, 10) for f in protocol.train_fractions) or (protocol.test_fraction,)


def load_experiment_data(
    exp: Experiment, names: tuple[str, ...] | None = None, registered: bool = True
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, dict]]:
    """(arrays by dataset name, identity by name of each file or loader dataset) for ``names``
    (default: all the experiment's). ``registered=False`` skips the papers' sets (for ``afr
    validate``, which checks the user's data but needs no UCI cache)."""
    data, identity = {}, {}
    for name in names or exp.datasets:
        source = exp.dataset_sources.get(name)
        if source is None:
            if registered:
                with doing(f"loading dataset {name}"):
                    data[name] = load_dataset(name, exp.data_seed, exp.synthetic_noise)
            continue
        loaded = load_user_source(source)
        check_enough_rows(len(loaded.y), test_fractions(exp.protocol), exp.protocol.inner_folds, source.where)
        check_split_targets(exp, name, loaded.y, source.where)
        warning = small_data_warning(len(loaded.y), test_fractions(exp.protocol), f"dataset {name} ({source.where})")
        if warning:
            print(warning, file=sys.stderr)
        data[name] = (loaded.X, loaded.y)
        identity[name] = loaded.identity
    return data, identity


def load_user_source(source: DatasetSource) -> LoadedDataset:
    """A file or loader dataset read and checked; a loader's module is imported and the loader
    called with every exit attempt refused, and its X must have a feature column."""
    if not isinstance(source, LoaderDataset):
        with doing(f"reading dataset {source.name} ({source.where})"):
            return load_source(source)
    module_name = source.module
    with doing(f"loading dataset {source.name} (loader {source.loader})"):
        try:
            with exit_refused():
                importlib.import_module(module_name)  # imported here, so an exit while imported is named so
        except (Exception, SystemExit) as err:
            raise AfrInputError(
                f"{source.where}: cannot import it ({said(err, 'while being imported')}); {source.import_fix()}"
            ) from None
        try:
            with exit_refused():
                loaded = load_source(source)
        except SystemExit as err:
            raise AfrInputError(
                f"{source.where}: {said(err, 'when afr called it')}; a loader must return (X, y)"
            ) from None
    if loaded.X.shape[1] == 0:
        raise AfrInputError(
            f"{source.where}: returned X {loaded.X.shape} with no feature column; expected X (n, m) with m >= 1"
        )
    return loaded


def load_one(exp: Experiment, name: str) -> tuple[np.ndarray, np.ndarray]:
    """X and y of one of the experiment's datasets."""
    return load_experiment_data(exp, (name,))[0][name]
