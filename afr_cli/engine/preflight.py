"""What a run would trip on, found before it starts: ``afr validate`` and ``afr run`` check an
experiment's protocol against the rows of each dataset, so a config that passes does not die in
its first unit with a traceback, nor hang on a size no machine can compute.

The config's own checks (afr_cli.config.experiment) look at one value at a time; these look at values
together: the split a training fraction leaves on a dataset of n rows, the inner folds of that
split, the leaf size of each base on the smallest set a forest is fitted on, and the number of
units and grid points the run would enumerate.
"""

from __future__ import annotations

import math

from afr_cli.config.experiment import Experiment
from afr_cli.core.path_rules import directory_error
from afr_cli.errors import AfrInputError

MAX_UNITS = 10_000_000  # datasets x bases x protocol points x repetitions
MAX_GRID_POINTS = 1_000_000  # per model: the product of its grid's lengths


def split_sizes(n: int, test_fraction: float, by_index: bool) -> tuple[int, int]:
    """(training rows, test rows) of one repetition's split of ``n`` rows, as afr_cli.engine.protocol
    makes it: ``derived`` seeding rounds the test share (at least one row); ``rep-index`` uses
    scikit-learn's train_test_split, which rounds the test share up."""
    n_test = math.ceil(test_fraction * n) if by_index else max(1, int(round(test_fraction * n)))
    return n - n_test, n_test


def dataset_rows(name: str) -> int | None:
    """The rows the registry declares for a dataset (None when it declares none)."""
    from afr_cli.data import DATASETS

    spec = DATASETS.get(name)
    rows = getattr(spec, "n", None)
    return rows if isinstance(rows, int) else None


def check_runnable(exp: Experiment, rows: dict[str, int] | None = None) -> None:
    """Raise a one-line AfrInputError naming the config and key when the run would fail or hang;
    ``rows`` (dataset -> rows of the loaded data) overrides what the registry declares."""
    src = exp.source
    problem = directory_error("results", str(exp.results))
    if problem:
        raise AfrInputError(f"{src}: {problem}")
    for key, values in (("train_fractions", exp.protocol.train_fractions), ("noise_eta", exp.protocol.noise_etas)):
        for j, value in enumerate(values):
            if not math.isfinite(value):
                raise AfrInputError(f"{src}: protocol.{key}[{j}]: {value!r} is not allowed; must be a finite number")
    axes = exp.protocol.axes()
    units = len(exp.datasets) * len(exp.bases) * len(axes) * exp.protocol.reps
    if units > MAX_UNITS:
        raise AfrInputError(
            f"{src}: protocol.reps: {exp.protocol.reps} repetitions make {units} units; "
            f"allowed: at most {MAX_UNITS} units in one experiment"
        )
    for i, model in enumerate(exp.models):
        points = math.prod(len(v) for v in model.grid.values())
        if points > MAX_GRID_POINTS:
            raise AfrInputError(f"{src}: models[{i}].grid: {points} grid points; allowed: at most {MAX_GRID_POINTS}")
    inner = _needs_inner_cv(exp)
    for dataset in exp.datasets:
        n = (rows or {}).get(dataset, dataset_rows(dataset))
        if n is None:
            continue
        for fraction, _ in axes:
            _check_split(exp, dataset, n, fraction, inner)


def _needs_inner_cv(exp: Experiment) -> bool:
    """afr_cli.engine.protocol.needs_inner_cv, without building every grid point."""
    if exp.protocol.selection == "best-test":
        return False
    return any(m.best_of or math.prod(len(v) for v in m.grid.values()) > 1 for m in exp.models)


def _check_split(exp: Experiment, dataset: str, n: int, fraction: float, inner: bool) -> None:
    """One dataset at one training fraction: enough test rows to score, enough training rows for
    the inner folds, and every base's leaf size within the smallest set a forest is fitted on."""
    src = exp.source
    key = "protocol.train_fractions" if exp.protocol.train_fractions else "protocol.test_fraction"
    axis = bool(exp.protocol.train_fractions)
    shown = f"train fraction {fraction:g}" if axis else f"test_fraction {exp.protocol.test_fraction:g}"
    n_train, n_test = split_sizes(n, round(1.0 - fraction, 12), exp.protocol.seeding == "rep-index")
    if n_test < 2 or n_train < 2:
        raise AfrInputError(
            f"{src}: {key}: {shown} leaves {n_train} training and {n_test} test rows of "
            f"{dataset}'s {n}; each needs at least 2 (R^2 is undefined on fewer)"
        )
    smallest = n_train
    if inner:
        folds = exp.protocol.inner_folds
        if n_train // folds < 2:
            raise AfrInputError(
                f"{src}: protocol.inner_folds: {folds} folds of {dataset}'s {n_train} training rows "
                f"({shown}) leave fewer than 2 rows in a fold; allowed: at most {n_train // 2}"
            )
        smallest = n_train - math.ceil(n_train / folds)
    for b, base in enumerate(exp.bases):
        leaf = base.params.get("min_samples_leaf")
        if isinstance(leaf, int) and leaf > smallest:
            raise AfrInputError(
                f"{src}: bases[{b}].min_samples_leaf: {leaf} is more than the {smallest} rows a "
                f"forest of {dataset} is fitted on ({shown}{', inner folds' if inner else ''}); "
                f"allowed: at most {smallest}"
            )
